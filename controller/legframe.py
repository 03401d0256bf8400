"""Leg frames (front: chest, back: pelvis): the virtual force and torque each frame wants,
and how its stance legs share them."""

from __future__ import annotations

import numpy as np


def frame_force(
    height_error: float,
    vertical_speed: float,
    horizontal_force: np.ndarray,
    weight: float,
    kp_h: float,
    kd_h: float,
) -> np.ndarray:
    """Virtual force [N] (world) on a leg frame: the horizontal force (k_v times the velocity
    error), a height PD [N/m, N*s/m] and the weight [N] the frame carries."""
    f = np.empty(3)
    f[:2] = horizontal_force
    f[2] = kp_h * height_error - kd_h * vertical_speed + weight
    return f


def yaw_forces(yaw_torque: float, lever_xy: np.ndarray, stance: np.ndarray) -> np.ndarray:
    """Horizontal forces (k, 3) [N] at the stance feet that turn their frame by `yaw_torque`
    [N*m] about the vertical: f_i = tau z x r_i / sum |r_i|^2 (r_i: frame to foot)."""
    out = np.zeros((len(stance), 3))
    # float math: a frame has two feet, and numpy's per-call cost dwarfs the arithmetic
    legs = [k for k, on in enumerate(stance.tolist()) if on]
    lever = lever_xy.tolist()
    denom = 0.0
    for k in legs:
        x, y = lever[k]
        denom += x * x
        denom += y * y
    if denom < 1e-6:
        return out
    for k in legs:
        x, y = lever[k]
        out[k, 0] = -yaw_torque * y / denom
        out[k, 1] = yaw_torque * x / denom
    return out


def share_frame_torque(
    torque_world: np.ndarray,
    hip_axes_world: np.ndarray,
    stance: np.ndarray,
) -> np.ndarray:
    """Hip roll and pitch torques (k, 2) [N*m] of a frame's legs so that the stance hips
    together turn the frame by `torque_world` (a joint torque acts with the opposite sign
    on the frame, its parent): tau_stance_i = -(a . tau_LF) / N_stance. Swing legs get 0.
    hip_axes_world: (k, 2, 3) roll and pitch axes."""
    out = np.zeros((len(stance), 2))
    n = int(np.count_nonzero(stance))
    if n:
        out[stance] = -np.einsum("kaj,j->ka", hip_axes_world[stance], torque_world) / n
    return out
