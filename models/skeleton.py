"""The dog's skeleton as a tree of links, and the named map of which link and joint is which.

Both the URDF writer and the controller's numpy kinematics read this one description, so
the simulated body and the controller's model of it cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from quadsim.models.spec import FORE, LEGS, DogSpec

X = (1.0, 0.0, 0.0)
Y = (0.0, 1.0, 0.0)
Z = (0.0, 0.0, 1.0)


@dataclass(frozen=True)
class Joint:
    """One rotational degree of freedom: angle range [rad], torque limit [N*m]."""

    name: str
    kind: str
    axis: tuple[float, float, float]
    lower: float
    upper: float
    torque_limit: float


@dataclass(frozen=True)
class Link:
    """A rigid body. Its frame is parallel to the world's when every angle is zero.

    `origin` is the link frame's position in the parent frame [m]; `joints` are the DOFs
    between parent and link, applied in order. Shapes: "box" with `size` (lx, ly, lz);
    "capsule" with `size` (radius, length) along `direction`; "sphere" with `size` (r,).
    """

    name: str
    parent: str | None
    origin: tuple[float, float, float]
    joints: tuple[Joint, ...]
    mass: float
    shape: str
    size: tuple[float, ...]
    center: tuple[float, float, float]
    direction: tuple[float, float, float] = Z
    foot_radius: float = 0.0  # > 0 for toe links: a sphere at the far end of the capsule
    min_inertia: float = 0.0  # [kg*m^2] floor on each principal moment (see DogSpec)

    def inertia_diagonal(self) -> tuple[float, float, float]:
        """Principal moments [kg*m^2] about the shape's centre, in the shape's own axes."""
        i = self._solid_inertia()
        return (
            max(i[0], self.min_inertia),
            max(i[1], self.min_inertia),
            max(i[2], self.min_inertia),
        )

    def _solid_inertia(self) -> tuple[float, float, float]:
        m = self.mass
        if self.shape == "box":
            lx, ly, lz = self.size
            return (m * (ly**2 + lz**2) / 12, m * (lx**2 + lz**2) / 12, m * (lx**2 + ly**2) / 12)
        if self.shape == "sphere":
            i = 0.4 * m * self.size[0] ** 2
            return (i, i, i)
        r, length = self.size
        h = length + r  # the two caps, roughly
        transverse = m * (3 * r**2 + h**2) / 12
        return (transverse, transverse, 0.5 * m * r**2)


@dataclass(frozen=True)
class LegMap:
    """Which links and joints make up one leg. `joints` run frame to toe:
    (shoulder/hip roll, shoulder/hip pitch, elbow/knee, wrist/hock, toe)."""

    leg: str
    frame_link: str
    links: tuple[str, ...]
    joints: tuple[str, ...]
    foot_link: str
    foot_offset: tuple[float, float, float]  # foot sphere centre in the toe link frame [m]
    lengths: tuple[float, float, float, float]  # upper, lower, cannon, toe [m]


@dataclass(frozen=True)
class Skeleton:
    """The named skeleton map: no code needs a magic joint index."""

    spec: DogSpec
    links: tuple[Link, ...]
    legs: dict[str, LegMap]
    spine_links: tuple[str, ...]
    spine_joints: tuple[tuple[str, str], ...]  # (pitch, yaw) per spine joint, back to front
    neck_joints: tuple[tuple[str, str], ...]
    head_joints: tuple[str, str]
    tail_joints: tuple[tuple[str, str], ...]
    torso_links: tuple[str, ...]  # links whose ground contact means a fall
    # motion-capture style markers: name -> (link, position in the link frame [m]); the
    # names follow the dog_mocap marker set (pelvis, LF_elbow, RH_toe, tail_base, ...)
    markers: dict[str, tuple[str, tuple[float, float, float]]]

    @property
    def joints(self) -> tuple[Joint, ...]:
        """Every DOF in tree order: the order of the J axis of logs and torque vectors."""
        return tuple(j for link in self.links for j in link.joints)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    def joint_index(self, name: str) -> int:
        """Position of joint `name` in `joint_names`."""
        return self.joint_names.index(name)

    def link(self, name: str) -> Link:
        for link in self.links:
            if link.name == name:
                return link
        raise KeyError(f"no link {name!r}; links: {[k.name for k in self.links]}")

    @property
    def total_mass(self) -> float:
        n_connectors = sum(max(len(k.joints) - 1, 0) for k in self.links)
        return sum(k.mass for k in self.links) + n_connectors * self.spec.connector_mass

    @property
    def n_bodies(self) -> int:
        """Rigid bodies in the URDF: the links plus one connector per extra DOF of a joint."""
        return len(self.links) + sum(max(len(k.joints) - 1, 0) for k in self.links)

    def stand_angles(self) -> np.ndarray:
        """Joint angles [rad] of the standing pose, in `joint_names` order."""
        pose = self.spec.stand_pose
        return np.array([pose.get(j.kind, 0.0) for j in self.joints])

    def limits(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lower [rad], upper [rad], torque [N*m]) arrays in `joint_names` order."""
        js = self.joints
        return (
            np.array([j.lower for j in js]),
            np.array([j.upper for j in js]),
            np.array([j.torque_limit for j in js]),
        )


