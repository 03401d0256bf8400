"""The body an export draws and animates: the logged links' tree, where each link's frame
sits in its parent's, and the visual shapes of each link, read from the URDF the run
simulated (a run log carries it as `urdf`), so richer visual shapes there show up here."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from quadsim.errors import QuadsimError

# the arrays of a run log an export reads (docs/design.md, the run log contract)
NEEDED = ("t", "link_names", "link_parents", "link_pos", "link_quat", "urdf")
# beyond this the logged frames do not sit where the model says: a log of another body [m]
OFFSET_TOLERANCE_M = 1e-3
GREY = (0.6, 0.6, 0.6, 1.0)  # the colour of a visual without a material


class ExportError(QuadsimError):
    """A run log or an output that cannot be exported."""


@dataclass(frozen=True)
class Visual:
    """One visual shape in its link's frame. kind "box": size (lx, ly, lz) [m]; "sphere":
    (r,); "cylinder" and "capsule": (r, length) along the shape frame's z axis.
    `pos` [m] and `rot` (3, 3) place the shape frame in the link frame; rgba in [0, 1]."""

    kind: str
    size: tuple[float, ...]
    pos: tuple[float, float, float]
    rot: tuple[tuple[float, ...], ...]
    rgba: tuple[float, float, float, float]


@dataclass(frozen=True)
class Body:
    """The logged links, in log order (the root first): `parents` index into `names` (-1 for
    the root); `offsets` (L, 3) [m] is each link frame's origin in its parent's frame;
    `visuals` holds the shapes of each link."""

    names: tuple[str, ...]
    parents: tuple[int, ...]
    offsets: np.ndarray
    visuals: tuple[tuple[Visual, ...], ...]

    def children(self, i: int) -> list[int]:
        return [k for k, p in enumerate(self.parents) if p == i]

    def depth_first(self) -> list[int]:
        """Link indices in depth-first order from the root (BVH's order of joints)."""
        order, stack = [], [self.parents.index(-1)]
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(self.children(i)))
        return order


def _floats(text: str | None, n: int, default: float = 0.0) -> tuple[float, ...]:
    values = tuple(float(v) for v in text.split()) if text else (default,) * n
    if len(values) != n:
        raise ExportError(f"URDF: expected {n} numbers, got {text!r}")
    return values


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _origin(element: ET.Element) -> tuple[np.ndarray, np.ndarray]:
    origin = element.find("origin")
    xyz = _floats(origin.get("xyz") if origin is not None else None, 3)
    rpy = _floats(origin.get("rpy") if origin is not None else None, 3)
    return np.array(xyz), _rpy_matrix(*rpy)


def _geometry(visual: ET.Element) -> tuple[str, tuple[float, ...]] | None:
    """(kind, size) of a visual's geometry; None for shapes not drawn (mesh files: not yet)."""
    geometry = visual.find("geometry")
    shape = geometry[0] if geometry is not None and len(geometry) else None
    if shape is None:
        return None
    if shape.tag == "box":
        return "box", _floats(shape.get("size"), 3)
    if shape.tag == "sphere":
        return "sphere", (float(shape.get("radius", "0")),)
    if shape.tag in ("cylinder", "capsule"):
        return shape.tag, (float(shape.get("radius", "0")), float(shape.get("length", "0")))
    return None


def _rgba(visual: ET.Element, named: Mapping[str, tuple[float, ...]]) -> tuple[float, ...]:
    material = visual.find("material")
    if material is None:
        return GREY
    color = material.find("color")
    if color is not None:
        return _floats(color.get("rgba"), 4)
    return named.get(material.get("name", ""), GREY)


