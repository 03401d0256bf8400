"""URDF text generated from a DogSpec (no hand-kept URDF file to drift from the spec): the
skeleton's collision shapes, masses and inertias, and the visual shapes of models/looks.py."""

from __future__ import annotations

import html
import math

from quadsim.models.looks import Shape, visual_shapes
from quadsim.models.skeleton import Link, Skeleton, build_skeleton
from quadsim.models.spec import DogSpec


def _f(v: float) -> str:
    return f"{v:.6g}"


def _xyz(v: tuple[float, ...]) -> str:
    return " ".join(_f(x) for x in v)


def _shape_rpy(link: Link) -> tuple[float, float, float]:
    """Roll-pitch-yaw that turns a URDF capsule's +z axis onto `link.direction` (x-z plane)."""
    if link.shape != "capsule":
        return (0.0, 0.0, 0.0)
    dx, _, dz = link.direction
    return (0.0, math.atan2(dx, dz), 0.0)


def _geometry(link: Link) -> str:
    if link.shape == "box":
        return f'<box size="{_xyz(link.size)}"/>'
    if link.shape == "sphere":
        return f'<sphere radius="{_f(link.size[0])}"/>'
    radius, length = link.size
    return f'<capsule radius="{_f(radius)}" length="{_f(length)}"/>'


def quoteattr(value: str) -> str:
    """An XML attribute value in double quotes (html, not xml.sax: that one imports urllib,
    a tenth of a run's start)."""
    return f'"{html.escape(value, quote=True)}"'


def _visual_xml(link: Link, k: int, shape: Shape) -> str:
    if shape.kind == "box":
        geometry = f'<box size="{_xyz(shape.size)}"/>'
    elif shape.kind == "sphere":
        geometry = f'<sphere radius="{_f(shape.size[0])}"/>'
    else:
        geometry = f'<capsule radius="{_f(shape.size[0])}" length="{_f(shape.size[1])}"/>'
    return (
        f'  <visual><origin xyz="{_xyz(shape.xyz)}" rpy="{_xyz(shape.rpy)}"/>'
        f"<geometry>{geometry}</geometry>"
        f'<material name="{shape.colour}_{link.name}_{k}"><color rgba="{_xyz(shape.rgba)}"/>'
        "</material></visual>"
    )


def _link_xml(link: Link, shapes: tuple[Shape, ...]) -> str:
    rpy = _shape_rpy(link)
    ixx, iyy, izz = link.inertia_diagonal()
    origin = f'<origin xyz="{_xyz(link.center)}" rpy="{_xyz(rpy)}"/>'
    body = [
        f"<link name={quoteattr(link.name)}>",
        f'  <inertial>{origin}<mass value="{_f(link.mass)}"/>'
        f'<inertia ixx="{_f(ixx)}" iyy="{_f(iyy)}" izz="{_f(izz)}" ixy="0" ixz="0" iyz="0"/>'
        "</inertial>",
        *(_visual_xml(link, k, shape) for k, shape in enumerate(shapes)),
        f"  <collision>{origin}<geometry>{_geometry(link)}</geometry></collision>",
    ]
    if link.foot_radius > 0:
        tip = tuple(link.size[1] * d for d in link.direction)
        sphere = f'<geometry><sphere radius="{_f(link.foot_radius)}"/></geometry>'
        body.append(f'  <collision><origin xyz="{_xyz(tip)}"/>{sphere}</collision>')
    body.append("</link>")
    return "\n".join(body)


def _connector_xml(name: str, mass: float) -> str:
    i = 0.4 * mass * 0.03**2
    return (
        f'<link name={quoteattr(name)}><inertial><origin xyz="0 0 0"/>'
        f'<mass value="{_f(mass)}"/><inertia ixx="{_f(i)}" iyy="{_f(i)}" izz="{_f(i)}" '
        'ixy="0" ixz="0" iyz="0"/></inertial></link>'
    )


def connector_name(link: Link, k: int) -> str:
    """Name of the massless-in-spirit link between DOF k and k+1 of `link`'s joint."""
    return f"{link.name}__dof{k}"


def urdf_text(spec_or_skeleton: DogSpec | Skeleton) -> str:
    """The URDF of a dog; pass a DogSpec or an already built Skeleton."""
    sk = (
        spec_or_skeleton
        if isinstance(spec_or_skeleton, Skeleton)
        else build_skeleton(spec_or_skeleton)
    )
    parts = [f'<?xml version="1.0"?>\n<robot name={quoteattr("quadsim_" + sk.spec.name)}>']
    looks = visual_shapes(sk)
    for link in sk.links:
        parts.append(_link_xml(link, looks[link.name]))
        parent = link.parent
        for k, joint in enumerate(link.joints):
            last = k == len(link.joints) - 1
            child = link.name if last else connector_name(link, k)
            if not last:
                parts.append(_connector_xml(child, sk.spec.connector_mass))
            origin = link.origin if k == 0 else (0.0, 0.0, 0.0)
            parts.append(
                f'<joint name={quoteattr(joint.name)} type="revolute">'
                f"<parent link={quoteattr(parent)}/><child link={quoteattr(child)}/>"
                f'<origin xyz="{_xyz(origin)}" rpy="0 0 0"/><axis xyz="{_xyz(joint.axis)}"/>'
                f'<limit lower="{_f(joint.lower)}" upper="{_f(joint.upper)}" '
                f'effort="{_f(joint.torque_limit)}" velocity="30"/>'
                '<dynamics damping="0" friction="0"/></joint>'
            )
            parent = child
    parts.append("</robot>\n")
    return "\n".join(parts)