def _joint(spec: DogSpec, name: str, kind: str, axis: tuple[float, float, float]) -> Joint:
    lim = spec.limits[kind]
    return Joint(name, kind, axis, lim.lower, lim.upper, lim.torque)


def _capsule(
    name: str,
    parent: str,
    origin: tuple[float, float, float],
    joints: tuple[Joint, ...],
    mass: float,
    radius: float,
    length: float,
    direction: tuple[float, float, float],
    foot_radius: float = 0.0,
) -> Link:
    center = tuple(0.5 * length * d for d in direction)
    return Link(
        name,
        parent,
        origin,
        joints,
        mass,
        "capsule",
        (radius, length),
        center,
        direction,
        foot_radius,
    )


def _pitch_yaw_chain(
    spec: DogSpec,
    part: str,
    parent: str,
    origin: tuple[float, float, float],
    count: int,
    length: float,
    radius: float,
    direction: tuple[float, float, float],
) -> tuple[list[Link], list[tuple[str, str]], str, tuple[float, float, float]]:
    """`count` capsule segments named part1..partN along `direction`, each joined to the one
    before by pitch then yaw. Returns the links, the (pitch, yaw) joint names, the last
    link and where a child of it attaches (its far end) in its frame."""
    links, joints = [], []
    for i in range(1, count + 1):
        name, pitch, yaw = f"{part}{i}", f"{part}{i}_pitch", f"{part}{i}_yaw"
        pair = (_joint(spec, pitch, f"{part}_pitch", Y), _joint(spec, yaw, f"{part}_yaw", Z))
        links.append(
            _capsule(name, parent, origin, pair, spec.segment_mass(part), radius, length, direction)
        )
        joints.append((pitch, yaw))
        parent, origin = name, tuple(length * d for d in direction)
    return links, joints, parent, origin


