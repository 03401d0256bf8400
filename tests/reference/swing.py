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
    """Landing points (4, 2) [m]: the hip carried on to the strike and half a stance beyond
    (the stance centred under it), a nominal offset, and the feedback (v - v_d) s_fp."""
    ahead = np.asarray(time_to_strike) + 0.5 * np.asarray(stance_time)
    return hip_ground + v * ahead[:, None] + offset + feedback


def swing_path(
    liftoff: np.ndarray,
    landing: np.ndarray,
    progress: np.ndarray,
    height: np.ndarray | float,
    ground: np.ndarray | float,
    touch_at: float = 0.85,
    reach_below_m: float = 0.02,
    shape: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
) -> np.ndarray:
    """Foot targets (4, 3) [m] along a swing: a smoothstep blend from lift-off to landing,
    lifted by height sin(pi u) (squared on the way down), u = progress / touch_at; back at the
    ground at `touch_at`, then reaching `reach_below_m` under it by the end. shape: the lift
    skew k and early reach r per leg (None: 0), adding k h sin^2 cos (pi u) to the lift and
    r sin^2(pi u) to the blend."""
    skew, early = (np.zeros(len(progress)) if a is None else np.asarray(a) for a in shape)
    s = np.clip(progress, 0.0, 1.0)
    u = np.minimum(s / touch_at, 1.0)
    bump = np.sin(np.pi * u)
    blend = u * u * (3.0 - 2.0 * u) + early * bump**2
    lift = height * np.where(u < 0.5, bump, bump**2) + skew * height * bump**2 * np.cos(np.pi * u)
    sink = -reach_below_m * np.maximum(s - touch_at, 0.0) / (1.0 - touch_at)
    xy = liftoff + (np.asarray(landing) - liftoff) * blend[:, None]
    return np.column_stack([xy, ground + lift + sink])


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
    """An angle per leg [rad]: `stance_value` in stance, ramping to `off_value` over the last
    `lead_off` [s] before lift-off; in swing from there through `swing_value` at mid-swing
    to `strike_value` over the last `lead_strike` [s] before the strike (a lead of 0: a
    step). swing_progress < 0 means stance."""
    lead_off, lead_strike = np.asarray(lead_off), np.asarray(lead_strike)
    s = np.clip(swing_progress, 0.0, 1.0)
    ramp_off = np.where(
        lead_off > 0, np.clip(1 - time_to_liftoff / np.maximum(lead_off, 1e-6), 0, 1), 0.0
    )
    ramp_strike = np.where(
        lead_strike > 0,
        np.clip(1 - time_to_strike / np.maximum(lead_strike, 1e-6), 0, 1),
        (s >= 1).astype(float),
    )
    first_half = off_value + (swing_value - off_value) * np.clip(2 * s, 0, 1)
    in_swing = first_half + (strike_value - first_half) * ramp_strike
    in_stance = stance_value + (off_value - stance_value) * ramp_off
    return np.where(np.asarray(swing_progress) >= 0, in_swing, in_stance)
