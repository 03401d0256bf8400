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
    s = progress.clip(0.0, 1.0)
    u = np.minimum(s / touch_at, 1.0)
    blend = u * u * (3.0 - 2.0 * u)
    bump = np.sin(np.pi * u)
    lift_skew, reach_early = shape
    if reach_early is not None:
        blend = blend + reach_early * (bump * bump)
    out = np.empty((len(progress), 3))
    out[:, :2] = liftoff + (landing - liftoff) * blend[:, None]
    # up briskly (no scuffing at toe-off), down softly (zero vertical speed at the strike)
    lift = height * np.where(u < 0.5, bump, bump * bump)
    if lift_skew is not None:
        lift = lift + (lift_skew * height) * (bump * bump * np.cos(np.pi * u))
    sink = -reach_below_m * np.maximum(s - touch_at, 0.0) / (1.0 - touch_at)
    out[:, 2] = ground + lift + sink
    return out


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
    in_swing = swing_progress >= 0.0
    ramp_off = (1.0 - time_to_liftoff / np.maximum(lead_off, 1e-6)).clip(0.0, 1.0)
    ramp_off = np.where(lead_off > 0, ramp_off, 0)
    s = swing_progress.clip(0.0, 1.0)
    ramp_mid = (2.0 * s).clip(0.0, 1.0)
    ramp_strike = (1.0 - time_to_strike / np.maximum(lead_strike, 1e-6)).clip(0.0, 1.0)
    ramp_strike = np.where(lead_strike > 0, ramp_strike, s >= 1)
    return in_swing, ramp_off, ramp_mid, ramp_strike


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
