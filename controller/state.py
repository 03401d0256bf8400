"""DogState: one snapshot of everything the controller reads, taken once per step."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Links whose world pose the controller and the logs read every step (besides the base).
TRACKED_LINKS = (
    "chest",
    "head",
    "tail1",
    "LF_fore_toe",
    "RF_fore_toe",
    "LH_hind_toe",
    "RH_hind_toe",
)


@dataclass(frozen=True, slots=True)
class DogState:
    """World frame, z up, SI units. Feet in the order LF, RF, LH, RH.

    q, qd: joint angles [rad] and rates [rad/s] in Skeleton.joint_names order.
    base_*: the pelvis (the back leg frame): position [m], quaternion xyzw, velocity [m/s],
    angular velocity [rad/s]. link_*: the links named in link_names (TRACKED_LINKS),
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


def _legs(value: float | bool) -> np.ndarray:
    return field(default_factory=lambda: np.full(4, value))


@dataclass(slots=True)
class ControllerState:
    """Everything the controller carries from one control step to the next. Per leg arrays
    in the order LF, RF, LH, RH; world frame, SI units.

    phase: the gait phase in [0, 1); cadence: how fast its clock runs (1: the gait's own
    stride period; it follows speed, pushes and turns if the gait asks); t [s]; speed
    [m/s] and heading [rad]: the ramped commands now; stance, support (a stance foot on the ground),
    planned_stance (the gait graph's, before contacts amend it); hold: legs kept down at the
    start until their first swing is over; early: legs whose swing ended with an early
    strike; since_contact [s]; liftoff, anchor (4, 2) [m]: where each foot lifted off and
    where it lands or stands; ground (4,) [m]: the ground height under each foot at its
    last strike; q_target_prev and qd_target: the joint targets of the last step and their
    filtered rates; v_int [m] and yaw_int (2,) [rad s]: the speed and heading integrals.
    """

    n_joints: int
    started: bool = False
    phase: float = 0.0
    cadence: float = 1.0
    t: float = 0.0
    speed: float = 0.0
    heading: float = 0.0
    stance: np.ndarray = _legs(True)
    support: np.ndarray = _legs(True)
    planned_stance: np.ndarray = _legs(True)
    hold: np.ndarray = _legs(False)
    early: np.ndarray = _legs(False)
    since_contact: np.ndarray = _legs(0.0)
    liftoff: np.ndarray = field(default_factory=lambda: np.zeros((4, 2)))
    anchor: np.ndarray = field(default_factory=lambda: np.zeros((4, 2)))
    ground: np.ndarray = _legs(0.0)
    # on terrain: how far above the map's ground each foot stood at its last strike [m]
    # (its centre then, less its radius: a paw striking on its toe stands high)
    ground_offset: np.ndarray = _legs(0.0)
    q_target_prev: np.ndarray = field(init=False)
    qd_target: np.ndarray = field(init=False)
    v_int: float = 0.0
    yaw_int: np.ndarray = field(default_factory=lambda: np.zeros(2))

    def __post_init__(self) -> None:
        self.q_target_prev = np.zeros(self.n_joints)
        self.qd_target = np.zeros(self.n_joints)
