"""The spine: the orientation difference between the leg frames, split evenly along the
spine joints (quaternions), as pitch/yaw PD targets."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from quadsim.controller.kinematics import quat_rows

# Float math throughout (numpy's per-call cost dwarfs the arithmetic on four numbers); the
# sines, cosines and arctangents are math's (libm's, as numpy's float64 ones: the same
# floats).


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of quaternions in xyzw order."""
    return np.array(_multiply(np.asarray(a).tolist(), np.asarray(b).tolist()))


def _multiply(a: Sequence[float], b: Sequence[float]) -> list[float]:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return np.array([-q[0], -q[1], -q[2], q[3]])


def quat_from_pitch_yaw(pitch: float, yaw: float) -> np.ndarray:
    """Rotation yaw about z after pitch about y (R = Rz(yaw) Ry(pitch)), xyzw."""
    return np.array(pitch_yaw_quat(pitch, np.cos(yaw / 2), np.sin(yaw / 2)))


def pitch_yaw_quat(pitch: float, cos_half_yaw: float, sin_half_yaw: float) -> list[float]:
    """quat_from_pitch_yaw as floats, given the cosine and sine of half the yaw (shared by
    several orientations of one heading)."""
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = float(cos_half_yaw), float(sin_half_yaw)
    return [-sy * sp, cy * sp, sy * cp, cy * cp]


def quat_power(q: np.ndarray, fraction: float) -> np.ndarray:
    """q^fraction: the same axis, `fraction` of the angle (shortest way)."""
    return np.array(_power(np.asarray(q, dtype=float).tolist(), fraction))


def _power(q: Sequence[float], fraction: float) -> list[float]:
    x, y, z, w = q if q[3] >= 0 else [-v for v in q]
    # what np.linalg.norm computes: numpy's dot product of three sums its terms in order
    norm = math.sqrt(x * x + y * y + z * z)
    angle = 2.0 * math.atan2(norm, w)
    if angle < 1e-12:
        return [0.0, 0.0, 0.0, 1.0]
    half = 0.5 * angle * fraction
    s = math.sin(half)
    return [x / norm * s, y / norm * s, z / norm * s, math.cos(half)]


def split_spine(
    q_back: np.ndarray | Sequence[float], q_front: np.ndarray | Sequence[float], n_joints: int
) -> np.ndarray:
    """Pitch and yaw targets (n_joints, 2) [rad] that turn the back leg frame's orientation
    `q_back` into the front's `q_front` (xyzw) in `n_joints` equal rotations, each joint
    rotating pitch (about its y) then yaw (about its z)."""
    bx, by, bz, bw = (float(v) for v in q_back)
    rel = _multiply((-bx, -by, -bz, bw), [float(v) for v in q_front])
    step = _power(rel, 1.0 / n_joints)
    # decompose R = Ry(pitch) Rz(yaw): the spine joints apply pitch first, then yaw
    R = quat_rows(*step)
    yaw = math.asin(min(max(R[1][0], -1.0), 1.0))
    pitch = math.atan2(-R[2][0], R[0][0])
    return np.array([[pitch, yaw]] * n_joints)
