"""Forward kinematics and Jacobians of the dog's leg chains, in numpy (no pybullet).

Every link frame of the dog is parallel to its parent's at zero joint angles, so a chain is
fully described by its joint axes (local, unit) and the offsets between joints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from quadsim.models import GRAVITY_MPS2, Link, Skeleton

# per leg joint (hip roll, hip pitch, knee, hock, toe): the segment it moves, counted from the
# thigh; it turns about that segment's top, the leg point of the same index
SEG_OF_JOINT = np.array([0, 0, 1, 2, 3])
_YZX, _ZXY = np.array([1, 2, 0]), np.array([2, 0, 1])  # the components cross() pairs
SMALL_BATCH = 8  # up to this many quaternions, float math beats numpy's per-call overhead


def quat_rows(x: float, y: float, z: float, w: float) -> list[list[float]]:
    """The rotation matrix of one unit quaternion (xyzw) as rows of floats."""
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]


def quat_to_matrix(quat_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) in xyzw order."""
    q = np.asarray(quat_xyzw, dtype=float)
    if q.ndim == 1:
        return np.array(quat_rows(*q.tolist()))
    if q.ndim == 2 and 0 < len(q) <= SMALL_BATCH:
        return np.array([quat_rows(*v) for v in q.tolist()])
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (3); cheaper than np.cross for small arrays."""
    # (a_y b_z - a_z b_y, a_z b_x - a_x b_z, a_x b_y - a_y b_x) in three whole-array operations
    # (take keeps the arrays C-ordered: einsum's rounding depends on its operands' layout)
    a_yzx, a_zxy = a.take(_YZX, axis=-1), a.take(_ZXY, axis=-1)
    return a_yzx * b.take(_ZXY, axis=-1) - a_zxy * b.take(_YZX, axis=-1)


def wrap_angle(angle: float | np.ndarray) -> float | np.ndarray:
    """`angle` [rad] onto [-pi, pi) (floats stay floats: the control step wraps scalars)."""
    return (angle + math.pi) % (2 * math.pi) - math.pi


def yaw_of(quat_xyzw: np.ndarray) -> np.ndarray:
    """Heading [rad] of a body: the yaw of its x axis projected on the ground, for xyzw
    quaternions (..., 4)."""
    q = np.asarray(quat_xyzw, dtype=float)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def pitch_of(quat_xyzw: np.ndarray) -> np.ndarray:
    """Nose-down pitch [rad] of a body's x axis against the ground, for xyzw quaternions
    (..., 4)."""
    q = np.asarray(quat_xyzw, dtype=float)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return -np.arcsin(np.clip(2.0 * (x * z - w * y), -1.0, 1.0))


def rot_x(angle: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) about +x by `angle` [rad]."""
    return _rot_x_cs(np.cos(angle), np.sin(angle))


