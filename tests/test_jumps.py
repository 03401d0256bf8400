"""Jumps onto and off platforms (issue 30): each jump through the API on two seeds, its
outcome checked here from the run log (the feet on the far side's ground, the trot after the
landing, the pelvis's height over the ground), not by the library's own judge; platform specs
and plans with jumps, and their one-line errors."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from sim_slots import SLOTS, one_per_core
from test_cli import quadsim

from quadsim.skills.errors import PlanError
from quadsim.skills.jump import Platform, edges_for, ground_of
from quadsim.skills.perform import JUMP_EDGE_M, JUMP_HEIGHT_M, perform_jump
from quadsim.skills.plan import PlanStep, parse_plan
from quadsim.skills.scene import play_plan

SEEDS = (0, 1)
FOOT_RADIUS_M = 0.02  # the shepherd's foot sphere


def test_a_platform_spec_is_its_edge_and_height() -> None:
    assert Platform.parse("4:0.3") == Platform(4.0, 0.3)
    assert Platform.parse("-2.5:1").height_m == 1.0


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("4", "must look like X:H"),
        ("4:0.3:2", "must look like X:H"),
        ("a:0.3", "must look like X:H"),
        ("4:-0.3", "height must lie in (0, 1]"),
        ("4:5", "height must lie in (0, 1]"),
        ("nan:0.3", "edge's x must lie in"),
    ],
)
def test_bad_platform_specs_say_what_is_wrong(spec: str, expected: str) -> None:
    with pytest.raises(PlanError) as err:
        Platform.parse(spec)
    assert expected in str(err.value)


def test_jump_steps_parse_and_take_the_next_edges_in_turn() -> None:
    steps = parse_plan("trot 2.0 2; jump-onto; trot 2 3; jump-off; trot 2.0 3")
    assert steps[1] == PlanStep("jump", "jump-onto") and steps[3] == PlanStep("jump", "jump-off")
    platform = Platform(4.0, 0.3)
    edges = edges_for(["jump-onto", "jump-off"], [platform], start_x=0.0)
    assert [e.x_m for e in edges] == [4.0, 4.0 + platform.length_m]
    assert edges[0].after_m == pytest.approx(0.3) and edges[1].after_m == 0.0
    ground = ground_of([platform])
    assert ground.height(5.0, 1.4) == pytest.approx(0.3) and ground.height(5.0, 1.6) == 0.0


@pytest.mark.parametrize(
    ("kinds", "platforms", "expected"),
    [
        (["jump-onto"], [], "has no edge ahead"),
        (["jump-onto", "jump-onto"], [Platform(4.0, 0.3)], "is a step down; use jump-off"),
        (["jump-off"], [Platform(4.0, 0.3)], "is a step up; use jump-onto"),
        (["jump-onto"], [Platform(-8.0, 0.3)], "has no edge ahead"),
    ],
)
def test_a_jump_without_its_edge_ahead_is_refused(
    kinds: list[str], platforms: list[Platform], expected: str
) -> None:
    with pytest.raises(PlanError) as err:
        edges_for(kinds, platforms, start_x=0.0)
    assert expected in str(err.value)


def test_jump_steps_take_no_arguments() -> None:
    with pytest.raises(PlanError, match="jump-onto takes no arguments"):
        parse_plan("trot 2 2; jump-onto 0.3")


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--plan", "trot 2.0 2; jump-onto; trot 2.0 3"),
        ("run", "--plan", "trot 2.0 2; jump-onto", "--platform", "4:x"),
        ("run", "--plan", "trot 2.0 2; jump-off", "--platform", "4:0.3"),
        ("run", "--platform", "4:0.3"),
        ("skill", "jump-onto", "--height", "3"),
        ("skill", "sit", "--height", "0.3"),
    ],
)
def test_bad_jumps_on_the_command_line_are_one_line_and_status_2(args: tuple[str, ...]) -> None:
    out = quadsim(*args)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr


# ---------------------------------------------------------------------- the jumps themselves


@one_per_core
def _run(job: tuple[str, int]) -> tuple[dict, dict]:
    result, summary = perform_jump(job[0], seed=job[1], log_hz=100.0)
    keys = ("t", "base_pos", "foot_pos", "foot_contact", "link_pos", "link_names")
    return {k: result.log[k] for k in keys}, summary


@pytest.fixture(scope="module")
def runs() -> dict:
    jobs = [(name, seed) for name in JUMP_HEIGHT_M for seed in SEEDS]
    with ProcessPoolExecutor(SLOTS) as pool:
        return dict(zip(jobs, pool.map(_run, jobs), strict=True))


def _trot_after_landing(log: dict, summary: dict) -> np.ndarray:
    """The samples of the trot after the landing, to the jump's end."""
    entry = summary["skills"][0]
    assert entry["trot_resumed_s"] is not None, entry
    return (log["t"] >= entry["trot_resumed_s"]) & (log["t"] <= entry["end_s"])


