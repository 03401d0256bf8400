"""Skill files with bounds, and `quadsim optimize --skill` tuning a jump through them."""

from __future__ import annotations

import csv
import re
import tomllib
from pathlib import Path

import pytest

from quadsim.optimize.errors import OptimizeError
from quadsim.optimize.skill_eval import LANDING_FLOOR, NO_TROT, WEIGHTS, score_jump
from quadsim.scripts.cli import main
from quadsim.skills.errors import SkillError
from quadsim.skills.jump import JUMPS, load_jump
from quadsim.skills.posture import Skill, skill_names
from quadsim.skills.skillfile import SkillFile, skill_file


@pytest.mark.parametrize("name", JUMPS)
def test_a_jump_file_round_trips_through_the_unit_box(name: str, tmp_path: Path) -> None:
    skill = SkillFile.load(name)
    assert len(skill.free_names()) >= 20 and all(n.startswith("leap.") for n in skill.bounds)
    x = skill.to_unit()
    assert all(0.0 <= v <= 1.0 for v in x)
    assert skill.from_unit(x).doc == skill.doc
    moved = skill.from_unit([1.0] * len(x))  # every free value at its upper bound
    path = tmp_path / f"{name}.toml"
    moved.save(path, provenance={"source": "test"})
    again = SkillFile.load(path)
    assert again.bounds == skill.bounds and again.doc == moved.doc
    assert again.provenance == {"source": "test"}
    assert tomllib.loads(path.read_text())["provenance"] == {"source": "test"}
    leap, trot = load_jump(path)
    for free, (_, high) in skill.bounds.items():
        *where, last = free.split(".")[1:]
        value = getattr(leap, where[0])[last] if where else getattr(leap, last)
        assert value == pytest.approx(high), free
    assert name not in skill_names()  # a jump is no posture
    # the trot its leap was tuned with, found from a tuned copy elsewhere too
    assert trot.values == load_jump(name)[1].values
    assert load_jump(name)[1].provenance["source"] == "preset"  # the hand-tuned trot


def test_bad_skill_files_are_refused_naming_the_problem(tmp_path: Path) -> None:
    text = skill_file("jump-off").read_text()
    cases = {
        "outside": (re.sub(r"^fore_up = \S+", "fore_up = 9.0", text, flags=re.M), "outside"),
        "unknown": (text.replace('"leap.fore_up"', '"leap.fore_upp"'), "must name a number"),
        "order": (text.replace("[0.0, 2.5]", "[2.5, 0.0]"), "low < high"),
        "missing": (re.sub(r"^settle_s = .*\n", "", text, flags=re.M), "lacks settle_s"),
    }
    for label, (body, words) in cases.items():
        path = tmp_path / f"{label}.toml"
        if label == "missing":
            body = re.sub(r'^"leap.settle_s" = .*\n', "", body, flags=re.M)
        path.write_text(body)
        with pytest.raises(SkillError, match=words):
            load_jump(path)
    with pytest.raises(SkillError, match="unknown skill 'leap'; skills: .*jump-off"):
        SkillFile.load("leap")
    with pytest.raises(SkillError, match="does not exist"):
        SkillFile.load(tmp_path / "nothing.toml")
    with pytest.raises(SkillError, match="a jump's skill file names skill"):
        load_jump("sit")
    assert Skill.load("sit").hold_s > 0  # the postures still load as before


def test_a_jump_is_scored_by_outcome_landing_and_time() -> None:
    def summary(**jump: object) -> dict:
        base = {"launch_s": 3.0, "trot_resumed_s": 4.2, "ok": True, "pelvis_min": 0.7}
        return {
            "fell": False,
            "fall_time_s": None,
            "duration_s": 9.0,
            "skills": [base | {"feet_height_error_m": [0.0] * 4} | jump],
        }

    clean = score_jump(summary())
    assert clean.total == pytest.approx(WEIGHTS["f_time"] * 1.2) and not clean.fell
    deep = score_jump(summary(pelvis_min=LANDING_FLOOR - 0.1))
    assert deep.total == pytest.approx(clean.total + WEIGHTS["f_landing"] * 0.1)
    missed = score_jump(summary(ok=False, feet_height_error_m=[0.0, None, 0.02, -0.5]))
    assert missed.f_feet == pytest.approx(0.22) and missed.total > WEIGHTS["f_outcome"]
    assert score_jump(summary(trot_resumed_s=None)).total == NO_TROT
    early = score_jump(summary() | {"fell": True, "fall_time_s": 3.5})
    late = score_jump(summary() | {"fell": True, "fall_time_s": 6.0})
    assert early.fell and NO_TROT < late.total < early.total


def test_optimize_skill_tunes_a_jump_and_writes_a_playable_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    argv = [
        "optimize",
        "--skill",
        "jump-onto",
        "--evals",
        "2",
        "--popsize",
        "2",
        "--seeds-per-candidate",
        "1",
        "--executor",
        "serial",
        "--quiet",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    with open(out / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1
    assert {"f_outcome", "f_landing", "f_feet", "f_time", "n_fell"} <= set(rows[0])
    best = SkillFile.load(out / "best_jump-onto.toml")
    command = tomllib.loads((out / "best_jump-onto.toml").read_text())["provenance"]["command"]
    assert command.startswith("quadsim optimize --skill jump-onto") and "--gait" not in command
    assert best.bounds == SkillFile.load("jump-onto").bounds
    assert (out / "mean_jump-onto.toml").is_file()
    capsys.readouterr()
    # the tuned file plays as the jump: quadsim skill FILE
    assert main(["skill", str(out / "best_jump-onto.toml"), "--json"]) == 0
    assert '"name": "jump-onto"' in capsys.readouterr().out


def test_optimize_skill_refuses_what_it_cannot_tune(tmp_path: Path, capsys) -> None:
    from quadsim.optimize.skill_eval import tunable_skill

    with pytest.raises(OptimizeError, match="tunes the jumps .* sit is a keyframed posture"):
        tunable_skill("sit")
    for extra, words in (
        (["--skill", "jump-off", "--reference", "x.txt"], "--reference: for gaits"),
        (["--skill", "jump-off", "--gait", "trot"], "needs --gait or --skill"),
        (["--skill", "fly"], "unknown skill 'fly'"),
    ):
        assert main(["optimize", *extra, "--out", str(tmp_path / "r"), "--evals", "2"]) == 2
        assert words in capsys.readouterr().err, extra
