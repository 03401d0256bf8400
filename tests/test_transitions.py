"""Gait changes with speed, and turning, in whole runs (slow).

All runs are simulated once, one per core (tests/sim_slots.py), and shared by the tests
below.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from sim_slots import SLOTS, one_per_core

from quadsim.controller.episode import forward_speed
from quadsim.controller.kinematics import yaw_of
from quadsim.controller.profile import Profile
from quadsim.controller.simulate import simulate
from quadsim.gaits.footfalls import PATTERN_OF_GAIT, footfall_pattern
from quadsim.gaits.params import GaitParams

pytestmark = pytest.mark.slow
# 0.5 to 5 m/s over 20 s, then a 10 s hold; down from 5 m/s (reached from standing first)
RAMP_UP = ("auto", "0:0.5,20:5.0,30:5.0", 30.0)
RAMP_DOWN = ("auto", "0:5.0,6:5.0,26:0.5", 28.0)
RAMP_SEEDS = (0, 1)  # all 20 ramps on seeds 0-9 hold (README); two fit the suite's time
AUTO_ORDER = ["walk", "trot", "canter", "transverse-gallop"]
# the seeds only jitter the start pose: seeds 0-4 agree within 0.03 in every figure of
# docs/results.md (benchmarks/bench_gaits.py); three fit the suite's time
SEEDS = range(3)
TURN_RATE_DPS, TURN_SPEED, TURN_SEEDS = 30.0, 2.0, SEEDS
# gaits at their nominal speed [m/s] (walk and trot: tests/test_locomotion.py)
NOMINAL = {"pace": 1.5, "canter": 3.0, "transverse-gallop": 4.5, "rotary-gallop": 5.0}
# real dogs' duty factors (the walk's and the trot's: tests/test_locomotion.py)
DUTY_RANGE = {"transverse-gallop": (0.15, 0.4), "rotary-gallop": (0.15, 0.4)}


def _ramp_window(profile: str) -> tuple[float, float]:
    """When the ramp of a speed profile starts and when it reaches the final speed [s]."""
    speed = Profile.parse(profile)
    end = speed.values.index(speed.values[-1])
    return speed.times[end - 1], speed.times[end]


@one_per_core
def _ramp(job: tuple) -> tuple:
    gait, profile, duration, seed = job
    speed = Profile.parse(profile)
    result, summary = simulate(gait, speed, duration, seed=seed, log_hz=50.0)
    after = result.log["t"] >= _ramp_window(profile)[1]
    return job, summary, float(np.mean(forward_speed(result.log)[after])), speed(duration)


@one_per_core
def _turn(seed: int) -> tuple:
    """One seed of the trot turning at 30 deg/s: its summary and the largest heading error
    [deg] from 2 s on."""
    result, summary = simulate(
        "trot", TURN_SPEED, 20.0, seed=seed, log_hz=50.0, turn_rate_dps=TURN_RATE_DPS
    )
    log = result.log
    yaw = yaw_of(log["base_quat"])
    err = np.degrees(np.abs((yaw - log["heading_cmd"] + math.pi) % (2 * math.pi) - math.pi))
    return seed, summary, float(err[log["t"] >= 2.0].max()) if len(err) else math.inf


@one_per_core
def _gait(job: tuple) -> tuple:
    gait, seed = job
    _, summary = simulate(gait, NOMINAL[gait], 20.0, seed=seed, log_hz=50.0)
    return job, summary


@pytest.fixture(scope="module")
def runs() -> dict:
    gait_jobs = [(g, s) for g in NOMINAL for s in SEEDS]
    with ProcessPoolExecutor(max_workers=SLOTS) as pool:
        # all jobs at once, the longest first, so that neither worker idles at the end
        ramps = pool.map(_ramp, [(*r, s) for r in (RAMP_UP, RAMP_DOWN) for s in RAMP_SEEDS])
        turns = pool.map(_turn, TURN_SEEDS)
        gaits = pool.map(_gait, gait_jobs)
        return {
            "ramps": {job: rest for job, *rest in ramps},
            "turns": {seed: rest for seed, *rest in turns},
            "gaits": dict(gaits),
        }


@pytest.mark.parametrize("gait", sorted(NOMINAL))
def test_gait_at_its_nominal_speed_does_not_fall(runs: dict, gait: str) -> None:
    for seed in SEEDS:
        s = runs["gaits"][(gait, seed)]
        assert not s["fell"], f"{gait} seed {seed} fell at {s['fall_time_s']} s"


@pytest.mark.parametrize("gait", sorted(NOMINAL))
def test_gait_at_its_nominal_speed_keeps_its_speed_and_footfalls(runs: dict, gait: str) -> None:
    planned = GaitParams.load(gait).graph().phase_offsets()
    for seed in SEEDS:
        s = runs["gaits"][(gait, seed)]
        assert abs(s["mean_speed_mps"] - NOMINAL[gait]) <= 0.15 * NOMINAL[gait], (seed, s)
        for foot, phase in planned.items():
            measured = s["phase_offset"][foot]
            assert measured is not None, (seed, s["phase_offset"])
            assert abs((measured - phase + 0.5) % 1.0 - 0.5) < 0.12, (seed, foot, s)
        pattern = footfall_pattern(s["phase_offset"], duty=s["duty_factor"])
        assert pattern == PATTERN_OF_GAIT[gait], (seed, s)


@pytest.mark.parametrize("gait", sorted(NOMINAL))
def test_gait_at_its_nominal_speed_keeps_its_heading(runs: dict, gait: str) -> None:
    for seed in SEEDS:
        s = runs["gaits"][(gait, seed)]
        assert s["heading_error_deg"] < 10.0, (seed, s["heading_error_deg"])


@pytest.mark.parametrize("gait", sorted(DUTY_RANGE))
def test_gait_duty_factors_are_those_of_real_dogs(runs: dict, gait: str) -> None:
    lo, hi = DUTY_RANGE[gait]
    for seed in SEEDS:
        duty = runs["gaits"][(gait, seed)]["duty_factor"]
        assert all(d is not None and lo <= d <= hi for d in duty.values()), (seed, duty)


@pytest.mark.parametrize(("job", "order"), [(RAMP_UP, AUTO_ORDER), (RAMP_DOWN, AUTO_ORDER[::-1])])
def test_speed_ramp_changes_gait_in_order_without_falling(
    runs: dict, job: tuple, order: list[str]
) -> None:
    ramp_start = _ramp_window(job[1])[0]
    for seed in RAMP_SEEDS:
        summary, _, _ = runs["ramps"][(*job, seed)]
        assert not summary["fell"], f"seed {seed} fell at {summary['fall_time_s']} s"
        used = [u["gait"] for u in summary["gaits_used"] if u["to_s"] > ramp_start]
        assert used == order, (seed, summary["gaits_used"])


@pytest.mark.parametrize("job", [RAMP_UP, RAMP_DOWN])
def test_speed_ramp_ends_at_the_commanded_speed(runs: dict, job: tuple) -> None:
    for seed in RAMP_SEEDS:
        _, speed_after, commanded = runs["ramps"][(*job, seed)]
        assert abs(speed_after - commanded) < 0.5, (seed, speed_after, commanded)


def test_trot_turns_on_the_commanded_circle(runs: dict) -> None:
    radius = TURN_SPEED / math.radians(TURN_RATE_DPS)
    for seed in TURN_SEEDS:
        summary, max_heading_err = runs["turns"][seed]
        assert not summary["fell"], f"seed {seed} fell at {summary['fall_time_s']} s"
        assert max_heading_err < 15.0, (seed, max_heading_err)
        assert summary["turn_radius_m"] == pytest.approx(radius, rel=0.2), (seed, summary)
