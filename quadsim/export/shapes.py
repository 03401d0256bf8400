"""Triangle meshes of a link's visual shapes (boxes, spheres, cylinders, capsules), for the
glTF export: positions, outward normals and counter-clockwise triangles, numpy only."""

from __future__ import annotations

import math

import numpy as np

from quadsim.export.body import Visual

SEGMENTS = 16  # around a round shape's axis: smooth enough at a dog's size, few vertices
RINGS = 4  # latitude steps per hemisphere


def _lathe(profile: list[tuple[float, float, float, float]], n: int = SEGMENTS) -> tuple:
    """A shape of revolution about z from a profile, top to bottom, of points (r, z, nr, nz):
    radius and height [m] and the outward normal in the r-z plane; r = 0 is a pole."""
    phi = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    c, s = np.cos(phi), np.sin(phi)
    verts, normals, rings = [], [], []
    count = 0
    for r, z, nr, nz in profile:
        if r == 0.0:
            verts.append([[0.0, 0.0, z]])
            normals.append([[0.0, 0.0, math.copysign(1.0, nz)]])
            rings.append(np.array([count]))
            count += 1
        else:
            verts.append(np.stack([r * c, r * s, np.full(n, z)], 1))
            normals.append(np.stack([nr * c, nr * s, np.full(n, nz)], 1))
            rings.append(count + np.arange(n))
            count += n
    tris = []
    k = np.arange(n)
    for a, b in zip(rings[:-1], rings[1:], strict=True):
        if len(a) > 1 and len(b) > 1:
            tris.append(np.stack([a[k], b[k], b[(k + 1) % n]], 1))
            tris.append(np.stack([a[k], b[(k + 1) % n], a[(k + 1) % n]], 1))
        elif len(b) > 1:
            tris.append(np.stack([np.full(n, a[0]), b[k], b[(k + 1) % n]], 1))
        elif len(a) > 1:
            tris.append(np.stack([a[k], np.full(n, b[0]), a[(k + 1) % n]], 1))
    return np.concatenate(verts), np.concatenate(normals), np.concatenate(tris)


def _round(radius: float, half_length: float) -> tuple:
    """A capsule along z (a sphere when `half_length` is 0): two hemispheres apart."""
    profile = []
    for i in range(RINGS + 1):  # the top hemisphere, pole to equator
        a = 0.5 * math.pi * i / RINGS
        profile.append((radius * math.sin(a), half_length + radius * math.cos(a), *_rz(a)))
    for i in range(RINGS + 1):  # the bottom one, equator to pole
        a = 0.5 * math.pi * (1 + i / RINGS)
        profile.append((radius * math.sin(a), -half_length + radius * math.cos(a), *_rz(a)))
    if half_length == 0.0:  # no side: the two equators are one ring
        del profile[RINGS + 1]
    profile[0] = (0.0, *profile[0][1:])
    profile[-1] = (0.0, *profile[-1][1:])
    return _lathe(profile)


def _rz(a: float) -> tuple[float, float]:
    return math.sin(a), math.cos(a)


def _cylinder(radius: float, length: float) -> tuple:
    h = 0.5 * length
    return _lathe(
        [
            (0.0, h, 0.0, 1.0),
            (radius, h, 0.0, 1.0),
            (radius, h, 1.0, 0.0),
            (radius, -h, 1.0, 0.0),
            (radius, -h, 0.0, -1.0),
            (0.0, -h, 0.0, -1.0),
        ]
    )


def _box(size: tuple[float, ...]) -> tuple:
    half = 0.5 * np.asarray(size, dtype=float)
    verts, normals, tris = [], [], []
    for axis in range(3):
        for sign in (1.0, -1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = np.roll(np.eye(3), -axis, axis=0)[1:]  # u x v = the axis
            u = sign * u  # and u x v = n on the face looking the other way
            corners = [n + su * u + sv * v for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            base = len(verts)
            verts += [c * half for c in corners]
            normals += [n] * 4
            tris += [[base, base + 1, base + 2], [base, base + 2, base + 3]]
    return np.array(verts), np.array(normals), np.array(tris)


def mesh(visual: Visual) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions (V, 3) [m], normals (V, 3), triangles (F, 3)) of `visual` in its link's
    frame."""
    if visual.kind == "box":
        verts, normals, tris = _box(visual.size)
    elif visual.kind == "sphere":
        verts, normals, tris = _round(visual.size[0], 0.0)
    elif visual.kind == "capsule":
        verts, normals, tris = _round(visual.size[0], 0.5 * visual.size[1])
    else:
        verts, normals, tris = _cylinder(*visual.size)
    rot = np.array(visual.rot)
    return verts @ rot.T + np.array(visual.pos), normals @ rot.T, tris