def body_from_urdf(urdf: str, names: tuple[str, ...], parents: tuple[int, ...]) -> Body:
    """The Body of the links `names` (with `parents`, -1 for the root) of the robot in the
    URDF text `urdf`; links between two named ones (a joint's extra DOFs) are passed over."""
    try:
        robot = ET.fromstring(urdf)
    except ET.ParseError as exc:
        raise ExportError(f"the log's URDF does not parse ({exc})") from None
    links = {link.get("name"): link for link in robot.iter("link")}
    missing = [n for n in names if n not in links]
    if missing:
        raise ExportError(f"the log's URDF has no links {', '.join(missing)}")
    # the joints' frames: child link -> (parent link, origin in the parent's frame)
    up = {
        j.find("child").get("link"): (j.find("parent").get("link"), *_origin(j))
        for j in robot.iter("joint")
    }
    named = {
        m.get("name"): _floats(m.find("color").get("rgba"), 4)
        for m in robot.findall("material")
        if m.find("color") is not None
    }
    offsets = np.zeros((len(names), 3))
    for i, (name, parent) in enumerate(zip(names, parents, strict=True)):
        if parent < 0:
            continue
        # compose the joint frames (at zero angles) from the parent link down to this one
        pos, rot, link = np.zeros(3), np.eye(3), name
        while link != names[parent]:
            if link not in up:
                raise ExportError(f"the log's URDF does not join {name} to {names[parent]}")
            link, xyz, r = up[link]
            pos, rot = xyz + r @ pos, r @ rot
        offsets[i] = pos
    visuals = []
    for name in names:
        shapes = []
        for visual in links[name].findall("visual"):
            geometry = _geometry(visual)
            if geometry is None:
                continue
            pos, rot = _origin(visual)
            shapes.append(
                Visual(
                    geometry[0],
                    geometry[1],
                    tuple(pos.tolist()),
                    tuple(map(tuple, rot.tolist())),
                    _rgba(visual, named),
                )
            )
        visuals.append(tuple(shapes))
    return Body(tuple(names), tuple(parents), offsets, tuple(visuals))


def body_of_log(log: Mapping[str, np.ndarray]) -> Body:
    """The Body of a run log, from its `urdf`, `link_names` and `link_parents`, checked
    against its first logged frame (a log of another body would export wrong)."""
    missing = [k for k in NEEDED if k not in log]
    if missing:
        raise ExportError(
            f"the run log lacks arrays: {', '.join(missing)} (logs from before link poses were "
            "logged cannot be exported: run again)"
        )
    names = tuple(str(n) for n in log["link_names"])
    parents = tuple(int(p) for p in log["link_parents"])
    if parents.count(-1) != 1 or len(parents) != len(names):
        raise ExportError("the run log's link_parents must name one root and a parent per link")
    body = body_from_urdf(str(log["urdf"]), names, parents)
    pos, quat = np.asarray(log["link_pos"]), np.asarray(log["link_quat"])
    if pos.shape[1:] != (len(names), 3) or quat.shape[1:] != (len(names), 4) or len(pos) < 2:
        raise ExportError(
            f"the run log's link_pos must be (T, {len(names)}, 3) and link_quat "
            f"(T, {len(names)}, 4) with T >= 2, got {pos.shape} and {quat.shape}"
        )
    seen = local_offsets(pos[0], quat[0], parents)
    worst = float(np.max(np.linalg.norm(seen - body.offsets, axis=1)))
    if worst > OFFSET_TOLERANCE_M:
        raise ExportError(
            f"the run log's link frames sit up to {worst * 1000:.1f} mm from where its URDF "
            "puts them: the log does not match its model"
        )
    return body


def quat_matrices(quat_xyzw: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of quaternions (..., 4), xyzw, normalised here."""
    q = np.asarray(quat_xyzw, dtype=float)
    x, y, z, w = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def local_offsets(pos: np.ndarray, quat: np.ndarray, parents: tuple[int, ...]) -> np.ndarray:
    """Each link frame's origin (..., L, 3) [m] in its parent's frame (the root's: zero),
    from world positions (..., L, 3) and quaternions (..., L, 4)."""
    p = np.array(parents)
    has = p >= 0
    out = np.zeros(np.shape(pos))
    rot = quat_matrices(quat[..., p[has], :])
    d = pos[..., has, :] - pos[..., p[has], :]
    out[..., has, :] = np.einsum("...ji,...j->...i", rot, d)
    return out


def local_rotations(quat: np.ndarray, parents: tuple[int, ...]) -> np.ndarray:
    """Each link's rotation matrix (..., L, 3, 3) relative to its parent's (the root's:
    relative to the world), from world quaternions (..., L, 4) xyzw."""
    world = quat_matrices(quat)
    p = np.array(parents)
    out = world.copy()
    has = p >= 0
    out[..., has, :, :] = np.swapaxes(world[..., p[has], :, :], -1, -2) @ world[..., has, :, :]
    return out
