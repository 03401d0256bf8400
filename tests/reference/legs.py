"""The legs: analytic IK (hip roll, then the two-link law of cosines in the leg plane) and
virtual forces through the Jacobian transpose."""

from __future__ import annotations

import numpy as np


def leg_ik(
    foot_target: np.ndarray,
    hip: np.ndarray,
    lengths: np.ndarray,
    cannon_pitch: np.ndarray,
    toe_pitch: np.ndarray,
    bend: np.ndarray,
    max_reach: float = 0.995,
) -> np.ndarray:
    """Joint angles (4, 5) [rad]: roll, pitch, knee/elbow, hock/wrist, toe of each leg.

    foot_target, hip: (4, 3) [m] in leg-frame coordinates; lengths: (4, 4) upper, lower,
    cannon, toe [m]; cannon_pitch, toe_pitch: (4,) absolute pitch [rad] in the leg plane
    (0 hanging down, positive swung back); bend: (4,) sign of the knee/elbow angle."""
    d = np.asarray(foot_target, dtype=float) - hip
    roll = np.arctan2(d[:, 1], -d[:, 2])
    upper, lower, cannon, toe = np.asarray(lengths, dtype=float).T
    # the point the two-link chain must reach: the foot less the cannon and toe segments,
    # in the rolled leg plane ("down" below the hip, "back" behind it)
    down = np.hypot(d[:, 1], d[:, 2]) - cannon * np.cos(cannon_pitch) - toe * np.cos(toe_pitch)
    back = -d[:, 0] - cannon * np.sin(cannon_pitch) - toe * np.sin(toe_pitch)
    reach = np.clip(np.hypot(down, back), abs(upper - lower), max_reach * (upper + lower))
    cos_knee = (reach**2 - upper**2 - lower**2) / (2.0 * upper * lower)
    knee = bend * np.arccos(np.clip(cos_knee, -1.0, 1.0))
    # the upper segment points at the target, turned back by the triangle's angle at the hip
    tilt = np.arctan2(lower * np.sin(knee), upper + lower * np.cos(knee))
    pitch = np.angle(np.exp(1j * (np.arctan2(back, down) - tilt)))
    return np.stack([roll, pitch, knee, cannon_pitch - pitch - knee, toe_pitch - cannon_pitch], 1)


def jt_force(jac_world: np.ndarray, force_world: np.ndarray) -> np.ndarray:
    """Joint torques (..., n) that make end points with Jacobians (..., 3, n) push with
    `force_world` (..., 3) [N]: tau = J^T F."""
    return np.einsum("...ij,...i->...j", jac_world, force_world)
