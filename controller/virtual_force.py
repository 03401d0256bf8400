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
    angle = np.arccos(min(max(0.5 * (np.trace(E) - 1.0), -1.0), 1.0))
    e = E.tolist()  # float math: indexing numpy scalars is slow
    axis = np.array([e[2][1] - e[1][2], e[0][2] - e[2][0], e[1][0] - e[0][1]])
    s = np.sin(angle)
    if s < 1e-9:
        return 0.5 * axis  # small angles: the skew part is the rotation vector
    return axis * (angle / (2.0 * s))
