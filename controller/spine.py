"""The spine: the orientation difference between the leg frames, split evenly along the
spine joints (quaternions), as pitch/yaw PD targets."""

from __future__ import annotations

import numpy as np

from controller.kinematics import quat_rows


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions in xyzw order."""
    ax, ay, az, aw = np.asarray(a).tolist()  # float math: numpy scalars are slow
    bx, by, bz, bw = np.asarray(b).tolist()
    return np.array([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ])  # fmt: skip


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return np.array([-q[0], -q[1], -q[2], q[3]])


def quat_from_pitch_yaw(pitch: float, yaw: float) -> np.ndarray:
    """Rotation yaw about z after pitch about y (R = Rz(yaw) Ry(pitch)), xyzw."""
    cp, sp, cy, sy = np.cos(pitch / 2), np.sin(pitch / 2), np.cos(yaw / 2), np.sin(yaw / 2)
    return np.array([-sy * sp, cy * sp, sy * cp, cy * cp])


def quat_power(q: np.ndarray, fraction: float) -> np.ndarray:
    """q^fraction: the same axis, `fraction` of the angle (shortest way)."""
    q = q if q[3] >= 0 else -q
    norm = np.linalg.norm(q[:3])
    angle = 2.0 * np.arctan2(norm, q[3])
    if angle < 1e-12:
        return np.array([0.0, 0.0, 0.0, 1.0])
    half = 0.5 * angle * fraction
    out = np.empty(4)
    out[:3] = q[:3] / norm * np.sin(half)
    out[3] = np.cos(half)
    return out


def split_spine(q_back: np.ndarray, q_front: np.ndarray, n_joints: int) -> np.ndarray:
    """Pitch and yaw targets (n_joints, 2) [rad] that turn the back leg frame's orientation
    `q_back` into the front's `q_front` (xyzw) in `n_joints` equal rotations, each joint
    rotating pitch (about its y) then yaw (about its z)."""
    rel = quat_multiply(quat_conjugate(q_back), q_front)
    step = quat_power(rel, 1.0 / n_joints)
    # decompose R = Ry(pitch) Rz(yaw): the spine joints apply pitch first, then yaw
    R = quat_rows(*step.tolist())
    yaw = np.arcsin(min(max(R[1][0], -1.0), 1.0))
    pitch = np.arctan2(-R[2][0], R[0][0])
    return np.array([[pitch, yaw]] * n_joints)
