"""Virtual forces: tau = J^T F, and gravity compensation of chains."""

from __future__ import annotations

import numpy as np


def jt_force(jac_world: np.ndarray, force_world: np.ndarray) -> np.ndarray:
    """Joint torques (..., n) that make end points with Jacobians (..., 3, n) push with
    `force_world` (..., 3) [N] on what they touch: tau = J^T F."""
    return np.einsum("...in,...i->...n", jac_world, force_world)


def rotation_error(R_desired: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rotation vector [rad] (world frame) that turns R into R_desired."""
    E = R_desired @ R.T
    angle = np.arccos(np.clip(0.5 * (np.trace(E) - 1.0), -1.0, 1.0))
    axis = np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])
    s = np.sin(angle)
    if s < 1e-9:
        return 0.5 * axis  # small angles: the skew part is the rotation vector
    return axis * (angle / (2.0 * s))
