"""DogState: one snapshot of everything the controller reads, taken once per step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class DogState:
    """World frame, z up, SI units. Feet in the order LF, RF, LH, RH.

    q, qd: joint angles [rad] and rates [rad/s] in Skeleton.joint_names order.
    base_*: the pelvis (the back leg frame): position [m], quaternion xyzw, velocity [m/s],
    angular velocity [rad/s]. link_*: the links named in link_names (World.TRACKED_LINKS),
    frame position [m], quaternion xyzw, velocity [m/s], angular velocity [rad/s].
    foot_pos: foot sphere centres [m].
    """

    t: float
    q: np.ndarray
    qd: np.ndarray
    base_pos: np.ndarray
    base_quat: np.ndarray
    base_vel: np.ndarray
    base_angvel: np.ndarray
    link_names: tuple[str, ...]
    link_pos: np.ndarray
    link_quat: np.ndarray
    link_vel: np.ndarray
    link_angvel: np.ndarray
    foot_pos: np.ndarray
    foot_contact: np.ndarray
    torso_contact: bool

    def link_index(self, name: str) -> int:
        return self.link_names.index(name)
