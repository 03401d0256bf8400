"""The legs do not run into their joints' stops.

A joint driven into its stop halts within one physics step: the impact jolts the whole body
(the pelvis's velocity jumps) and can lift the stance feet, as the walk's swinging hind hips
did (README: "What lifted the walk's hind feet").
"""

from __future__ import annotations

import numpy as np
import pytest
from sim_slots import one_per_core

from quadsim.controller.episode import StepHook, run_episode
from quadsim.controller.loop import Controller
from quadsim.controller.sim import World
from quadsim.controller.simulate import CONTROL_DT
from quadsim.gaits.params import GaitParams

JOLT_MPS2 = 200.0  # the pelvis's mean acceleration over one physics step, in a jolt
AT_STOP_RAD = 1e-3


class StopJolts(StepHook):
    """Counts the physics steps, after `settle_s`, in which the pelvis's velocity jumps while
    a joint sits at its stop."""

    def __init__(self, lower: np.ndarray, upper: np.ndarray, settle_s: float) -> None:
        self.lower, self.upper = lower + AT_STOP_RAD, upper - AT_STOP_RAD
        self.settle_s = settle_s
        self.base_vel: np.ndarray | None = None
        self.jolts = 0

    def after_physics(self, world: World) -> None:
        state = world.read_state()
        at_stop = np.any((state.q <= self.lower) | (state.q >= self.upper))
        if (
            state.t >= self.settle_s
            and self.base_vel is not None
            and np.linalg.norm(state.base_vel - self.base_vel) > JOLT_MPS2 * world.dt
            and at_stop
        ):
            self.jolts += 1
        self.base_vel = state.base_vel


def stop_jolts_per_second(gait: str, speed: float, seconds: float, settle_s: float = 2.0) -> float:
    """Jolts of the pelvis with a joint at its stop, per second after `settle_s`, from
    standing (no start jitter)."""
    with World() as world:
        ctrl = Controller(world.skeleton, GaitParams.load(gait), dt=CONTROL_DT)
        ctrl.command.speed_mps = speed
        lower, upper, _ = world.skeleton.limits()
        counter = StopJolts(lower, upper, settle_s)
        result = run_episode(world, ctrl, settle_s + seconds, hooks=[counter])
    assert result.status == "ok", f"{gait} fell at {result.fall_time_s} s"
    return counter.jolts / seconds


@pytest.mark.slow
@pytest.mark.parametrize(
    ("gait", "speed"),
    [
        ("walk", 1.0),
        ("trot", 2.0),  # the 0.36 s trot hit its hind hip stops about 9 times a second
    ],
)
def test_swinging_legs_do_not_hit_their_stops(gait: str, speed: float) -> None:
    # before its hind swing was lowered the walk at 1 m/s had about 8 a second
    assert one_per_core(stop_jolts_per_second)(gait, speed, seconds=6.0) <= 1.0
