"""The legs do not run into their joints' stops.

A joint driven into its stop halts within one physics step: the impact jolts the whole body
(the pelvis's velocity jumps) and can lift the stance feet, as the walk's swinging hind hips
did (README: "What lifted the walk's hind feet").
"""

from __future__ import annotations

import numpy as np
import pytest
from sim_slots import one_per_core

from quadsim.controller.loop import Controller
from quadsim.controller.sim import World
from quadsim.controller.simulate import CONTROL_DT
from quadsim.gaits.params import GaitParams

JOLT_MPS = 0.05  # a change of the pelvis's velocity within one physics step (0.25 ms)
AT_STOP_RAD = 1e-3


def stop_jolts_per_second(gait: str, speed: float, seconds: float, settle_s: float = 2.0) -> float:
    """Jolts of the pelvis with a joint at its stop, per second after `settle_s`, from
    standing (no start jitter)."""
    with World() as world:
        ctrl = Controller(world.skeleton, GaitParams.load(gait), dt=CONTROL_DT, servo_dt=world.dt)
        ctrl.command.speed_mps = speed
        lower, upper, _ = world.skeleton.limits()
        lower, upper = lower + AT_STOP_RAD, upper - AT_STOP_RAD
        substeps = round(CONTROL_DT / world.dt)
        jolts = 0
        state = world.read_state()
        for step in range(round((settle_s + seconds) / CONTROL_DT)):
            command = ctrl.step(state)
            counting = step * CONTROL_DT >= settle_s
            for _ in range(substeps):
                world.apply(command.torques(state.q, state.qd))
                world.step()
                before, state = state, world.read_state()
                if (
                    counting
                    and np.linalg.norm(state.base_vel - before.base_vel) > JOLT_MPS
                    and np.any((state.q <= lower) | (state.q >= upper))
                ):
                    jolts += 1
            assert world.status(state) == "ok", f"{gait} fell at {state.t:.2f} s"
    return jolts / seconds


@pytest.mark.slow
@pytest.mark.parametrize(
    ("gait", "speed"),
    [
        ("walk", 1.0),
        pytest.param(
            "trot",
            2.0,
            marks=pytest.mark.xfail(
                strict=True,
                reason=(
                    "the trot's swinging hind hips reach their stop (hip pitch -1.8 rad) "
                    "about 9 times a second: its hind swing lifts the foot 0.106 m, the real "
                    "trot's about 0.09 m scaled to our dog"
                ),
            ),
        ),
    ],
)
def test_swinging_legs_do_not_hit_their_stops(gait: str, speed: float) -> None:
    # before its hind swing was lowered the walk at 1 m/s had about 8 a second
    assert one_per_core(stop_jolts_per_second)(gait, speed, seconds=6.0) <= 1.0
