"""Swing legs: where the foot lands, the path it takes there, and the foot angles around
lift-off and strike (toe-off and foot-strike anticipation)."""

from __future__ import annotations

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
    ahead = hip_ground + v * (time_to_strike + 0.5 * stance_time)[:, None]
    return ahead + offset + feedback


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
    # float math per leg (numpy's per-call cost dwarfs the arithmetic on four legs), in the
    # order of the whole-array expressions it stands for; sin and cos stay numpy's
    u = [min(min(max(p, 0.0), 1.0) / touch_at, 1.0) for p in progress.tolist()]
    pi_u = np.pi * np.array(u)
    bump = np.sin(pi_u).tolist()
    lift_skew, reach_early = shape
    n = len(u)
    skew = [None] * n if lift_skew is None else _per_leg(lift_skew * height, n)
    cos_pi_u = [None] * n if lift_skew is None else np.cos(pi_u).tolist()
    early = [None] * n if reach_early is None else _per_leg(reach_early, n)
    out = []
    for p, u_k, b, k_h, c, r, start, end, h, g in zip(
            progress.tolist(), u, bump, skew, cos_pi_u, early, liftoff.tolist(),
            landing.tolist(), _per_leg(height, n), _per_leg(ground, n), strict=True):  # fmt: skip
        s = min(max(p, 0.0), 1.0)
        blend = u_k * u_k * (3.0 - 2.0 * u_k)
        if r is not None:
            blend = blend + r * (b * b)
        lift = h * (b if u_k < 0.5 else b * b)
        if k_h is not None:
            lift = lift + k_h * (b * b * c)
        sink = -reach_below_m * max(s - touch_at, 0.0) / (1.0 - touch_at)
        out.append([start[0] + (end[0] - start[0]) * blend,
                    start[1] + (end[1] - start[1]) * blend, g + lift + sink])  # fmt: skip
    return np.array(out)


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
    ramps = foot_angle_ramps(swing_progress, time_to_liftoff, time_to_strike, lead_off,
                             lead_strike)  # fmt: skip
    return blend_foot_angles(ramps, stance_value, swing_value, off_value, strike_value)


FootRamps = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def foot_angle_ramps(
    swing_progress: np.ndarray,
    time_to_liftoff: np.ndarray,
    time_to_strike: np.ndarray,
    lead_off: np.ndarray,
    lead_strike: np.ndarray,
) -> FootRamps:
    """The timing half of `foot_angles` (shared by every angle that follows the same legs):
    in swing, and the toe-off, mid-swing and strike blend weights in [0, 1]."""
    return FootRampTiming(lead_off, lead_strike).ramps(swing_progress, time_to_liftoff,
                                                       time_to_strike)  # fmt: skip


class FootRampTiming:
    """`foot_angle_ramps` for fixed leads (a gait's): what depends on the leads alone is
    worked out once, since the controller evaluates the ramps every step."""

    def __init__(self, lead_off: np.ndarray, lead_strike: np.ndarray) -> None:
        self.off_span, self.off_on = np.maximum(lead_off, 1e-6), lead_off > 0
        self.strike_span, self.strike_on = np.maximum(lead_strike, 1e-6), lead_strike > 0

    def ramps(self, swing_progress: np.ndarray, time_to_liftoff: np.ndarray,
              time_to_strike: np.ndarray) -> FootRamps:  # fmt: skip
        """As foot_angle_ramps."""
        in_swing = swing_progress >= 0.0
        ramp_off = _unit_clip(1.0 - time_to_liftoff / self.off_span)
        ramp_off = np.where(self.off_on, ramp_off, 0)
        s = _unit_clip(swing_progress)
        ramp_mid = _unit_clip(2.0 * s)
        ramp_strike = _unit_clip(1.0 - time_to_strike / self.strike_span)
        ramp_strike = np.where(self.strike_on, ramp_strike, s >= 1)
        return in_swing, ramp_off, ramp_mid, ramp_strike


class FootAngles:
    """Angle trajectories (as `foot_angles`) of several joints that follow the same legs
    and leads, for fixed values (a gait's): the controller evaluates them every step, in
    float math (numpy's per-call cost dwarfs the arithmetic on four legs; the same floats).

    leads: (lead_off, lead_strike) per leg [s]; joints: per joint, its (stance_value,
    swing_value, off_value, strike_value), each per leg [rad]."""

    def __init__(self, leads: tuple[np.ndarray, np.ndarray],
                 joints: list[tuple[np.ndarray, ...]]) -> None:  # fmt: skip
        timing = FootRampTiming(*leads)
        # per leg: (span_off, on_off, span_strike, on_strike)
        self._legs = list(zip(timing.off_span.tolist(), timing.off_on.tolist(),
                              timing.strike_span.tolist(), timing.strike_on.tolist(),
                              strict=True))  # fmt: skip
        # per joint, per leg: (stance, swing, off, strike)
        self._values = [list(zip(*(np.asarray(v, dtype=float).tolist() for v in values),
                                 strict=True)) for values in joints]  # fmt: skip

    def __call__(self, swing_progress: np.ndarray, time_to_liftoff: np.ndarray,
                 time_to_strike: np.ndarray) -> list[list[float]]:  # fmt: skip
        """Per joint, the angle of each leg [rad] (lists of floats)."""
        ramps = []  # per leg, the same operations as foot_angle_ramps
        legs = zip(self._legs, swing_progress.tolist(), time_to_liftoff.tolist(),
                   time_to_strike.tolist(), strict=True)  # fmt: skip
        for (span_off, on_off, span_strike, on_strike), sp, t_off, t_strike in legs:
            ramp_off = min(max(1.0 - t_off / span_off, 0.0), 1.0) if on_off else 0.0
            s = min(max(sp, 0.0), 1.0)
            ramp_mid = min(max(2.0 * s, 0.0), 1.0)
            if on_strike:
                ramp_strike = min(max(1.0 - t_strike / span_strike, 0.0), 1.0)
            else:
                ramp_strike = 1.0 if s >= 1 else 0.0
            ramps.append((sp >= 0.0, ramp_off, ramp_mid, ramp_strike))
        return [[_blend(leg_ramps, *leg_values)
                 for leg_ramps, leg_values in zip(ramps, values, strict=True)]
                for values in self._values]  # fmt: skip


def _blend(ramps: tuple[bool, float, float, float], stance: float, swing: float, off: float,
           strike: float) -> float:  # fmt: skip
    """One leg's blend_foot_angles, in float math."""
    in_swing, ramp_off, ramp_mid, ramp_strike = ramps
    if not in_swing:
        return stance + (off - stance) * ramp_off
    first_half = off + (swing - off) * ramp_mid
    return first_half + (strike - first_half) * ramp_strike


def _unit_clip(x: np.ndarray) -> np.ndarray:
    """x.clip(0.0, 1.0) without ndarray.clip's Python-level wrapper (the same floats for
    every x but -0.0, which the ramps never produce)."""
    return np.minimum(np.maximum(x, 0.0), 1.0)


def blend_foot_angles(
    ramps: FootRamps,
    stance_value: np.ndarray,
    swing_value: np.ndarray,
    off_value: np.ndarray,
    strike_value: np.ndarray,
) -> np.ndarray:
    """The angles of `foot_angles` from its `foot_angle_ramps`."""
    in_swing, ramp_off, ramp_mid, ramp_strike = ramps
    stance_angle = stance_value + (off_value - stance_value) * ramp_off
    first_half = off_value + (swing_value - off_value) * ramp_mid
    swing_angle = first_half + (strike_value - first_half) * ramp_strike
    return np.where(in_swing, swing_angle, stance_angle)
