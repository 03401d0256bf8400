"""The dog's looks: visual shapes per link, apart from the collision shapes the physics uses.

A German shepherd drawn with URDF primitives (boxes, spheres, capsules): a trunk that
tapers from a deep chest to a tucked-up loin, black saddle over tan, a thick neck, a head
with a black muzzle and upright ears, muscular thighs, paws and a bushy tail. Only the
<visual> elements come from here; collision shapes, masses and inertias stay the
skeleton's, so the looks cannot change a gait.

Shapes are placed in each link's frame. All link frames are parallel at zero joint angles,
so the trunk is laid out once in the pelvis frame at rest and each piece moved into the
frame of the link that carries it. Sizes scale with the dog (the shepherd's numbers times
`scale`, the cube root of its mass ratio, as DogSpec.scaled scales lengths).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from quadsim.models.skeleton import Skeleton

# German-shepherd coat, sRGB as picked by eye (rgba)
TAN = (0.78, 0.53, 0.27, 1.0)
CREAM = (0.86, 0.68, 0.45, 1.0)  # the lighter tan of legs, paws and belly
SADDLE = (0.09, 0.075, 0.06, 1.0)  # the black saddle, ears and tail
MUZZLE = (0.05, 0.04, 0.035, 1.0)
NOSE = (0.02, 0.02, 0.02, 1.0)
EYE = (0.2, 0.1, 0.03, 1.0)
COLOURS = {
    "tan": TAN,
    "cream": CREAM,
    "saddle": SADDLE,
    "muzzle": MUZZLE,
    "nose": NOSE,
    "eye": EYE,
}
SHEPHERD_MASS_KG = 34.0  # the dog the numbers below are drawn for
SHEPHERD_HEAD_M = 0.25  # its head's length (DogSpec.head_size[0])

# The trunk's side profile in the pelvis frame at rest, for the shepherd: stations along x
# [m] with the top line and belly line heights [m] and the half width [m]. The back rises
# to the withers, the belly drops from the tucked-up loin to the brisket.
TRUNK_X = (-0.07, 0.04, 0.15, 0.27, 0.39, 0.5, 0.6, 0.68)
TRUNK_TOP = (0.072, 0.075, 0.078, 0.085, 0.097, 0.112, 0.115, 0.09)
TRUNK_BOTTOM = (-0.075, -0.06, -0.05, -0.07, -0.11, -0.16, -0.17, -0.13)
TRUNK_HALF_WIDTH = (0.083, 0.08, 0.07, 0.078, 0.088, 0.1, 0.1, 0.088)
SADDLE_END_X = 0.55  # the saddle ends behind the shoulders; the chest in front is tan


@dataclass(frozen=True)
class Shape:
    """One visual primitive in its link's frame. kind "box": size (lx, ly, lz) [m];
    "sphere": (r,); "capsule": (r, length) along the shape frame's z. xyz [m] and rpy
    [rad] (URDF's fixed-axis roll, pitch, yaw) place the shape frame; colour names COLOURS."""

    kind: str
    size: tuple[float, ...]
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    colour: str

    @property
    def rgba(self) -> tuple[float, float, float, float]:
        return COLOURS[self.colour]


def _vec(v: object) -> np.ndarray:
    return np.asarray(v, dtype=float)


def _capsule(p: object, q: object, radius: float, colour: str) -> Shape:
    """A capsule whose axis runs from point p to point q (the caps reach `radius` beyond)."""
    a, b = _vec(p), _vec(q)
    d = b - a
    length = float(np.linalg.norm(d))
    dx, dy, dz = d / length
    # URDF rpy: R = Ry(pitch) Rx(roll) takes z to (sin p cos r, -sin r, cos p cos r)
    rpy = (-math.asin(max(-1.0, min(1.0, dy))), math.atan2(dx, dz), 0.0)
    centre = tuple((0.5 * (a + b)).tolist())
    return Shape("capsule", (radius, length), centre, rpy, colour)


def _sphere(p: object, radius: float, colour: str) -> Shape:
    return Shape("sphere", (radius,), tuple(_vec(p).tolist()), (0.0, 0.0, 0.0), colour)


def rest_origins(sk: Skeleton) -> dict[str, np.ndarray]:
    """Each link frame's origin [m] in the pelvis frame at zero joint angles."""
    out: dict[str, np.ndarray] = {}
    for link in sk.links:  # parents come before children
        base = out[link.parent] if link.parent else np.zeros(3)
        out[link.name] = base + _vec(link.origin)
    return out


class _Trunk:
    """The trunk profile at any x of the pelvis frame, scaled."""

    def __init__(self, scale: float) -> None:
        self.s = scale

    def at(self, x: float) -> tuple[float, float, float]:
        """(top, bottom, half width) [m] at pelvis-frame x [m]."""
        u = x / self.s
        return tuple(
            self.s * float(np.interp(u, TRUNK_X, table))
            for table in (TRUNK_TOP, TRUNK_BOTTOM, TRUNK_HALF_WIDTH)
        )

    def pieces(self, x0: float, x1: float, origin: np.ndarray, saddle: bool) -> list[Shape]:
        """The trunk between pelvis-frame x0 and x1 as two capsules in the frame at
        `origin`: the back (black where `saddle`) over the belly (tan), each inclined to
        follow the top or belly line, so the body tapers smoothly from link to link."""
        top0, bot0, w0 = self.at(x0)
        top1, bot1, w1 = self.at(x1)
        w = 0.5 * (w0 + w1)
        belly = 0.9 * w  # narrower, so the saddle covers the upper flanks
        back = [_capsule((x0, 0, top0 - w), (x1, 0, top1 - w), w, "saddle" if saddle else "tan")]
        under = [_capsule((x0, 0, bot0 + belly), (x1, 0, bot1 + belly), belly, "tan")]
        return [_moved(shape, origin) for shape in back + under]


def _moved(shape: Shape, origin: np.ndarray) -> Shape:
    """`shape` laid out in the pelvis frame at rest, in the frame whose origin is `origin`."""
    xyz = tuple((_vec(shape.xyz) - origin).tolist())
    return Shape(shape.kind, shape.size, xyz, shape.rpy, shape.colour)


def _trunk_shapes(sk: Skeleton, rest: dict[str, np.ndarray], s: float) -> dict[str, list[Shape]]:
    trunk = _Trunk(s)
    px = sk.spec.pelvis_size[0]
    chest = sk.link("chest")
    chest_front = rest["chest"][0] + chest.size[0]
    names = ["pelvis", *sk.spine_links, "chest"]
    starts = [-0.5 * px + 0.02 * s] + [rest[n][0] for n in names[1:]]
    ends = starts[1:] + [rest["chest"][0] + 0.45 * chest.size[0]]
    out: dict[str, list[Shape]] = {}
    for name, x0, x1 in zip(names, starts, ends, strict=True):
        out[name] = trunk.pieces(x0, x1, rest[name], saddle=True)
    # the chest in front of the saddle: tan shoulders and brisket, rounding into the neck
    o = rest["chest"]
    x_end = min(SADDLE_END_X * s, ends[-1])
    top, bottom, w = trunk.at(chest_front - 0.06 * s)
    shoulders = trunk.pieces(x_end, chest_front - 0.07 * s, o, saddle=False)
    brisket = _sphere((chest_front - 0.05 * s, 0, bottom + w * 0.95), w * 0.95, "tan")
    withers = _capsule(
        (x_end - 0.04 * s, 0, top - 0.045 * s),
        (chest_front - 0.06 * s, 0, top - 0.06 * s),
        0.05 * s,
        "saddle",
    )
    # the base of the neck rises out of the shoulders, as thick as the chest is wide
    neck = sk.link("neck1")
    neck_base = rest["neck1"] + 0.1 * s * _vec(neck.direction)
    yoke_start = _vec((chest_front - 0.1 * s, 0, top - 0.08 * s))
    yoke = _capsule(yoke_start, neck_base, 0.092 * s, "tan")
    lift = _vec((-0.025 * s, 0.0, 0.04 * s))  # the mane over the yoke, from the withers on
    mane = _capsule(yoke_start + lift, neck_base + lift, 0.05 * s, "saddle")
    out["chest"] += shoulders + [_moved(shape, o) for shape in (brisket, withers, yoke, mane)]
    return out


def _neck_shapes(sk: Skeleton, s: float) -> dict[str, list[Shape]]:
    """Thick neck segments, tan at the throat under a dark mane along the top."""
    out: dict[str, list[Shape]] = {}
    e = sk.spec.neck_elevation
    up = _vec((-math.sin(e), 0.0, math.cos(e)))  # across the neck, towards its top
    count = len(sk.neck_joints)
    for i in range(count):
        link = sk.link(f"neck{i + 1}")
        d = _vec(link.direction)
        tip = d * link.size[1]
        r0 = (0.08 - 0.024 * i / count) * s  # thick at the withers, slimmer at the head
        r1 = (0.08 - 0.024 * (i + 1) / count) * s
        throat = -0.012 * s * up  # the neck's underside hangs below its bones
        out[link.name] = [
            _capsule(throat - 0.02 * s * d, throat + 0.5 * tip, r0, "tan"),
            _capsule(throat + 0.4 * tip, tip, r1, "tan"),
        ]
        # the saddle runs on from the withers along the top of the neck
        out[link.name].append(
            _capsule(0.62 * r0 * up - 0.04 * s * d, tip + 0.3 * r1 * up, 0.55 * r0, "saddle")
        )
    return out


def _head_shapes(sk: Skeleton) -> list[Shape]:
    """Skull, stop, muzzle, jaw, nose, eyes and two upright ears, in the head frame (its
    origin at the top of the neck, x along the head). The gaits carry the head some 17
    degrees nose down, so the ears lean back 25 degrees in this frame: upright in the world,
    tipped a little back, as a trotting shepherd's are."""
    # scaled with the head (which scales with the dog), a little larger than the collision
    # box: a shepherd's head is big
    k = 1.12 * sk.spec.head_size[0] / SHEPHERD_HEAD_M
    shapes = [
        _capsule((-0.01 * k, 0, 0.0), (0.05 * k, 0, 0.005 * k), 0.062 * k, "tan"),  # skull
        _capsule((0.0, 0, 0.03 * k), (0.06 * k, 0, 0.03 * k), 0.042 * k, "saddle"),  # crown
        _capsule((0.07 * k, 0, -0.005 * k), (0.2 * k, 0, -0.022 * k), 0.036 * k, "muzzle"),
        _capsule((0.07 * k, 0, -0.04 * k), (0.18 * k, 0, -0.045 * k), 0.024 * k, "muzzle"),
        _sphere((0.225 * k, 0, -0.018 * k), 0.02 * k, "nose"),
    ]
    for side in (1.0, -1.0):
        shapes.append(_sphere((0.085 * k, side * 0.034 * k, 0.018 * k), 0.011 * k, "eye"))
        # a thin square turned 45 degrees in its plane, half sunk in the skull: a pointed
        # ear; it leans out by 10 degrees and back against the head's carriage
        roll = side * (math.pi / 4 - math.radians(10.0))
        shapes.append(
            Shape(
                "box",
                (0.014 * k, 0.085 * k, 0.085 * k),
                (0.0, side * 0.033 * k, 0.05 * k),
                (roll, -math.radians(25.0), 0.0),
                "saddle",
            )
        )
    return shapes


def _tail_shapes(sk: Skeleton, s: float) -> dict[str, list[Shape]]:
    """A bushy tail: thick, dark on top, thickest towards the tip."""
    out: dict[str, list[Shape]] = {}
    count = len(sk.tail_joints)
    radii = (0.022, 0.04, 0.03)  # base, middle, tip, for the shepherd
    for i in range(count):
        link = sk.link(f"tail{i + 1}")
        d = _vec(link.direction)
        tip = d * link.size[1]
        below = _vec((-d[2], 0.0, d[0]))  # across the tail, in its vertical plane
        below = below if below[2] < 0 else -below  # the side towards the ground
        u0, u1 = i / count, (i + 1) / count
        r0 = s * float(np.interp(u0, (0.0, 0.5, 1.0), radii))
        r1 = s * float(np.interp(u1, (0.0, 0.5, 1.0), radii))
        rm = 0.5 * (r0 + r1)
        out[link.name] = [
            _capsule(0.0 * d, 0.55 * tip, 0.5 * (r0 + rm), "saddle"),
            _capsule(0.45 * tip, tip, 0.5 * (rm + r1), "saddle"),
            _capsule(0.3 * rm * below, tip + 0.3 * r1 * below, 0.85 * rm, "tan"),
        ]
    return out


def _leg_shapes(sk: Skeleton, s: float) -> dict[str, list[Shape]]:
    """Legs that taper from muscled upper segments to slim cannons, and oval paws."""
    out: dict[str, list[Shape]] = {}
    for lm in sk.legs.values():
        fore = lm.leg[1] == "F"
        upper, lower, cannon, toe = (sk.link(n) for n in lm.links)
        L = [k.size[1] for k in (upper, lower, cannon, toe)]
        down = _vec((0.0, 0.0, -1.0))
        # the upper legs' muscle sits a little inside the joint, against the body
        inward = _vec((0.0, -0.015 * s if lm.leg[0] == "L" else 0.015 * s, 0.0))
        if fore:
            out[upper.name] = [
                _capsule(inward + (0.01 * s, 0, 0.02 * s), down * 0.55 * L[0], 0.042 * s, "tan"),
                _capsule(down * 0.4 * L[0], down * L[0], 0.036 * s, "tan"),
            ]
            out[lower.name] = [_capsule((0, 0, 0), down * L[1], 0.027 * s, "cream")]
        else:
            out[upper.name] = [
                _capsule(inward + (-0.01 * s, 0, 0.0), down * 0.5 * L[0], 0.058 * s, "tan"),
                _capsule(inward + down * 0.35 * L[0], down * L[0], 0.042 * s, "tan"),
            ]
            out[lower.name] = [
                _capsule((0.005 * s, 0, -0.02 * s), down * 0.5 * L[1], 0.036 * s, "tan"),
                _capsule(down * 0.4 * L[1], down * L[1], 0.024 * s, "cream"),
            ]
        out[cannon.name] = [_capsule((0, 0, 0), down * L[2], 0.021 * s, "cream")]
        # the paw: the foot sphere's place (the collision shape), drawn longer than wide
        fr = toe.foot_radius
        foot = down * L[3]
        out[toe.name] = [
            _capsule((0, 0, 0), foot, 0.019 * s, "cream"),
            _capsule(foot + (-0.005 * s, 0, 0), foot + (0.03 * s, 0, 0.002 * s), fr, "cream"),
        ]
    return out


def visual_shapes(sk: Skeleton) -> dict[str, tuple[Shape, ...]]:
    """The visual shapes of every link of `sk`, by link name, in each link's frame."""
    s = (sk.spec.total_mass / SHEPHERD_MASS_KG) ** (1.0 / 3.0)
    rest = rest_origins(sk)
    shapes: dict[str, list[Shape]] = {}
    shapes.update(_trunk_shapes(sk, rest, s))
    shapes.update(_neck_shapes(sk, s))
    shapes["head"] = _head_shapes(sk)
    shapes.update(_tail_shapes(sk, s))
    shapes.update(_leg_shapes(sk, s))
    return {link.name: tuple(shapes.get(link.name, ())) for link in sk.links}
