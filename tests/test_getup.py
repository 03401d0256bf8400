"""Getting up after a fall (issue 30): the get-up skill from lying on the side on two seeds,
and `quadsim run --recover` after a push that fells the dog; the outcomes are checked here
from the run log (link heights against those of a dog placed standing in a World of the
test's own, the trunk's up axis, the speed along the heading), not by the library's judge."""

from __future__ import annotations

import json
import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from sim_slots import SLOTS, one_per_core
from test_cli import quadsim

from quadsim.controller.drive import Driver
from quadsim.controller.episode import run_episode
from quadsim.controller.kinematics import quat_to_matrix, yaw_of
from quadsim.controller.loop import Controller
from quadsim.controller.profile import Profile
from quadsim.controller.sim import World
from quadsim.controller.simulate import CONTROL_DT, parse_push, simulate
from quadsim.gaits.params import GaitParams
from quadsim.skills.errors import PlanError
from quadsim.skills.getup import get_up_timeline, mirror_pose, side_down
from quadsim.skills.perform import perform_skill
from quadsim.skills.plan import parse_plan
from quadsim.skills.posture import Skill
from quadsim.skills.recovery import Recovery

SEEDS = (0, 3)
KEYS = ("t", "link_pos", "link_names", "base_quat", "base_vel", "joint_tau", "torque_limit")


@one_per_core
def _get_up(seed: int) -> tuple[dict, dict]:
    result, summary = perform_skill("get-up", seed=seed, log_hz=50.0)
    return {k: result.log[k] for k in KEYS}, summary


@pytest.fixture(scope="module")
def runs() -> dict:
    with ProcessPoolExecutor(SLOTS) as pool:
        return dict(zip(SEEDS, pool.map(_get_up, SEEDS), strict=True))


@pytest.fixture(scope="module")
def standing() -> tuple[float, float]:
    """The pelvis's and chest's heights [m] of the dog placed standing."""
    with World("shepherd") as world:
        world.place_dog(world.skeleton.stand_angles())
        names = list(world.link_names)
        frames = world.link_frames().reshape(len(names), 7)
        return float(frames[names.index("pelvis"), 2]), float(frames[names.index("chest"), 2])


