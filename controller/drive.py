"""The driver: sets the controller's command from profiles at every control step, and for
the automatic gait choice the gait that belongs to the speed the dog is asked to go now."""

from __future__ import annotations

import math

import numpy as np

from quadsim.controller.kinematics import wrap_angle
from quadsim.controller.loop import Controller
from quadsim.controller.pd import ServoCommand
from quadsim.controller.profile import Profile
from quadsim.controller.state import DogState
from quadsim.gaits.schedule import GaitSchedule

REBLEND_MPS = 0.01  # the blended gait is recomputed when the ramped speed moved this much
HEADING_GAIN_PER_S = 2.0  # a heading profile: the aim closes on the profile at this rate
MAX_CATCH_UP = math.radians(90.0)  # [rad/s] ... turning at most this much faster than it


class Driver:
    """Wraps a Controller: speed [m/s] and heading [deg] profiles of time, or a constant
    turn rate [deg/s]; with a GaitSchedule the gait follows the ramped speed."""

    def __init__(
        self,
        controller: Controller,
        speed: Profile,
        *,
        heading_deg: Profile | None = None,
        turn_rate_dps: float = 0.0,
        schedule: GaitSchedule | None = None,
    ) -> None:
        self.controller = controller
        self.speed = speed
        self.heading = heading_deg
        self.turn_rate_dps = turn_rate_dps
        self.schedule = schedule
        self.gait_index = 0
        self._blend_speed = math.nan
        if heading_deg is not None:
            controller.command.heading_rad = math.radians(heading_deg(0.0))

    def step(self, state: DogState) -> ServoCommand:
        c = self.controller
        c.command.speed_mps = self.speed(state.t)
        if self.heading is None:
            c.command.turn_rate_rps = math.radians(self.turn_rate_dps)
        else:  # the profile's rate, plus closing on its heading (the start has no rate)
            behind = wrap_angle(math.radians(self.heading(state.t)) - c.state.heading)
            catch_up = min(max(HEADING_GAIN_PER_S * behind, -MAX_CATCH_UP), MAX_CATCH_UP)
            c.command.turn_rate_rps = math.radians(self.heading.slope(state.t)) + catch_up
        if self.schedule is not None and not abs(c.speed_now - self._blend_speed) < REBLEND_MPS:
            blend = self.schedule.at(c.speed_now)
            if blend.params is not c.params:  # inside a band the preset stays as it is
                c.set_params(blend.params)
            self.gait_index = blend.index
            self._blend_speed = c.speed_now
        return c.step(state)

    def caption(self, state: DogState) -> str:
        """What a video frame says: the gait in force, the commanded speed and the time."""
        name = (
            self.schedule.names[self.gait_index]
            if self.schedule is not None
            else self.controller.params.gait
        )
        return f"{name}  {self.controller.speed_now:.1f} m/s  t = {state.t:.1f} s"

    def log_fields(self, state: DogState) -> dict[str, float | np.ndarray]:
        out = self.controller.log_fields(state)
        if self.heading is not None:  # what the user commanded, not the aim that chases it
            out["heading_cmd"] = math.radians(self.heading(state.t))
        if self.schedule is not None:
            out["gait_index"] = float(self.gait_index)
        return out


def gaits_used(t: np.ndarray, gait_index: np.ndarray, names: tuple[str, ...]) -> list[dict]:
    """Each stretch of one dominant gait: [{"gait", "from_s", "to_s"}], in time order."""
    out: list[dict] = []
    if len(t) == 0:
        return out
    idx = np.asarray(gait_index).astype(int)
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    ends = np.r_[starts[1:], len(idx)]
    for s, e in zip(starts, ends, strict=True):
        out.append(
            {
                "gait": names[idx[s]],
                "from_s": round(float(t[s]), 3),
                "to_s": round(float(t[e - 1] if e == len(idx) else t[e]), 3),
            }
        )
    return out
