"""Virtual forces: tau = J^T F, and gravity compensation of chains."""

from __future__ import annotations

import math

import numpy as np


def jt_force(jac_world: np.ndarray, force_world: np.ndarray) -> np.ndarray:
    """Joint torques (..., n) that make end points with Jacobians (..., 3, n) push with
    `force_world` (..., 3) [N] on what they touch: tau = J^T F."""
    jac = np.asarray(jac_world, dtype=float)
    force = np.asarray(force_world, dtype=float)
    rows = [
        jt_force_row(J, F)
        for J, F in zip(
            jac.reshape(-1, 3, jac.shape[-1]).tolist(), force.reshape(-1, 3).tolist(), strict=True
        )
    ]
    return np.array(rows).reshape(jac.shape[:-2] + jac.shape[-1:])


def jt_force_row(jac: list[list[float]], force: list[float]) -> list[float]:
    """jt_force of one end point in float math: Jacobian rows (3 x n) and force as floats
    (the control step does this compiled: controller.legchain.LegChains.leg_torques). Each
    sum, in einsum's order, is added to 0.0 (-0.0 becomes 0.0, as in an array of zeros)."""
    fx, fy, fz = force
    return [0.0 + (jx * fx + jy * fy + jz * fz) for jx, jy, jz in zip(*jac, strict=True)]


def rotation_error(R_desired: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rotation vector [rad] (world frame) that turns R into R_desired."""
    return np.array(rotation_vector((R_desired @ R.T).tolist()))


def rotation_vector(e: list[list[float]]) -> list[float]:
    """Rotation vector [rad] of the rotation matrix whose rows are `e` (floats: indexing
    numpy scalars is slow); with e = R_desired R^T, rotation_error as a list (the control
    step's compiled controller.legchain.LegFrames does the same)."""
    cos_angle = 0.5 * (e[0][0] + e[1][1] + e[2][2] - 1.0)
    angle = math.acos(min(max(cos_angle, -1.0), 1.0))  # libm's, as numpy's
    axis = (e[2][1] - e[1][2], e[0][2] - e[2][0], e[1][0] - e[0][1])
    s = math.sin(angle)
    scale = 0.5 if s < 1e-9 else angle / (2.0 * s)  # small angles: the skew part is the vector
    return [a * scale for a in axis]