def _stance_heights(log: dict, window: np.ndarray, beyond_x: float) -> list[np.ndarray]:
    """Per foot, the heights of its lowest point [m] while it touches the ground past x."""
    feet, contact = log["foot_pos"][window], log["foot_contact"][window]
    out = []
    for k in range(4):
        down = feet[contact[:, k], k]
        out.append(down[down[:, 0] > beyond_x, 2] - FOOT_RADIUS_M)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_jump_onto_lands_all_four_feet_on_the_top_and_trots_on(runs: dict, seed: int) -> None:
    log, summary = runs[("jump-onto", seed)]
    height = JUMP_HEIGHT_M["jump-onto"]
    assert not summary["fell"], summary["skills"]
    trot = _trot_after_landing(log, summary)
    t = log["t"][trot]
    assert t[-1] - t[0] >= 2.95  # trotting on for 3 s
    for k, heights in enumerate(_stance_heights(log, trot, JUMP_EDGE_M)):
        assert len(heights) > 20, f"foot {k} never stood on the top"
        assert np.abs(np.median(heights) - height) <= 0.03, (k, np.median(heights))
    assert log["base_pos"][trot][-1, 0] > JUMP_EDGE_M + 2.0  # it went on, not only stood
    assert summary["skills"][0]["ok"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_jump_off_lands_without_falling_and_the_pelvis_stays_high(runs: dict, seed: int) -> None:
    log, summary = runs[("jump-off", seed)]
    height = JUMP_HEIGHT_M["jump-off"]
    assert not summary["fell"], summary["skills"]
    trot = _trot_after_landing(log, summary)
    t = log["t"][trot]
    assert t[-1] - t[0] >= 2.95
    for heights in _stance_heights(log, trot, JUMP_EDGE_M):
        assert len(heights) > 20 and np.abs(np.median(heights)) <= 0.03
    # the pelvis over the ground under it, against its standing height on the platform
    names = list(map(str, log["link_names"]))
    pelvis = log["link_pos"][:, names.index("pelvis")]
    ground = np.where(pelvis[:, 0] < JUMP_EDGE_M, height, 0.0)
    clearance = pelvis[:, 2] - ground
    standing = clearance[log["t"] < 0.3].mean()
    assert clearance.min() >= 0.45 * standing
    assert summary["skills"][0]["ok"]


@pytest.mark.slow
def test_a_plan_jumps_onto_its_platform_and_trots_on_there() -> None:
    platform = Platform(4.0, 0.3)
    result, summary = play_plan(
        "jump-onto; trot 1.2 0.5", seed=0, platforms=[platform], log_hz=50.0
    )
    assert not summary["fell"] and [s["name"] for s in summary["plan"]] == ["jump-onto", "trot"]
    log, trot = result.log, summary["plan"][1]
    window = (log["t"] >= trot["start_s"]) & (log["t"] <= trot["end_s"])
    for heights in _stance_heights(log, window, platform.x_m):
        assert len(heights) and np.abs(np.median(heights) - platform.height_m) <= 0.03
    assert log["base_pos"][window][-1, 0] > log["base_pos"][window][0, 0] + 0.3  # moving on
