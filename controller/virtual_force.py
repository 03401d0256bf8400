"""Virtual forces: tau = J^T F, and gravity compensation of chains."""

from __future__ import annotations

import math

import numpy as np


def jt_force(jac_world: np.ndarray, force_world: np.ndarray) -> np.ndarray:
    """Joint torques (..., n) that make end points with Jacobians (..., 3, n) push with
    `force_world` (..., 3) [N] on what they touch: tau = J^T F."""
    return np.einsum("...in,...i->...n", jac_world, force_world)


def rotation_error(R_desired: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rotation vector [rad] (world frame) that turns R into R_desired."""
    return np.array(rotation_vector((R_desired @ R.T).tolist()))


def rotation_vector(e: list[list[float]]) -> list[float]:
    """Rotation vector [rad] of the rotation matrix whose rows are `e` (floats: indexing
    numpy scalars is slow); with e = R_desired R^T, rotation_error as a list (the
    controller's per-step path)."""
    cos_angle = 0.5 * (e[0][0] + e[1][1] + e[2][2] - 1.0)
    angle = float(np.arccos(min(max(cos_angle, -1.0), 1.0)))
    axis = (e[2][1] - e[1][2], e[0][2] - e[2][0], e[1][0] - e[0][1])
    s = math.sin(angle)
    scale = 0.5 if s < 1e-9 else angle / (2.0 * s)  # small angles: the skew part is the vector
    return [a * scale for a in axis]
