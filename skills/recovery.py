"""Recovering from a fall (`quadsim run --recover`): the gait driver runs the dog; when it
falls, the dog lies still, gets up (skills/getup.py) and a fresh gait controller takes it on
at the commanded gait and speed. A fall detector switching to the get-up and back."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from quadsim.controller.drive import Driver
from quadsim.controller.episode import StepHook
from quadsim.controller.kinematics import yaw_of
from quadsim.controller.pd import ServoCommand
from quadsim.controller.sim import World
from quadsim.controller.state import DogState
from quadsim.models import Skeleton
from quadsim.skills import outcomes
from quadsim.skills.getup import GetUpPlan, along_heading, get_up_timeline
from quadsim.skills.posture import STAND, Keyframe, PostureController, Timeline

RELAX_S = 0.4  # [s] after a fall the legs ease to the standing pose (out from the body)
STILL_MPS = 0.15  # the trunk slower than this: it has come to rest and may get up
MAX_DOWN_S = 2.5  # [s] it gets up after this long even if it still slides
SETTLE_S = 0.5  # [s] standing still after the get-up before the gait starts
MAX_ATTEMPTS = 3  # falls while getting up before the run ends as fallen
MOVE_ON_S = 2.0  # [s] of gait after standing, without falling, for a recovery to count
MOVE_ON_SHARE = 0.5  # ... at this share of the commanded speed, at least, at its end


class Recovery(StepHook):
    """Runs the gait driver; after a fall (on_fall), the get-up, then a new gait driver.
    As a StepHook it tells the World when lying down is no fall."""

    def __init__(self, skeleton: Skeleton, make_driver: Callable[[], Driver]) -> None:
        self.skeleton = skeleton
        self.make_driver = make_driver
        self.driver = make_driver()
        self.phase = "gait"  # "gait", "down" (coming to rest after a fall), "up" (getting up)
        self.posture: PostureController | None = None
        self.plan: GetUpPlan | None = None
        self.recoveries: list[dict] = []
        self._since = 0.0
        self._log = self.driver.log_fields
        self.gave_up = False  # it fell once more than MAX_ATTEMPTS allow: the run ended

    # ------------------------------------------------------------------ the switch

    def on_fall(self, state: DogState) -> bool:
        """The World says the dog fell: lie still, then get up; False ends the run."""
        if len(self.recoveries) >= MAX_ATTEMPTS:
            self.gave_up = True
            return False
        self.recoveries.append({"fall_s": round(state.t, 3), "get_up_s": None, "gait_s": None})
        timeline = Timeline(self.skeleton, start_s=state.t, pose=state.q.copy())
        timeline.supports[0] = 0.0
        relaxed = dict.fromkeys(self.skeleton.joint_names, STAND)
        timeline.add((Keyframe(RELAX_S, 0.0, relaxed),), state.t)
        self.posture, self.phase, self._since = (
            PostureController(self.skeleton, timeline),
            "down",
            state.t,
        )
        return True

    def step(self, state: DogState) -> ServoCommand:
        if self.phase == "down" and self._at_rest(state):
            self.plan = get_up_timeline(self.skeleton, state.q, state.base_quat, state.t)
            self.plan.timeline.hold(SETTLE_S)
            self.posture, self.phase = PostureController(self.skeleton, self.plan.timeline), "up"
            self.recoveries[-1]["get_up_s"] = round(state.t, 3)
        if self.phase == "up" and state.t >= self.plan.timeline.end_s:
            self.driver = self.make_driver()
            self.driver.controller.command.heading_rad = float(yaw_of(state.base_quat[None])[0])
            self.posture, self.phase = None, "gait"
            self.recoveries[-1]["gait_s"] = round(state.t, 3)
        if self.posture is not None:
            return self.posture.step(state)
        return self.driver.step(state)

    def _at_rest(self, state: DogState) -> bool:
        down_for = state.t - self._since
        slow = float(np.linalg.norm(state.base_vel)) < STILL_MPS
        return down_for >= RELAX_S and (slow or down_for >= MAX_DOWN_S)

    def after_control(self, world: World, state: DogState, command: object) -> None:
        rolling = self.phase == "down" or (self.phase == "up" and state.t < self.plan.rolled_s)
        world.getting_up = rolling
        world.resting_allowed = self.phase == "up"

    # ------------------------------------------------------------------ log and judge

    def log_fields(self, state: DogState) -> dict[str, float | np.ndarray]:
        """The gait driver's fields; while down or getting up, its last ones, speed 0 and
        the heading the dog faces."""
        if self.phase == "gait":
            self._log = self.driver.log_fields(state)
            return self._log
        heading = float(yaw_of(state.base_quat[None])[0])
        return {**self._log, "speed_cmd": 0.0, "heading_cmd": heading}

    def caption(self, state: DogState) -> str:
        if self.phase == "gait":
            return self.driver.caption(state)
        return f"{'fallen' if self.phase == 'down' else 'getting up'}  t = {state.t:.1f} s"

    def judge(self, log: dict, speed_cmd: Callable[[float], float], unstable: bool) -> list[dict]:
        """Each fall: `fall_s`, `up_s` (chest and pelvis back at 90% of standing height, or
        None) and `ok`: it stood, then went on in its gait at least MOVE_ON_S before the next
        fall or the run's end (not a fall it gave up on, nor `unstable`), reaching
        MOVE_ON_SHARE of the commanded speed `speed_cmd(t)` [m/s] over a second."""
        if not self.recoveries:
            return []
        h = outcomes.Heights.of(log)
        ends = [r["fall_s"] for r in self.recoveries[1:]] + [float(h.t[-1])]
        out = []
        for r, end in zip(self.recoveries, ends, strict=True):
            start = r["get_up_s"] if r["get_up_s"] is not None else math.inf
            up = (h.t >= start) & (np.minimum(h.pelvis, h.chest) >= outcomes.STOOD_MIN)
            up_s = round(float(h.t[up][0]), 3) if up.any() else None
            ended_badly = r is self.recoveries[-1] and (unstable or self.gave_up)
            ok = (
                up_s is not None
                and r["gait_s"] is not None
                and not ended_badly
                and end - r["gait_s"] >= MOVE_ON_S
                and _best_second(log, r["gait_s"], end) >= MOVE_ON_SHARE * speed_cmd(end)
            )
            out.append({"fall_s": r["fall_s"], "up_s": up_s, "ok": bool(ok)})
        return out


def _best_second(log: dict, start_s: float, end_s: float) -> float:
    """The best one-second mean speed [m/s] from `start_s` to `end_s`, along the heading the
    dog had at `start_s`."""
    along = along_heading(log, start_s, end_s)
    per_second = max(int(round(1.0 / float(np.median(np.diff(log["t"]))))), 1)
    if len(along) < per_second:
        return 0.0
    return float(np.convolve(along, np.ones(per_second) / per_second, mode="valid").max())
