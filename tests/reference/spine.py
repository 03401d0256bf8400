"""The spine: the rotation between the leg frames' orientations, split into equal joint
rotations (scipy's rotations, independent of the kernel's quaternion arithmetic)."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def quat_from_pitch_yaw(pitch: float, yaw: float) -> np.ndarray:
    """Rotation yaw about z after pitch about y (R = Rz(yaw) Ry(pitch)), xyzw."""
    return Rotation.from_euler("ZY", [yaw, pitch]).as_quat()


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rotation a then b in a's frame (Hamilton product a b), xyzw."""
    return (Rotation.from_quat(a) * Rotation.from_quat(b)).as_quat()


def split_spine(q_back: np.ndarray, q_front: np.ndarray, n_joints: int) -> np.ndarray:
    """Pitch and yaw targets (n_joints, 2) [rad] of n_joints equal rotations that turn the
    back frame's orientation into the front's; each joint pitches (about y), then yaws."""
    relative = Rotation.from_quat(q_back).inv() * Rotation.from_quat(q_front)
    step = Rotation.from_rotvec(relative.as_rotvec() / n_joints)
    # R = Ry(pitch) Rz(yaw) Rx(roll): the joints cannot roll, so the roll is dropped
    pitch, yaw, _ = step.as_euler("YZX")
    return np.tile([pitch, yaw], (n_joints, 1))
