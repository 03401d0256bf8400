"""PD laws and per-joint gain tables."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quadsim.controller.kinematics import joint_inertias
from quadsim.models import Skeleton

DAMPING_CAP_S = 2.5e-4  # [s] see gain_arrays

# Proportional gains [N*m/rad] per joint kind (damping: see gain_arrays).
DEFAULT_KP: dict[str, float] = {
    "spine_pitch": 900.0,
    "spine_yaw": 600.0,
    "neck_pitch": 150.0,
    "neck_yaw": 100.0,
    "head_pitch": 60.0,
    "head_yaw": 40.0,
    "tail_pitch": 6.0,
    "tail_yaw": 6.0,
    "shoulder_pitch": 400.0,
    "shoulder_roll": 300.0,
    "elbow": 400.0,
    "wrist": 150.0,
    "fore_toe": 30.0,
    "hip_pitch": 400.0,
    "hip_roll": 300.0,
    "knee": 400.0,
    "hock": 250.0,
    "hind_toe": 30.0,
}


def gain_arrays(
    skeleton: Skeleton,
    kp_by_kind: dict[str, float] | None = None,
    damping_ratio: float = 0.8,
) -> tuple[np.ndarray, np.ndarray]:
    """(kp [N*m/rad], kd [N*m*s/rad]) in joint order.

    kp comes from the table, scaled by body mass^(5/3) from 34 kg (inertia ~ m^(5/3)): every
    dog's servo rings at the shepherd's frequencies, on the same 1 kHz step (not Froude's
    m^(4/3): with it the small dog's walk fell, docs/controller.md "Dogs of other sizes");
    kd = 2 * damping_ratio * sqrt(kp * I) with I the inertia the joint moves, capped at
    0.3 I_link / DAMPING_CAP_S (I_link: the joint's own link alone): the gaits were tuned
    with that cap, which kept the explicit damping of the old 4 kHz servo stable.
    """
    table = DEFAULT_KP if kp_by_kind is None else kp_by_kind
    scale = (skeleton.spec.total_mass / 34.0) ** (5.0 / 3.0)
    kp = np.array([table[j.kind] for j in skeleton.joints]) * scale
    inertia = joint_inertias(skeleton)
    own = joint_inertias(skeleton, own_link_only=True)
    kd = np.minimum(2.0 * damping_ratio * np.sqrt(kp * inertia), 0.3 * own / DAMPING_CAP_S)
    return kp, kd


@dataclass
class ServoCommand:
    """What one control step asks of the joints until the next: a feed-forward torque plus a
    PD servo, tau = tau_ff + kp (q_target - q) + kd (qd_target - qd) [N*m].

    The World runs the servo at every physics step with implicit damping (World.drive):
    explicit damping is only stable while dt kd stays well below the inertia it damps, and
    the spine's and neck's short segments would need 4 kHz for that; torques() is the
    explicit law, the steady state of both.
    """

    tau_ff: np.ndarray
    q_target: np.ndarray
    qd_target: np.ndarray
    kp: np.ndarray
    kd: np.ndarray

    def torques(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Joint torques [N*m] for the joint angles q [rad] and rates qd [rad/s] now."""
        return self.tau_ff + self.kp * (self.q_target - q) + self.kd * (self.qd_target - qd)