def build_skeleton(spec: DogSpec) -> Skeleton:
    """The link tree of `spec`, rooted at the pelvis (the back leg frame)."""
    s = spec
    links: list[Link] = []
    px, py, pz = s.pelvis_size
    links.append(
        Link(
            "pelvis",
            None,
            (0.0, 0.0, 0.0),
            (),
            s.segment_mass("pelvis"),
            "box",
            s.pelvis_size,
            (0.0, 0.0, 0.0),
        )
    )

    # spine: pelvis -> spine1..n -> chest, pitch and yaw at each joint
    chain, spine_joints, parent, origin = _pitch_yaw_chain(
        s,
        "spine",
        "pelvis",
        (0.5 * px, 0.0, 0.13 * pz),
        s.spine_segments,
        s.spine_segment_length,
        s.spine_radius,
        X,
    )
    links += chain
    spine_links = [k.name for k in chain]
    cx, cy, cz = s.chest_size
    chest_joints = (
        _joint(s, "chest_pitch", "spine_pitch", Y),
        _joint(s, "chest_yaw", "spine_yaw", Z),
    )
    links.append(
        Link(
            "chest",
            parent,
            origin,
            chest_joints,
            s.segment_mass("chest"),
            "box",
            s.chest_size,
            (0.5 * cx, 0.0, -0.125 * cz),
        )
    )
    spine_joints.append(("chest_pitch", "chest_yaw"))

    # neck and head, from the front top of the chest
    ce, se = math.cos(s.neck_elevation), math.sin(s.neck_elevation)
    neck_dir = (ce, 0.0, se)
    chain, neck_joints, parent, origin = _pitch_yaw_chain(
        s,
        "neck",
        "chest",
        (0.92 * cx, 0.0, 0.25 * cz),
        s.neck_segments,
        s.neck_segment_length,
        s.neck_radius,
        neck_dir,
    )
    links += chain
    hx, hy, hz = s.head_size
    head_joints = (_joint(s, "head_pitch", "head_pitch", Y), _joint(s, "head_yaw", "head_yaw", Z))
    links.append(
        Link(
            "head",
            parent,
            origin,
            head_joints,
            s.segment_mass("head"),
            "box",
            s.head_size,
            (0.33 * hx, 0.0, 0.0),
        )
    )

    # tail, from the back top of the pelvis
    ct, st = math.cos(s.tail_depression), math.sin(s.tail_depression)
    tail_dir = (-ct, 0.0, -st)
    chain, tail_joints, _, _ = _pitch_yaw_chain(
        s,
        "tail",
        "pelvis",
        (-0.5 * px, 0.0, 0.3 * pz),
        s.tail_segments,
        s.tail_segment_length,
        s.tail_radius,
        tail_dir,
    )
    links += chain

    # legs: hang straight down at zero angles
    down = (0.0, 0.0, -1.0)
    legs: dict[str, LegMap] = {}
    for leg in LEGS:
        fore = leg in FORE
        side = 1.0 if leg[0] == "L" else -1.0
        if fore:
            frame, off = "chest", s.shoulder_offset
            parts = ("upper_arm", "forearm", "fore_cannon", "fore_toe")
            kinds = ("shoulder_roll", "shoulder_pitch", "elbow", "wrist", "fore_toe")
            seg = ("upper_arm", "forearm", "fore_cannon", "fore_toe")
        else:
            frame, off = "pelvis", s.hip_offset
            parts = ("thigh", "shank", "hind_cannon", "hind_toe")
            kinds = ("hip_roll", "hip_pitch", "knee", "hock", "hind_toe")
            seg = ("thigh", "shank", "hind_cannon", "hind_toe")
        lengths = tuple(getattr(s, p) for p in parts)
        jnames = tuple(f"{leg}_{k}" for k in kinds)
        lnames = tuple(f"{leg}_{p}" for p in seg)
        origin = (off[0], side * off[1], off[2])
        parent = frame
        for i, (lname, length) in enumerate(zip(lnames, lengths, strict=True)):
            if i == 0:  # abduction (roll) first: the rest of the leg then moves in one plane
                joints = (_joint(s, jnames[0], kinds[0], X), _joint(s, jnames[1], kinds[1], Y))
            else:
                joints = (_joint(s, jnames[i + 1], kinds[i + 1], Y),)
            is_toe = i == 3
            links.append(
                _capsule(
                    lname,
                    parent,
                    origin,
                    joints,
                    s.segment_mass(parts[i]),
                    s.limb_radius * (0.7 if is_toe else 1.0),
                    length,
                    down,
                    s.foot_radius if is_toe else 0.0,
                )
            )
            parent, origin = lname, (0.0, 0.0, -length)
        legs[leg] = LegMap(leg, frame, lnames, jnames, lnames[-1], (0.0, 0.0, -lengths[3]), lengths)

    # connectors between the DOFs of one joint take their mass from the child segment,
    # so the whole dog weighs exactly spec.total_mass
    links = [
        replace(
            k,
            mass=k.mass - max(len(k.joints) - 1, 0) * s.connector_mass,
            min_inertia=s.min_link_inertia,
        )
        for k in links
    ]
    torso = (
        "pelvis",
        *spine_links,
        "chest",
        *(f"neck{i + 1}" for i in range(s.neck_segments)),
        "head",
    )
    markers: dict[str, tuple[str, tuple[float, float, float]]] = {
        "pelvis": ("pelvis", (0.0, 0.0, 0.0)),
        "mid_spine": (spine_links[len(spine_links) // 2], (0.5 * s.spine_segment_length, 0, 0)),
        "neck_base": ("neck1", (0.0, 0.0, 0.0)),
        "mid_neck": (f"neck{s.neck_segments}", (0.0, 0.0, 0.0)),
        "head": ("head", (0.33 * hx, 0.0, 0.0)),
    }
    for leg, lm in legs.items():
        if leg in FORE:
            joint_names = ("shoulder", "elbow", "wrist")
            side = s.shoulder_offset[1] * (1 if leg[0] == "L" else -1)
            markers[f"{leg}_scapula"] = ("chest", (0.8 * s.shoulder_offset[0], side, 0.375 * cz))
        else:
            joint_names = ("hip", "knee", "hock")
        for name, link in zip(joint_names, lm.links[:3], strict=True):
            markers[f"{leg}_{name}"] = (link, (0.0, 0.0, 0.0))
        markers[f"{leg}_toe"] = (lm.foot_link, lm.foot_offset)
    tail_last = f"tail{s.tail_segments}"
    markers["tail_base"] = ("tail1", (0.0, 0.0, 0.0))
    markers["tail_mid"] = (tail_last, (0.0, 0.0, 0.0))
    markers["tail_tip"] = (tail_last, tuple(s.tail_segment_length * d for d in tail_dir))
    return Skeleton(
        markers=markers,
        spec=s,
        links=tuple(links),
        legs=legs,
        spine_links=tuple(spine_links),
        spine_joints=tuple(spine_joints),
        neck_joints=tuple(neck_joints),
        head_joints=("head_pitch", "head_yaw"),
        tail_joints=tuple(tail_joints),
        torso_links=torso,
    )
