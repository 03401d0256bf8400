"""The skills (issue 30): sit, lie down and stand up from physics alone, each on two seeds,
their outcomes checked here from the run log (heights of the pelvis and chest links against
their standing heights), not by the library's own judge; and the skill files' errors."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from sim_slots import SLOTS, one_per_core
from test_cli import quadsim

from quadsim.skills.errors import SkillError
from quadsim.skills.perform import perform_skill
from quadsim.skills.posture import Skill, skill_names

SEEDS = (0, 3)
SKILLS = ("sit", "lie-down", "stand-up")


@one_per_core
def _run(job: tuple[str, int]) -> tuple[dict, dict]:
    result, summary = perform_skill(job[0], seed=job[1], log_hz=50.0)
    return {
        k: result.log[k] for k in ("t", "link_pos", "link_names", "joint_q", "joint_names")
    }, summary


@pytest.fixture(scope="module")
def runs() -> dict:
    jobs = [(s, seed) for s in SKILLS for seed in SEEDS]
    with ProcessPoolExecutor(SLOTS) as pool:
        return dict(zip(jobs, pool.map(_run, jobs), strict=True))


def heights(log: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Time, and the pelvis and chest heights as fractions of the first 0.3 s (standing)."""
    names = list(map(str, log["link_names"]))
    t = log["t"]
    pelvis = log["link_pos"][:, names.index("pelvis"), 2]
    chest = log["link_pos"][:, names.index("chest"), 2]
    start = t < 0.3
    return t, pelvis / pelvis[start].mean(), chest / chest[start].mean()


def during(t: np.ndarray, entry: dict, key: str) -> np.ndarray:
    """The samples of the held posture: the last 4 s before the skill's way back starts."""
    return (t > entry[key] - 4.0) & (t < entry[key])


@pytest.mark.parametrize("seed", SEEDS)
def test_sit_holds_low_haunches_a_high_chest_and_straight_fore_legs_then_stands(
    runs: dict, seed: int
) -> None:
    log, summary = runs[("sit", seed)]
    assert not summary["fell"] and [s["name"] for s in summary["skills"]] == ["sit"]
    t, pelvis, chest = heights(log)
    entry = summary["skills"][0]
    stand_from = entry["end_s"] - Skill.load("sit").out[-1].t_s  # where its way back starts
    held = during(t, {"back": stand_from}, "back")
    assert pelvis[held].max() <= 0.5 and chest[held].min() >= 0.75
    joints = list(map(str, log["joint_names"]))
    elbows = log["joint_q"][:, [joints.index("LF_elbow"), joints.index("RF_elbow")]]
    assert np.abs(elbows[held]).max() < 0.35  # straight fore legs
    after = t > entry["end_s"]
    assert min(pelvis[after].min(), chest[after].min()) >= 0.9  # standing again
    assert entry["ok"]


@pytest.mark.parametrize("seed", SEEDS)
def test_lie_down_rests_chest_and_pelvis_on_the_ground_then_stands(runs: dict, seed: int) -> None:
    log, summary = runs[("lie-down", seed)]
    assert not summary["fell"]
    t, pelvis, chest = heights(log)
    entry = summary["skills"][0]
    stand_from = entry["end_s"] - Skill.load("stand-up").out[-1].t_s  # it stands as stand-up
    held = during(t, {"back": stand_from}, "back")
    assert pelvis[held].max() <= 0.35 and chest[held].max() <= 0.35
    after = t > entry["end_s"]
    assert min(pelvis[after].min(), chest[after].min()) >= 0.9
    assert entry["ok"]


@pytest.mark.parametrize("seed", SEEDS)
def test_stand_up_from_lying_reaches_standing_height_within_3_s(runs: dict, seed: int) -> None:
    log, summary = runs[("stand-up", seed)]
    assert not summary["fell"]
    lying, up = summary["skills"]
    assert (lying["name"], up["name"]) == ("lie-down", "stand-up") and lying["end_s"] == up[
        "start_s"
    ]
    t, pelvis, chest = heights(log)
    before = (t > up["start_s"] - 1.0) & (t < up["start_s"])
    assert max(pelvis[before].max(), chest[before].max()) <= 0.35  # it was lying
    stood = (t >= up["start_s"]) & (np.minimum(pelvis, chest) >= 0.9)
    assert stood.any() and t[stood][0] - up["start_s"] <= 3.0
    assert np.minimum(pelvis, chest)[t >= t[stood][0]].min() >= 0.9  # and stays up
    assert up["ok"] and lying["ok"]


def test_every_skill_file_loads_and_unknown_names_are_refused() -> None:
    assert set(SKILLS) <= set(skill_names())
    for name in skill_names():
        skill = Skill.load(name)
        assert skill.into or skill.start_from
        assert skill.out or skill.out_from
    with pytest.raises(SkillError, match="skills: get-up, lie-down, sit, stand-up"):
        Skill.load("jump")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["skill", "jump"], "unknown skill 'jump'; skills: get-up, lie-down, sit, stand-up"),
        (["skill", "sit", "--hold", "1e9"], "at most 60 s"),
        (["skill", "sit", "--seed", "-1"], "must be >= 0"),
    ],
)
def test_bad_skill_commands_are_one_line_and_status_2(args: list[str], expected: str) -> None:
    out = quadsim(*args)
    assert out.returncode == 2, out.stderr
    lines = [line for line in out.stderr.strip().splitlines() if "usage" not in line]
    assert expected in lines[-1], out.stderr
