"""Footfall targets from the literature (gaits/targets/*.toml): the files, their loader,
`quadsim optimize --targets` and `quadsim compare --targets`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from quadsim.gaits.footfalls import PATTERN_OF_GAIT, footfall_pattern
from quadsim.gaits.params import GaitParams
from quadsim.models import LEGS
from quadsim.optimize.errors import TargetsError
from quadsim.optimize.sim_eval import dog_leg_length
from quadsim.optimize.targets import TARGETS_DIR, load_targets, target_file, target_names
from quadsim.scripts.cli import main

GAITS_WITHOUT_CLIPS = ("pace", "canter", "transverse-gallop", "rotary-gallop")
G = 9.81  # [m/s^2]
TROT_CLIP = Path(__file__).resolve().parents[2] / "shared/data/dog_mocap/dog_trot_joint_pos.txt"


def _stance(targets, n: int = 1000) -> np.ndarray:
    """(n, 4) whether each foot is down at n phases of the stride, from its touchdown
    phase and duty factor."""
    phase = np.arange(n)[:, None] / n
    since_touchdown = (phase - np.asarray(targets.phase_offset)) % 1.0
    return since_touchdown < np.asarray(targets.duty_factor)


def _suspensions(down: np.ndarray) -> int:
    """How many separate spans of the (cyclic) stride have no foot down."""
    airborne = ~down.any(axis=1)
    return int(np.sum(airborne & ~np.roll(airborne, 1)))


def test_the_gaits_without_clips_have_shipped_targets() -> None:
    assert set(GAITS_WITHOUT_CLIPS) <= set(target_names())
    assert all((TARGETS_DIR / f"{name}.toml").is_file() for name in target_names())


@pytest.mark.parametrize("name", target_names())
def test_a_target_file_is_consistent_and_cites_its_sources(name: str) -> None:
    chosen = target_file(name)
    targets = chosen.footfalls
    assert chosen.gait == name and load_targets(name) == targets
    assert all(0 < d < 1 for d in targets.duty_factor)
    assert all(0 <= p < 1 for p in targets.phase_offset)
    assert targets.phase_offset[LEGS.index("LH")] == 0
    low, high = chosen.period_range_s
    assert low <= targets.period_s <= high
    # the footfall order is the named gait's, as a run of it is classified
    offsets = dict(zip(LEGS, targets.phase_offset, strict=True))
    duty = dict(zip(LEGS, targets.duty_factor, strict=True))
    assert footfall_pattern(offsets, duty=duty) == PATTERN_OF_GAIT[name]
    # the speed is in the preset's band, and the Froude number is that of this dog's leg
    band_low, band_high = GaitParams.load(name).speed_band_mps
    assert band_low <= chosen.speed_mps <= band_high
    source = chosen.source
    assert source["leg_length_m"] == pytest.approx(dog_leg_length(), abs=0.001)
    froude = chosen.speed_mps**2 / (G * source["leg_length_m"])
    assert source["froude_number"] == pytest.approx(froude, abs=0.01)
    assert source["citations"] and source["conversion"] and source["estimated"]


@pytest.mark.parametrize("name", ["canter", "transverse-gallop", "rotary-gallop"])
def test_asymmetrical_targets_have_one_suspension_and_a_longer_lead_forelimb(name: str) -> None:
    targets = load_targets(name)
    down = _stance(targets)
    assert _suspensions(down) == 1
    # the lead forelimb is the last foot to leave the ground before the suspension; it
    # stands longer than the other forelimb (Walter & Carrier 2007, Fletcher & Datt 2012)
    airborne = ~down.any(axis=1)
    takeoff = int(np.flatnonzero(airborne & ~np.roll(airborne, 1))[0])
    lead = int(np.flatnonzero(down[takeoff - 1])[0])
    fore = [LEGS.index("LF"), LEGS.index("RF")]
    assert lead in fore
    trailing = fore[1 - fore.index(lead)]
    assert targets.duty_factor[lead] > targets.duty_factor[trailing]


def test_the_loader_names_each_problem(tmp_path: Path) -> None:
    with pytest.raises(TargetsError) as err:
        target_file("amble")
    message = str(err.value)
    assert "\n" not in message and "'amble'" in message
    assert "valid: " + ", ".join(target_names()) in message
    with pytest.raises(TargetsError, match="no targets file"):
        target_file(tmp_path / "missing.toml")
    text = (TARGETS_DIR / "canter.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(
        text.replace("LF = 0.37", "LF = 1.2")
        .replace("LH = 0.0", "LH = 0.1")
        .replace("period_s = 0.50", "period_s = 0.9")
    )
    with pytest.raises(TargetsError) as err:
        target_file(bad)
    for problem in ("duty_factor.LF 1.2 not in (0, 1)", "phase_offset.LH must be 0", "0.9"):
        assert problem in str(err.value)
    three_feet = tmp_path / "three.toml"
    three_feet.write_text(text.replace(", RH = 0.40 }", " }"))
    with pytest.raises(TargetsError, match="duty_factor needs exactly the feet LF, RF, LH, RH"):
        target_file(three_feet)
    broken = tmp_path / "broken.toml"
    broken.write_text("period_s = [")
    with pytest.raises(TargetsError, match="cannot read footfall targets"):
        target_file(broken)


def _optimize(out: Path, *extra: str) -> list[str]:
    return [
        "optimize",
        "--gait",
        "canter",
        "--executor",
        "serial",
        "--episode-s",
        "3",
        "--popsize",
        "2",
        "--seeds-per-candidate",
        "1",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--targets", "amble"], "valid: canter, pace, rotary-gallop, transverse-gallop"),
        (["--targets", "canter", "--objective", "paper"], "--objective paper does not score"),
        (["--targets", "canter", "--objective", "both"], "--objective both needs a --reference"),
        (["--targets", "pace"], "(--targets sets the speed unless --speed is given)"),
    ],
)
def test_optimize_refuses_bad_targets_in_one_line(
    tmp_path: Path, capsys, extra: list[str], named: str
) -> None:
    out = tmp_path / "run"
    assert main([*_optimize(out, "--evals", "2"), *extra]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and named in err
    assert not (out / "history.csv").exists()


def test_optimize_against_targets_saves_them_in_the_run_and_the_best_gait(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    assert main([*_optimize(out, "--evals", "2"), "--targets", "canter"]) == 0
    best = GaitParams.load(out / "best_canter.toml")
    command = best.provenance["command"]
    # the objective and speed the targets chose are in the command that makes the gait again
    for words in ("--targets canter", "--objective footfalls", "--speed 3.0"):
        assert words in command
    meta = json.loads((out / "config.json").read_text())["meta"]
    assert meta["targets"] == "canter" and meta["objective"] == "footfalls"
    rows = (out / "history.csv").read_text().splitlines()
    header, first = rows[0].split(","), rows[1].split(",")
    assert len(rows) == 2 and float(first[header.index("f_T")]) > 0
    # a resume scores against the same targets, or refuses
    capsys.readouterr()
    assert main(["optimize", "--resume", str(out), "--targets", "pace", "--evals", "4"]) == 2
    assert "--targets pace differs from the run's 'canter'" in capsys.readouterr().err
    assert main(["optimize", "--resume", str(out), "--evals", "4", "--quiet"]) == 0
    assert len((out / "history.csv").read_text().splitlines()) == 3


def test_a_targets_file_is_saved_as_an_absolute_path(tmp_path: Path, monkeypatch) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text((TARGETS_DIR / "canter.toml").read_text().replace("0.50", "0.52", 1))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert main([*_optimize(out, "--evals", "1"), "--targets", "mine.toml"]) == 0
    assert json.loads((out / "config.json").read_text())["meta"]["targets"] == str(mine)
    # the command shows it relative to the working directory: it works in another clone
    command = GaitParams.load(out / "best_canter.toml").provenance["command"]
    assert f"--targets {os.path.relpath(mine)}" in command


def test_compare_prints_a_run_against_targets(tmp_path: Path, capsys) -> None:
    from quadsim.controller.simulate import simulate
    from quadsim.optimize.compare import compare_log
    from quadsim.runlog import save_log

    result, _ = simulate("canter", 3.0, 4.0, seed=1)
    log = result.log
    targets = load_targets("canter")
    c = compare_log(log, targets="canter")
    assert c["clip"]["stride_period_s"] == targets.period_s
    assert list(c["clip"]["duty_factor"].values()) == list(targets.duty_factor)
    assert "f_d" in c["skipped"] and set(c["objective"]) == {"footfalls"}
    run_period = c["run"]["stride_period_s"]
    assert c["terms"]["f_T"] == pytest.approx(abs(run_period - targets.period_s) / 0.5)
    path = tmp_path / "canter.npz"
    save_log(path, log)
    assert main(["compare", str(path), "--targets", "canter"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"against canter .* the targets at 3\.00 m/s", text)
    assert "run-target" in text and "objectives: footfalls" in text
    assert main(["compare", str(path)]) == 2
    assert "needs --reference CLIP or --targets" in capsys.readouterr().err


def test_both_objectives_take_f_d_from_the_clip_and_the_footfalls_from_the_targets(
    tmp_path: Path,
) -> None:
    if not TROT_CLIP.is_file():
        pytest.skip("mocap data not available")
    out = tmp_path / "run"
    extra = ["--objective", "both", "--reference", str(TROT_CLIP), "--targets", "canter"]
    assert main([*_optimize(out), "--evals", "1", *extra]) == 0
    meta = json.loads((out / "config.json").read_text())["meta"]
    assert meta["targets"] == "canter" and meta["reference"] == str(TROT_CLIP.resolve())
    command = GaitParams.load(out / "best_canter.toml").provenance["command"]
    assert "--targets canter" in command
    assert f"--reference {os.path.relpath(TROT_CLIP.resolve())}" in command


def test_an_evaluation_scores_the_footfalls_against_the_targets(tmp_path: Path) -> None:
    from quadsim.optimize.problem import free_names
    from quadsim.optimize.sim_eval import evaluate

    template = free_names(GaitParams.load("canter"), "style")
    x0 = np.clip(np.asarray(template.to_unit(), dtype=float), 0.0, 1.0)
    longer = tmp_path / "longer.toml"
    text = (TARGETS_DIR / "canter.toml").read_text()
    longer.write_text(text.replace("period_s = 0.50", "period_s = 0.54"))
    clip = str(TROT_CLIP) if TROT_CLIP.is_file() else None
    config = {
        "template": template,
        "reference": clip,
        "targets": "canter",
        "objective": "both" if clip else "footfalls",
        "duration_s": 3.0,
        "speed_mps": 3.0,
    }
    canter = evaluate(x0, 0, config)
    other = evaluate(x0, 0, {**config, "targets": str(longer)})
    assert not canter.fell and (canter.f_d > 0 or clip is None)
    # the same run against targets that differ in the period only
    assert (canter.f_df, canter.f_ph) == (other.f_df, other.f_ph)
    # one stride period T of the run explains both: |T - 0.50| / 0.50 and |T - 0.54| / 0.54
    periods_a = {0.50 * (1 + sign * canter.f_T) for sign in (-1, 1)}
    periods_b = {0.54 * (1 + sign * other.f_T) for sign in (-1, 1)}
    assert any(abs(a - b) < 1e-9 for a in periods_a for b in periods_b)
