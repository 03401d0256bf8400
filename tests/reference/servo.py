"""The joint servo: PD with implicit damping, solved as a linear system."""

from __future__ import annotations

import numpy as np


def implicit_pd(
    q: np.ndarray,
    qd: np.ndarray,
    tau_prev: np.ndarray,
    tau_ff: np.ndarray,
    q_target: np.ndarray,
    qd_target: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    mobility: np.ndarray,
    h: float,
    limit: np.ndarray,
) -> np.ndarray:
    """Joint torques [N*m] tau with tau = tau_ff + kp (q_target - (q + h qd))
    + kd (qd_target - (qd + h qdd)), where the acceleration qdd = mobility (tau - tau_prev)
    is the one the change of torque causes; clipped to +-limit."""
    explicit = tau_ff + kp * (q_target - q - h * qd) + kd * (qd_target - qd)
    system = np.eye(len(q)) + h * kd[:, None] * mobility
    tau = np.linalg.solve(system, explicit + h * kd * (mobility @ tau_prev))
    return np.clip(tau, -limit, limit)
