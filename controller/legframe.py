"""Leg frames (front: chest, back: pelvis): the virtual force and torque each frame wants,
and how its stance legs share them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def frame_force(
    height_error: float,
    vertical_speed: float,
    horizontal_force: np.ndarray,
    weight: float,
    kp_h: float,
    kd_h: float,
    max_pull: float = math.inf,
) -> np.ndarray:
    """Virtual force [N] (world) on a leg frame: the horizontal force (k_v times the velocity
    error), a height PD [N/m, N*s/m] and the weight [N] the frame carries. Its vertical part
    pulls the frame down by at most `max_pull` [N]: the stance feet would have to pull on
    the ground, and a foot asked to pull lifts off."""
    return np.array(
        frame_force_floats(
            height_error, vertical_speed, horizontal_force, weight, kp_h, kd_h, max_pull
        )
    )


def frame_force_floats(
    height_error: float,
    vertical_speed: float,
    horizontal_force: Sequence[float],
    weight: float,
    kp_h: float,
    kd_h: float,
    max_pull: float = math.inf,
) -> list[float]:
    """frame_force as a list of floats (the control step's compiled
    controller.legchain.LegFrames does the same)."""
    fx, fy = horizontal_force
    return [fx, fy, max(kp_h * height_error - kd_h * vertical_speed + weight, -max_pull)]


def yaw_forces(yaw_torque: float, lever_xy: np.ndarray, stance: np.ndarray) -> np.ndarray:
    """Horizontal forces (k, 3) [N] at the stance feet that turn their frame by `yaw_torque`
    [N*m] about the vertical: f_i = tau z x r_i / sum |r_i|^2 (r_i: frame to foot)."""
    rows = yaw_force_rows(yaw_torque, lever_xy.tolist(), stance.tolist())
    return np.array(rows, dtype=float).reshape(len(stance), 3)


def yaw_force_rows(
    yaw_torque: float, lever_xy: list[list[float]], stance: list[bool]
) -> list[list[float]]:
    """yaw_forces as lists of floats (the control step's compiled
    controller.legchain.LegFrames does the same)."""
    # float math: a frame has two feet, and numpy's per-call cost dwarfs the arithmetic
    out = [[0.0, 0.0, 0.0] for _ in stance]
    legs = [k for k, on in enumerate(stance) if on]
    denom = 0.0
    for k in legs:
        x, y = lever_xy[k]
        denom += x * x
        denom += y * y
    if denom < 1e-6:
        return out
    for k in legs:
        x, y = lever_xy[k]
        out[k][0] = -yaw_torque * y / denom
        out[k][1] = yaw_torque * x / denom
    return out


def share_frame_torque(
    torque_world: np.ndarray,
    hip_axes_world: np.ndarray,
    stance: np.ndarray,
) -> np.ndarray:
    """Hip roll and pitch torques (k, 2) [N*m] of a frame's legs so that the stance hips
    together turn the frame by `torque_world` (a joint torque acts with the opposite sign
    on the frame, its parent): tau_stance_i = -(a . tau_LF) / N_stance. Swing legs get 0.
    hip_axes_world: (k, 2, 3) roll and pitch axes. Leading axes are frames: torque_world
    (..., 3), hip_axes_world (..., k, 2, 3) and stance (..., k) give (..., k, 2)."""
    stance = np.asarray(stance, dtype=bool)
    n_legs = stance.shape[-1]
    rows = share_frame_torque_rows(
        np.asarray(torque_world, dtype=float).reshape(-1, 3),
        np.asarray(hip_axes_world, dtype=float).reshape(-1, n_legs, 2, 3),
        stance.reshape(-1, n_legs).tolist(),
    )
    return np.array(rows).reshape(*stance.shape, 2)


def share_frame_torque_rows(
    torque_world: np.ndarray, hip_axes_world: np.ndarray, stance: list[list[bool]]
) -> list[list[float]]:
    """share_frame_torque of F frames, (frame, its legs, ...), as one list of (roll, pitch)
    floats per leg (the control step's compiled controller.legchain.LegChains.leg_torques
    does the same). -(x / n) exactly: a division's rounding is symmetric in sign."""
    along_axes = np.einsum("...kaj,...j->...ka", hip_axes_world, torque_world).tolist()
    out = []
    for legs, on_legs in zip(along_axes, stance, strict=True):
        n_stance = max(sum(on_legs), 1)
        out += [
            [a / -n_stance for a in axes] if on else [0.0, 0.0]
            for axes, on in zip(legs, on_legs, strict=True)
        ]
    return out