def fractions(log: dict, standing: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    names = list(map(str, log["link_names"]))
    pelvis = log["link_pos"][:, names.index("pelvis"), 2] / standing[0]
    chest = log["link_pos"][:, names.index("chest"), 2] / standing[1]
    return pelvis, chest


def up_axis(log: dict) -> np.ndarray:
    """The trunk's up axis's height per sample: 1 upright, 0 on its side."""
    return np.array([quat_to_matrix(q)[2, 2] for q in log["base_quat"]])


def speed_along_heading(log: dict, start_s: float, end_s: float) -> float:
    w = (log["t"] >= start_s) & (log["t"] <= end_s)
    heading = float(yaw_of(log["base_quat"][w][:1])[0])
    v = log["base_vel"][w]
    return float(np.mean(v[:, 0] * math.cos(heading) + v[:, 1] * math.sin(heading)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_get_up_rolls_from_the_side_onto_the_chest_stands_within_6_s_and_walks_on(
    runs: dict, standing: tuple[float, float], seed: int
) -> None:
    log, summary = runs[seed]
    t, up = log["t"], up_axis(log)
    pelvis, chest = fractions(log, standing)
    assert up[0] < 0.2 and max(pelvis[0], chest[0]) < 0.3  # starts lying on its side
    assert not summary["fell"]
    sternal = np.flatnonzero((up > 0.9) & (np.maximum(pelvis, chest) < 0.6))
    stood = np.flatnonzero(np.minimum(pelvis, chest) >= 0.9)
    assert len(sternal) and len(stood)
    assert t[sternal[0]] < t[stood[0]] <= 6.0  # on its chest first, then standing
    walk = next(p for p in summary["plan"] if p["kind"] == "gait")
    after = t >= walk["start_s"]
    assert min(pelvis[after].min(), chest[after].min()) >= 0.6  # walks on, never drops
    speed = speed_along_heading(log, walk["end_s"] - 3.0, walk["end_s"])
    assert abs(speed - 1.0) <= 0.15
    assert np.all(np.abs(log["joint_tau"]) <= log["torque_limit"] + 1e-6)  # joints only
    assert summary["skills"][0]["ok"] and summary["skills"][0]["took_s"] <= 6.0


def test_mirroring_swaps_the_legs_and_flips_roll_and_yaw_and_undoes_itself() -> None:
    with World("shepherd") as world:
        sk = world.skeleton
    rng = np.random.default_rng(1)
    q = rng.normal(0.0, 0.3, len(sk.joint_names))
    m = mirror_pose(sk, q)
    ix = sk.joint_index
    assert m[ix("LH_knee")] == q[ix("RH_knee")] and m[ix("RF_elbow")] == q[ix("LF_elbow")]
    assert m[ix("LH_hip_roll")] == -q[ix("RH_hip_roll")]
    assert (
        m[ix("spine1_yaw")] == -q[ix("spine1_yaw")] and m[ix("neck1_pitch")] == q[ix("neck1_pitch")]
    )
    assert np.array_equal(mirror_pose(sk, m), q)


def test_side_down_tells_the_right_side_the_left_and_the_chest() -> None:
    assert side_down(_rolled(math.pi / 2)) == 1
    assert side_down(_rolled(-math.pi / 2)) == -1
    assert side_down(_rolled(0.2)) == 0


def _rolled(angle: float) -> np.ndarray:
    return np.array([math.sin(angle / 2), 0.0, 0.0, math.cos(angle / 2)])  # xyzw


def test_on_its_back_the_get_up_first_rolls_over_toward_the_side_it_leans_to() -> None:
    skill = Skill.load("get-up")
    with World("shepherd") as world:
        sk = world.skeleton
    q = sk.stand_angles()
    side = get_up_timeline(sk, q, _rolled(math.pi / 2), 10.0)
    over = skill.over[-1].t_s
    assert side.rolled_s == pytest.approx(10.0 + skill.into[-1].t_s)  # from the side: no roll over
    for lean, mirrored in ((-0.2, False), (0.2, True)):
        back = get_up_timeline(sk, q, _rolled(math.pi + lean), 10.0)
        assert back.rolled_s == pytest.approx(side.rolled_s + over)
        assert back.up_s - back.rolled_s == pytest.approx(side.up_s - side.rolled_s)
        swung = back.timeline.poses[1][sk.joint_index("LH_hip_roll")]
        assert (swung < 0) == mirrored and abs(swung) > 0.5  # the legs swing one way or the other


@pytest.mark.slow
def test_recover_rolls_the_dog_off_its_back_and_it_walks_on(standing: tuple[float, float]) -> None:
    # placed 10 degrees or more off its back it tips onto its side by itself, and the get-up
    # from the side did; flat on its back that get-up wriggled and fell again before it rose
    result, falls = one_per_core(_recover_from_the_back)()
    log = result.log
    assert len(falls) == 1  # the first "fall" (lying on its back), and no other
    assert up_axis(log)[0] < -0.9
    pelvis, chest = fractions(log, standing)
    stood = np.flatnonzero(np.minimum(pelvis, chest) >= 0.9)
    assert len(stood) and log["t"][stood[0]] <= 10.0  # the roll over takes 1.5 s more
    after = log["t"] >= log["t"][stood[0]]
    assert min(pelvis[after].min(), chest[after].min()) >= 0.6  # up, and stays up
    assert speed_along_heading(log, log["t"][-1] - 1.0, log["t"][-1]) >= 0.7  # walking on


def _recover_from_the_back() -> tuple:
    """The dog placed on its back under `--recover` with the walk at 1 m/s for 14 s: the run
    and the judged recoveries."""
    with World("shepherd") as world:
        world.place_dog(world.skeleton.stand_angles(), roll=math.pi)
        walk = GaitParams.load("walk")

        def walker() -> Driver:
            return Driver(Controller(world.skeleton, walk, dt=CONTROL_DT), Profile.constant(1.0))

        recovery = Recovery(world.skeleton, walker)
        result = run_episode(
            world,
            recovery,
            14.0,
            control_hz=1.0 / CONTROL_DT,
            log_hz=50.0,
            extra_log=recovery.log_fields,
            hooks=[recovery],
            on_fall=recovery.on_fall,
        )
    return result, recovery.judge(result.log, lambda t: 1.0, result.status == "unstable")


def test_get_up_only_starts_a_plan() -> None:
    assert parse_plan("get-up; walk 1.0 3")[0].name == "get-up"
    with pytest.raises(PlanError, match="only be the plan's first step"):
        parse_plan("walk 1.0 3; get-up")
    with pytest.raises(PlanError, match="get-up takes no hold time"):
        parse_plan("get-up 3")


def test_recover_with_a_plan_is_one_line_and_status_2() -> None:
    out = quadsim("run", "--plan", "walk 1.0 2", "--recover")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "--recover" in out.stderr


def test_get_up_with_a_hold_is_one_line_and_status_2() -> None:
    out = quadsim("skill", "get-up", "--hold", "2")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "--hold" in out.stderr


def test_recover_without_a_fall_changes_nothing() -> None:
    args = ("run", "--gait", "trot", "--speed", "2", "--duration", "2", "--json")
    plain, recovering = quadsim(*args), quadsim(*args, "--recover")
    assert plain.returncode == 0 and recovering.returncode == 0, recovering.stderr
    a, b = json.loads(plain.stdout), json.loads(recovering.stdout)
    assert b.pop("recoveries") == []
    a.pop("realtime_factor"), b.pop("realtime_factor")
    assert a == b


@pytest.mark.slow
def test_recover_gets_up_after_a_push_fells_the_dog_and_trots_on(
    tmp_path: Path, standing: tuple[float, float]
) -> None:
    log_path = tmp_path / "run.npz"
    out = quadsim(
        "run",
        "--gait",
        "trot",
        "--speed",
        "2",
        "--push",
        "5:0,900,0:0.2",
        "--recover",
        "--duration",
        "16",
        "--json",
        "--log",
        str(log_path),
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["fell"] is True and 5.0 < summary["fall_time_s"] < 7.0
    [recovery] = summary["recoveries"]
    assert recovery["fall_s"] == summary["fall_time_s"] and recovery["ok"] is True
    log = dict(np.load(log_path))
    t, up = log["t"], up_axis(log)
    pelvis, chest = fractions(log, standing)
    fallen = t >= recovery["fall_s"]
    assert up[fallen].min() < 0.3  # it really lay on its side (or worse)
    assert recovery["fall_s"] < recovery["up_s"] < t[-1] - 3.0
    stood = t >= recovery["up_s"]
    assert min(pelvis[stood].min(), chest[stood].min()) >= 0.7  # up, and stays up
    assert speed_along_heading(log, t[-1] - 1.0, t[-1]) >= 1.5  # trotting on


@pytest.mark.slow
def test_recover_takes_over_each_fall_of_a_run() -> None:
    pushes = [parse_push("3:0,900,0:0.2"), parse_push("15:0,-900,0:0.2")]  # both sides
    result, summary = simulate("trot", 2.0, 27.0, seed=0, pushes=pushes, recover=True)
    falls = summary["recoveries"]
    assert [r["ok"] for r in falls] == [True, True]
    assert summary["fall_time_s"] == falls[0]["fall_s"] < falls[0]["up_s"] < 15.0
    assert 15.0 < falls[1]["fall_s"] < falls[1]["up_s"] < 27.0
    assert result.log["t"][-1] > 26.9  # the run went on to its end
