"""Leg frames (front: chest, back: pelvis): the virtual force and torque each wants, and how
its stance legs share them."""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation


def frame_force(
    height_error: float,
    vertical_speed: float,
    horizontal_force: np.ndarray,
    weight: float,
    kp_h: float,
    kd_h: float,
    max_pull: float = math.inf,
) -> np.ndarray:
    """Virtual force [N] on a leg frame: the horizontal force, a height PD plus the weight
    the frame carries, pulling the frame down by at most `max_pull` [N]."""
    vertical = max(kp_h * height_error - kd_h * vertical_speed + weight, -max_pull)
    return np.array([*horizontal_force, vertical], dtype=float)


def yaw_forces(yaw_torque: float, lever_xy: np.ndarray, stance: np.ndarray) -> np.ndarray:
    """Horizontal forces (k, 3) [N] at the stance feet that turn their frame by `yaw_torque`
    [N*m]: f_i = tau z x r_i / sum |r_i|^2 (r_i: frame to foot)."""
    lever = np.asarray(lever_xy, dtype=float) * np.asarray(stance, dtype=bool)[:, None]
    denom = np.sum(lever**2)
    forces = np.zeros((len(stance), 3))
    if denom >= 1e-6:
        forces[:, 0], forces[:, 1] = -yaw_torque * lever[:, 1], yaw_torque * lever[:, 0]
        forces /= denom
    return forces


def share_frame_torque(
    torque_world: np.ndarray, hip_axes_world: np.ndarray, stance: np.ndarray
) -> np.ndarray:
    """Hip roll and pitch torques (..., k, 2) [N*m] with which a frame's stance hips together
    turn it by `torque_world` (..., 3): a joint acts with the opposite sign on its parent, so
    tau_i = -(a . tau) / n_stance; swing legs get 0. hip_axes_world: (..., k, 2, 3)."""
    stance = np.asarray(stance, dtype=bool)
    n_stance = np.maximum(stance.sum(axis=-1), 1)[..., None, None]
    along = np.einsum("...kaj,...j->...ka", hip_axes_world, torque_world)
    return -along / n_stance * stance[..., None]


def rotation_error(R_desired: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rotation vector [rad] (world frame) that turns R into R_desired."""
    return Rotation.from_matrix(R_desired @ R.T).as_rotvec()