def _rot_x_cs(c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """rot_x of the angles whose cosines and sines are c and s."""
    R = np.zeros(np.shape(c) + (3, 3))
    R[..., 0, 0] = 1.0
    R[..., 1, 1] = c
    R[..., 1, 2] = -s
    R[..., 2, 1] = s
    R[..., 2, 2] = c
    return R


def rot_y(angle: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) about +y by `angle` [rad]."""
    return _rot_y_cs(np.cos(angle), np.sin(angle))


def _rot_y_cs(c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """rot_y of the angles whose cosines and sines are c and s."""
    R = np.zeros(np.shape(c) + (3, 3))
    R[..., 1, 1] = 1.0
    R[..., 0, 0] = c
    R[..., 0, 2] = s
    R[..., 2, 0] = -s
    R[..., 2, 2] = c
    return R


class LegKinematics:
    """Forward kinematics and foot Jacobians of the four legs at once, in leg-frame coordinates
    (the standing controller's, and the numpy reference of the control step's compiled
    `controller.legchain.LegChains`).

    Each leg: hip/shoulder roll (x) then pitch (y) at `hip_pos_legframe`, then knee/elbow,
    hock/wrist and toe pitch joints, with segment lengths `lengths` (4 legs x 4) [m] hanging
    along -z at zero angles. Angles are (4 legs, 5 joints) [rad].
    """

    def __init__(self, hip_pos_legframe: np.ndarray, lengths: np.ndarray) -> None:
        self.hip = np.asarray(hip_pos_legframe, dtype=float).reshape(4, 3)
        self.lengths = np.asarray(lengths, dtype=float).reshape(4, 4)
        self._neg_lengths = -self.lengths[:, :, None]

    def forward(self, angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint positions (4, 5, 3): hip, knee, hock, toe joint, foot centre [m, leg frame];
        and the world-from-segment rotations (4, 4, 3, 3) of thigh, shank, cannon, toe."""
        a = np.asarray(angles, dtype=float)
        c, s = np.cos(a), np.sin(a)
        pitch = _rot_y_cs(c[:, 1:].T, s[:, 1:].T)
        return self._forward(_rot_x_cs(c[:, 0], s[:, 0]), pitch)

    def _forward(self, roll: np.ndarray, pitch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """forward() from the roll rotations (leg, 3, 3) and the rotations of the four pitch
        joints (joint, leg, 3, 3)."""
        rots = np.empty((4, 4, 3, 3))
        rots[:, 0] = r = roll @ pitch[0]
        for s in range(1, 4):  # thigh, shank, cannon, toe
            rots[:, s] = r = r @ pitch[s]
        # each segment hangs along its -z: its rotation's z column times -length (the same
        # floats as rotating (0, 0, -length), whose zero terms add nothing)
        steps = rots[:, :, :, 2] * self._neg_lengths
        pos = np.empty((4, 5, 3))
        pos[:, 0] = self.hip
        # add.accumulate is cumsum without its Python-level wrapper
        np.add.accumulate(steps, axis=1, out=pos[:, 1:])
        pos[:, 1:] += self.hip[:, None, :]
        return pos, rots

    def joint_axes(self, angles: np.ndarray) -> np.ndarray:
        """Axes (4, 5, 3) of the five joints of each leg in leg-frame coordinates."""
        return self._axes(np.cos(angles[:, 0]), np.sin(angles[:, 0]))

    @staticmethod
    def _axes(cos_roll: np.ndarray, sin_roll: np.ndarray) -> np.ndarray:
        """joint_axes from the roll's cosines and sines."""
        axes = np.zeros((4, 5, 3))
        axes[:, 0, 0] = 1.0  # the roll axis: x
        # pitch axes: y after the roll; below the roll the leg moves in one plane
        axes[:, 1:, 1] = cos_roll[:, None]
        axes[:, 1:, 2] = sin_roll[:, None]
        return axes

    def foot_jacobian(
        self,
        angles: np.ndarray,
        fk: tuple[np.ndarray, np.ndarray] | None = None,
        axes: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Foot positions (4, 3) and Jacobians d foot / d angles (4, 3, 5), leg frame.
        Pass `fk` = forward(angles) and `axes` = joint_axes(angles) when already at hand."""
        a = np.asarray(angles, dtype=float)
        pos, _ = self.forward(a) if fk is None else fk
        pivots = pos.take(SEG_OF_JOINT, axis=1)
        foot = pos[:, 4]
        axes = self.joint_axes(a) if axes is None else axes
        jac = cross(axes, foot[:, None, :] - pivots).transpose(0, 2, 1)
        return foot, jac


@dataclass(frozen=True)
class TreePose:
    """World-free pose of the whole body with the pelvis at the origin, axes aligned."""

    link_pos: dict[str, np.ndarray]  # link frame origins [m]
    link_rot: dict[str, np.ndarray]  # link frame rotations
    com: dict[str, np.ndarray]  # link centres of mass [m]
    pivot: dict[str, np.ndarray]  # joint name -> joint position [m]
    axis: dict[str, np.ndarray]  # joint name -> joint axis (unit)
    subtree: dict[str, list[str]]  # link name -> itself and every link below it


def tree_pose(skeleton: Skeleton, joint_angles: np.ndarray | None = None) -> TreePose:
    """Forward kinematics of every link (a setup-time tool: Python loops over the tree)."""
    q = skeleton.stand_angles() if joint_angles is None else joint_angles
    names = skeleton.joint_names
    link_pos: dict[str, np.ndarray] = {}
    link_rot: dict[str, np.ndarray] = {}
    com, pivot, axis = {}, {}, {}
    for link in skeleton.links:  # parents come first
        if link.parent is None:
            p, R = np.zeros(3), np.eye(3)
        else:
            p = link_pos[link.parent] + link_rot[link.parent] @ np.array(link.origin)
            R = link_rot[link.parent].copy()
        for j in link.joints:
            pivot[j.name], axis[j.name] = p, R @ np.array(j.axis)
            R = R @ _axis_rotation(np.array(j.axis), q[names.index(j.name)])
        link_pos[link.name], link_rot[link.name] = p, R
        com[link.name] = p + R @ np.array(link.center)
    children: dict[str, list[str]] = {}
    for link in skeleton.links:
        if link.parent is not None:
            children.setdefault(link.parent, []).append(link.name)

    def below(name: str) -> list[str]:
        out = [name]
        for ch in children.get(name, []):
            out += below(ch)
        return out

    subtree = {link.name: below(link.name) for link in skeleton.links}
    return TreePose(link_pos, link_rot, com, pivot, axis, subtree)


def joint_inertias(
    skeleton: Skeleton, joint_angles: np.ndarray | None = None, own_link_only: bool = False
) -> np.ndarray:
    """Moment of inertia [kg*m^2] each joint sees about its axis, body in pose `joint_angles`
    (default: the standing pose): the reduced inertia of its subtree against the rest of
    the body, or with `own_link_only` just the lighter of the two links it joins (the
    fastest local mode of a chain of short segments, which bounds explicit damping)."""
    pose = tree_pose(skeleton, joint_angles)
    names = skeleton.joint_names

    def about_axis(group: list[Link], pivot: np.ndarray, axis: np.ndarray) -> float:
        total = 0.0
        for b in group:
            r = pose.com[b.name] - pivot
            r_perp = r - axis * (r @ axis)
            total += b.mass * (r_perp @ r_perp) + max(b.inertia_diagonal())
        return total

    # The body floats: a joint turns its subtree against the rest of the body, so it sees
    # the reduced inertia of the two sides.
    inertia = np.zeros(len(names))
    for link in skeleton.links:
        below = set(pose.subtree[link.name])
        inner = [k for k in skeleton.links if k.name in below]
        outer = [k for k in skeleton.links if k.name not in below]
        if own_link_only:  # the lighter of the two links the joint sits between
            parent = skeleton.link(link.parent) if link.parent else link
            inner = [min(link, parent, key=lambda k: k.mass)]
        for j in link.joints:
            pivot, axis = pose.pivot[j.name], pose.axis[j.name]
            i_in, i_out = about_axis(inner, pivot, axis), about_axis(outer, pivot, axis)
            inertia[names.index(j.name)] = i_in if own_link_only else i_in * i_out / (i_in + i_out)
    return inertia


def static_gravity_torques(
    skeleton: Skeleton,
    joints: list[str],
    gravity: float = GRAVITY_MPS2,
    joint_angles: np.ndarray | None = None,
) -> np.ndarray:
    """Torques [N*m] at `joints` that hold everything beyond each joint up against gravity,
    body in pose `joint_angles` (default standing) and level: tau = sum (a x r) . m g z."""
    pose = tree_pose(skeleton, joint_angles)
    owner = {j.name: link.name for link in skeleton.links for j in link.joints}
    out = np.zeros(len(joints))
    up = np.array([0.0, 0.0, gravity])
    for k, name in enumerate(joints):
        pivot, axis = pose.pivot[name], pose.axis[name]
        for b in pose.subtree[owner[name]]:
            out[k] += np.cross(axis, pose.com[b] - pivot) @ (skeleton.link(b).mass * up)
    return out


def _axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation matrix about the unit `axis` by `angle` [rad] (Rodrigues' formula; scipy's
    Rotation would add 0.3 s of import to every run's start)."""
    x, y, z = np.asarray(axis, dtype=float)
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)
