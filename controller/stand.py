"""Standing: PD toward the standing pose plus gravity compensation through the legs."""

from __future__ import annotations

import numpy as np

from quadsim.controller.kinematics import LegKinematics, quat_to_matrix
from quadsim.controller.pd import ServoCommand, gain_arrays
from quadsim.controller.state import DogState
from quadsim.models import FORE, GRAVITY_MPS2, LEGS, Skeleton


def leg_kinematics(skeleton: Skeleton) -> tuple[LegKinematics, np.ndarray]:
    """The four legs' kinematics, and their joint indices (4, 5) into the joint vector."""
    hips, lengths, idx = [], [], []
    for leg in LEGS:
        lm = skeleton.legs[leg]
        hips.append(skeleton.link(lm.links[0]).origin)
        lengths.append(lm.lengths)
        idx.append([skeleton.joint_index(j) for j in lm.joints])
    return LegKinematics(np.array(hips), np.array(lengths)), np.array(idx)


class StandController:
    """Holds the standing pose: joint PD plus each foot pushing down its share of the weight."""

    def __init__(self, skeleton: Skeleton, front_weight_share: float = 0.6) -> None:
        self.skeleton = skeleton
        self.q_stand = skeleton.stand_angles()
        self.kp, self.kd = gain_arrays(skeleton)
        self._zero = np.zeros(len(self.q_stand))
        self.legs, self.leg_idx = leg_kinematics(skeleton)
        weight = skeleton.total_mass * GRAVITY_MPS2
        share = (
            np.array(
                [front_weight_share if leg in FORE else 1 - front_weight_share for leg in LEGS]
            )
            / 2
        )
        self.foot_force_world = np.zeros((4, 3))
        self.foot_force_world[:, 2] = -weight * share  # each foot pushes down on the ground

    def step(self, state: DogState) -> ServoCommand:
        """The joint servo command until the next control step."""
        tau = np.zeros(len(self.q_stand))
        R_front = quat_to_matrix(state.link_quat[state.link_index("chest")])
        R_back = quat_to_matrix(state.base_quat)
        R = np.stack([R_front, R_front, R_back, R_back])
        force_leg = np.einsum("kji,kj->ki", R, self.foot_force_world)  # R^T F per leg
        _, jac = self.legs.foot_jacobian(state.q[self.leg_idx])
        tau[self.leg_idx] += np.einsum("kij,ki->kj", jac, force_leg)
        return ServoCommand(tau, self.q_stand, self._zero, self.kp, self.kd)
