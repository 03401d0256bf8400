"""A push from a diagonal: every gait at its nominal speed takes the robustness floor's impulse
(issue 31: 20 N s for the walk and trot, 15 for the rest; a 0.1 s push on the chest) and goes
on in its gait, at its speed, along its heading. The bisection over 8 sides and 5 seeds is
benchmarks/bench_pushes.py; here one diagonal per gait, a side it takes with a margin (seeds
0-4 at 1.25 times the impulse: no fall, at 0.91-1.02 of its speed, within 10 degrees of its
heading; notebook 2026-12-06, late)."""

from __future__ import annotations

import numpy as np
import pytest
from sim_slots import one_per_core

import quadsim
from quadsim.controller.kinematics import yaw_of
from quadsim.gaits.params import NOMINAL_SPEED_MPS

PUSH_AT_S, PUSH_S, AFTER_S = 6.0, 0.1, 3.0  # [s] as bench_pushes: at speed by 6 s
# gait: (the side pushed from [deg]: 0 pushes forward, 90 to the left; impulse [N s])
DIAGONAL = {
    "walk": (315.0, 20.0),
    "trot": (45.0, 20.0),
    "pace": (45.0, 15.0),
    "canter": (45.0, 15.0),
    "transverse-gallop": (225.0, 15.0),
    "rotary-gallop": (225.0, 15.0),
}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("gait", list(DIAGONAL))
def test_every_gait_takes_a_diagonal_push_and_goes_on(gait: str, seed: int) -> None:
    side, impulse = DIAGONAL[gait]
    push = quadsim.Push.horizontal(PUSH_AT_S, impulse / PUSH_S, side, PUSH_S)
    speed = NOMINAL_SPEED_MPS[gait]
    result, summary = one_per_core(quadsim.simulate)(
        gait, speed, PUSH_AT_S + PUSH_S + AFTER_S, seed=seed, pushes=[push], log_hz=50.0
    )
    assert not summary["fell"], summary["fall_time_s"]
    log = result.log
    last = log["t"] > log["t"][-1] - 1.0  # its last second
    forward = log["base_vel"][last, 0]  # the heading is +x
    assert np.mean(forward) == pytest.approx(speed, rel=0.15)
    yaw = np.degrees(yaw_of(log["base_quat"][last]))
    assert np.max(np.abs(yaw)) < 15.0


# sides the walk and the trot fell from before their stride clocks quickened (notebook
# 2026-12-07, seeds 0-4 stood): the walk 20 N s from 45 and 270 degrees (1 and 2 of 5), the
# trot 30 N s (the goal's impulse) from 270 (0 of 5)
WEAK_SIDES = [("walk", 45.0, 20.0), ("walk", 270.0, 20.0), ("trot", 270.0, 30.0)]
# the unpushed clock's mean rate: the 0.50 s trot's sway crosses the dead band now and then
# (1.007-1.014, seeds 0-3), a dead band of 0.165 m/s quickened it all along (1.05-1.10)
UNPUSHED_CADENCE_MAX = 1.03


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(("gait", "side", "impulse"), WEAK_SIDES)
def test_the_walk_and_trot_step_quicker_out_of_a_push(
    gait: str, side: float, impulse: float, seed: int
) -> None:
    push = quadsim.Push.horizontal(PUSH_AT_S, impulse / PUSH_S, side, PUSH_S)
    result, summary = one_per_core(quadsim.simulate)(
        gait, NOMINAL_SPEED_MPS[gait], PUSH_AT_S + PUSH_S + AFTER_S, seed=seed, pushes=[push]
    )
    assert not summary["fell"], summary["fall_time_s"]
    t, cadence = result.log["t"], result.log["cadence"]
    settled = (t > 3.0) & (t < PUSH_AT_S)  # at speed, unpushed: the clock keeps its stride
    assert np.mean(cadence[settled]) < UNPUSHED_CADENCE_MAX
    assert cadence[(t > PUSH_AT_S) & (t < PUSH_AT_S + 1.0)].max() > 1.2  # pushed, it quickens
    assert np.mean(cadence[t > t[-1] - 1.0]) < 1.01  # and it is back to its stride
