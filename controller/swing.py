"""Swing legs: where the foot lands, the path it takes there, and the foot angles around
lift-off and strike (toe-off and foot-strike anticipation)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def foot_placement(
    hip_ground: np.ndarray,
    v: np.ndarray,
    time_to_strike: np.ndarray,
    stance_time: np.ndarray,
    offset: np.ndarray,
    feedback: np.ndarray,
) -> np.ndarray:
    """Landing points (4, 2) [m], world horizontal axes.

    P = P_hip(at strike) + v * T_stance / 2 + offset + feedback: the hip carried forward to
    the expected strike, half a stance ahead so that the stance is centred under it, a
    nominal offset, and the paper's linear feedback (v - v_d) * s_fp (passed in as `feedback`).
    hip_ground: (4, 2) hip positions now [m]; v: (4, 2) leg-frame velocities [m/s];
    time_to_strike, stance_time: (4,) [s]; offset, feedback: (4, 2) [m].
    """
    return np.array(
        foot_placement_rows(
            *(
                np.asarray(a, dtype=float).tolist()
                for a in (hip_ground, v, time_to_strike, stance_time, offset, feedback)
            )
        )
    )


def foot_placement_rows(
    hip_ground: Sequence[Sequence[float]],
    v: Sequence[Sequence[float]],
    time_to_strike: Sequence[float],
    stance_time: Sequence[float],
    offset: Sequence[Sequence[float]],
    feedback: Sequence[Sequence[float]],
) -> list[list[float]]:
    """foot_placement in float math from per-leg lists, as lists (the control step's
    compiled controller.legchain.SwingPlan.place_feet does the same)."""
    landing = []
    for hip_k, v_k, t, t_stance, offset_k, feedback_k in zip(
        hip_ground, v, time_to_strike, stance_time, offset, feedback, strict=True
    ):
        ahead = t + 0.5 * t_stance  # how long the hip moves on: to the strike, half a stance
        landing.append(
            [
                h + v_i * ahead + o + fb
                for h, v_i, o, fb in zip(hip_k, v_k, offset_k, feedback_k, strict=True)
            ]
        )
    return landing


def swing_path(
    liftoff: np.ndarray,
    landing: np.ndarray,
    progress: np.ndarray,
    height: np.ndarray,
    ground: np.ndarray,
    touch_at: float = 0.85,
    reach_below_m: float = 0.02,
    shape: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
) -> np.ndarray:
    """Foot targets (4, 3) [m] along a swing: a smooth blend from the lift-off point to the
    landing point, lifted by height * sin(pi * u) (u = progress / touch_at; squared on the way
    down) so that it is back at the ground, slowly, at `touch_at` of the swing (the foot
    lags its target), then reaching
    `reach_below_m` under the ground by the end so that the foot strikes rather than hovers.

    liftoff, landing: (4, 2) [m]; progress: (4,) in [0, 1]; height, ground: (4,) [m];
    shape: per leg (4,) the lift skew k and the early reach r (None: 0), which add
    k * height * sin^2(pi u) cos(pi u) to the lift (k > 0: up early, down late) and
    r * sin^2(pi u) to the blend (r > 0: ahead early); both vanish at lift-off and landing.
    """
    n = len(progress)
    path = SwingPath(height, touch_at, reach_below_m, shape, n)
    return np.array(
        path(liftoff.tolist(), landing.tolist(), progress.tolist(), _per_leg(ground, n))
    )


class SwingPath:
    """`swing_path` for fixed heights, shapes, touch_at and reach (a gait's), in float math:
    the reference of the control step's compiled controller.legchain.SwingPlan, the same
    floats. n: the number of legs (height and shape may give one value for all)."""

    def __init__(
        self,
        height: np.ndarray | float,
        touch_at: float = 0.85,
        reach_below_m: float = 0.02,
        shape: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
        n: int = 4,
    ) -> None:
        self.touch_at, self.reach_below_m = touch_at, reach_below_m
        lift_skew, reach_early = shape
        self._height = _per_leg(height, n)
        self._skew = None if lift_skew is None else _per_leg(lift_skew * height, n)
        self._early = None if reach_early is None else _per_leg(reach_early, n)

    def __call__(
        self,
        liftoff: Sequence[Sequence[float]],
        landing: Sequence[Sequence[float]],
        progress: Sequence[float],
        ground: Sequence[float],
    ) -> list[list[float]]:
        """Foot targets [m], as `swing_path`, as a list of (x, y, z) per leg, from per-leg floats
        of lift-off and landing points, progress and ground."""
        # float math per leg (numpy's per-call cost dwarfs the arithmetic on four legs), in the
        # order of the whole-array expressions it stands for; math's sin and cos are libm's,
        # as numpy's float64 ones
        touch_at, reach_below_m = self.touch_at, self.reach_below_m
        u = [min(min(max(p, 0.0), 1.0) / touch_at, 1.0) for p in progress]
        pi_u = [math.pi * u_k for u_k in u]
        bump = [math.sin(a) for a in pi_u]
        n = len(u)
        skew = [None] * n if self._skew is None else self._skew
        cos_pi_u = [None] * n if self._skew is None else [math.cos(a) for a in pi_u]
        early = [None] * n if self._early is None else self._early
        out = []
        for p, u_k, b, k_h, c, r, start, end, h, g in zip(
            progress,
            u,
            bump,
            skew,
            cos_pi_u,
            early,
            liftoff,
            landing,
            self._height,
            ground,
            strict=True,
        ):
            s = min(max(p, 0.0), 1.0)
            blend = u_k * u_k * (3.0 - 2.0 * u_k)
            if r is not None:
                blend = blend + r * (b * b)
            lift = h * (b if u_k < 0.5 else b * b)
            if k_h is not None:
                lift = lift + k_h * (b * b * c)
            sink = -reach_below_m * max(s - touch_at, 0.0) / (1.0 - touch_at)
            out.append(
                [
                    start[0] + (end[0] - start[0]) * blend,
                    start[1] + (end[1] - start[1]) * blend,
                    g + lift + sink,
                ]
            )
        return out


def _per_leg(values: np.ndarray | float, n: int) -> list[float]:
    """`values` (one per leg, or one for all) as a list of n floats."""
    v = np.asarray(values, dtype=float)
    return v.tolist() if v.ndim else [float(v)] * n


def foot_angles(
    stance_value: np.ndarray,
    swing_value: np.ndarray,
    off_value: np.ndarray,
    strike_value: np.ndarray,
    swing_progress: np.ndarray,
    time_to_liftoff: np.ndarray,
    time_to_strike: np.ndarray,
    lead_off: np.ndarray,
    lead_strike: np.ndarray,
) -> np.ndarray:
    """An angle trajectory per leg [rad]: `stance_value` in stance, ramping linearly to
    `off_value` over the last `lead_off` [s] before lift-off (toe-off); in swing from the
    lift-off value through `swing_value` at mid-swing, then to `strike_value` over the last
    `lead_strike` [s] before the expected strike (foot-strike anticipation)."""
    angles = FootAngles(
        (lead_off, lead_strike), [(stance_value, swing_value, off_value, strike_value)]
    )
    return np.array(
        angles(swing_progress.tolist(), time_to_liftoff.tolist(), time_to_strike.tolist())[0]
    )


class FootAngles:
    """Angle trajectories (as `foot_angles`) of several joints that follow the same legs
    and leads, for fixed values (a gait's), in float math: the reference of the control
    step's compiled controller.legchain.SwingPlan, the same floats.

    leads: (lead_off, lead_strike) per leg [s]; joints: per joint, its (stance_value,
    swing_value, off_value, strike_value), each per leg [rad]."""

    def __init__(
        self, leads: tuple[np.ndarray, np.ndarray], joints: list[tuple[np.ndarray, ...]]
    ) -> None:
        lead_off, lead_strike = (np.asarray(lead, dtype=float) for lead in leads)
        # per leg: (span_off, on_off, span_strike, on_strike); a lead of 0 is a step
        self._legs = list(
            zip(
                np.maximum(lead_off, 1e-6).tolist(),
                (lead_off > 0).tolist(),
                np.maximum(lead_strike, 1e-6).tolist(),
                (lead_strike > 0).tolist(),
                strict=True,
            )
        )
        # per joint, per leg: (stance, swing, off, strike)
        self._values = [
            list(zip(*(np.asarray(v, dtype=float).tolist() for v in values), strict=True))
            for values in joints
        ]

    def __call__(
        self,
        swing_progress: Sequence[float],
        time_to_liftoff: Sequence[float],
        time_to_strike: Sequence[float],
    ) -> list[list[float]]:
        """Per joint, the angle of each leg [rad] (lists of floats), from per-leg floats."""
        angles: list[list[float]] = [[] for _ in self._values]  # per joint
        legs = zip(self._legs, swing_progress, time_to_liftoff, time_to_strike, strict=True)
        for k, ((span_off, on_off, span_strike, on_strike), sp, t_off, t_strike) in enumerate(legs):
            # the toe-off, mid-swing and strike blend weights
            ramp_off = min(max(1.0 - t_off / span_off, 0.0), 1.0) if on_off else 0.0
            s = min(max(sp, 0.0), 1.0)
            ramp_mid = min(max(2.0 * s, 0.0), 1.0)
            if on_strike:
                ramp_strike = min(max(1.0 - t_strike / span_strike, 0.0), 1.0)
            else:
                ramp_strike = 1.0 if s >= 1 else 0.0
            for joint, values in zip(angles, self._values, strict=True):
                stance, swing, off, strike = values[k]
                if sp >= 0.0:  # in swing: from toe-off through mid-swing to the strike
                    first_half = off + (swing - off) * ramp_mid
                    joint.append(first_half + (strike - first_half) * ramp_strike)
                else:  # in stance: ramping to toe-off
                    joint.append(stance + (off - stance) * ramp_off)
        return angles
