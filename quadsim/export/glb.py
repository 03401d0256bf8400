"""Binary glTF 2.0 (.glb) of a run: one node per link, nested as the link tree, each drawing
its visual shapes, and one animation ("run") at the log's rate.

A GLB is a 12-byte header, a JSON chunk and a BIN chunk; written here with numpy, json and
struct (no library: the whole format this needs fits on two screens). The links' data stay
in the simulator's world (z up, x forward, metres) under one root node, "quadsim", that
turns it into glTF's y up. The root link (the pelvis) has translation and rotation channels;
every other link a rotation channel (its translation is its joint's fixed offset).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from quadsim.export.body import Body, ExportError
from quadsim.export.shapes import mesh

FLOAT, UNSIGNED_SHORT, UNSIGNED_INT = 5126, 5123, 5125
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
TYPES = {1: "SCALAR", 3: "VEC3", 4: "VEC4"}
# glTF is y up: the simulator's z-up world turned -90 degrees about x (xyzw)
Y_UP_QUAT = [-math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)]
ROOT_NODE = "quadsim"


class _Buffer:
    """The BIN chunk as it grows, with its buffer views and accessors (one view each)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.length = 0
        self.views: list[dict] = []
        self.accessors: list[dict] = []

    def add(self, array: np.ndarray, target: int | None = None, bounds: bool = False) -> int:
        """Append `array` (N,) or (N, k): float32, or uint16/uint32 indices; returns its
        accessor's index. `bounds` gives the accessor min and max (the spec wants them on
        positions and on animation inputs)."""
        data = np.ascontiguousarray(array)
        raw = data.tobytes()
        view = {"buffer": 0, "byteOffset": self.length, "byteLength": len(raw)}
        if target is not None:
            view["target"] = target
        self.views.append(view)
        pad = -len(raw) % 4  # every view starts 4-byte aligned
        self.chunks += [raw, b"\0" * pad]
        self.length += len(raw) + pad
        component = {"float32": FLOAT, "uint16": UNSIGNED_SHORT, "uint32": UNSIGNED_INT}
        accessor = {
            "bufferView": len(self.views) - 1,
            "componentType": component[data.dtype.name],
            "count": len(data),
            "type": TYPES[1 if data.ndim == 1 else data.shape[1]],
        }
        if bounds:
            flat = data.reshape(len(data), -1)
            accessor["min"] = flat.min(axis=0).tolist()
            accessor["max"] = flat.max(axis=0).tolist()
        self.accessors.append(accessor)
        return len(self.accessors) - 1


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products (..., 4) of quaternions (..., 4), xyzw."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def local_quats(quat: np.ndarray, parents: tuple[int, ...]) -> np.ndarray:
    """Each link's rotation (T, L, 4) xyzw relative to its parent's (the root's: to the world)
    from world quaternions (T, L, 4), each link's sign kept from frame to frame (q and -q
    are one rotation, but a sign flip between keys would make viewers spin the long way)."""
    q = np.asarray(quat, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    p = np.array(parents)
    has = p >= 0
    out = q.copy()
    conj = q[:, p[has]] * np.array([-1.0, -1.0, -1.0, 1.0])
    out[:, has] = _quat_mul(conj, q[:, has])
    dots = np.einsum("tlk,tlk->tl", out[1:], out[:-1])
    signs = np.cumprod(np.where(dots < 0.0, -1.0, 1.0), axis=0)
    out[1:] *= signs[..., None]
    return out


def _linear(c: float) -> float:
    """An sRGB colour component (as URDF colours are picked, by eye) in glTF's linear space."""
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _material(rgba: tuple[float, ...]) -> dict:
    material = {
        "pbrMetallicRoughness": {
            "baseColorFactor": [*(_linear(float(c)) for c in rgba[:3]), float(rgba[3])],
            "metallicFactor": 0.0,
            "roughnessFactor": 0.8,
        }
    }
    if rgba[3] < 1.0:
        material["alphaMode"] = "BLEND"
    return material


def _meshes(body: Body, buf: _Buffer) -> tuple[list[dict | None], list[dict]]:
    """A mesh per link (None for a link without shapes), one primitive per visual shape."""
    meshes: list[dict | None] = []
    materials: dict[tuple[float, ...], int] = {}
    for name, visuals in zip(body.names, body.visuals, strict=True):
        primitives = []
        for v in visuals:
            verts, normals, tris = mesh(v)
            index_type = np.uint16 if len(verts) < 65536 else np.uint32
            material = materials.setdefault(tuple(v.rgba), len(materials))
            primitives.append(
                {
                    "attributes": {
                        "POSITION": buf.add(verts.astype(np.float32), ARRAY_BUFFER, True),
                        "NORMAL": buf.add(normals.astype(np.float32), ARRAY_BUFFER),
                    },
                    "indices": buf.add(tris.astype(index_type).ravel(), ELEMENT_ARRAY_BUFFER),
                    "material": material,
                }
            )
        meshes.append({"name": name, "primitives": primitives} if primitives else None)
    return meshes, [_material(rgba) for rgba in materials]


def export_glb(log: Mapping[str, np.ndarray], body: Body, path: str | Path) -> Path:
    """Write run log `log` (its link poses) on `body` as binary glTF 2.0 at `path`."""
    t = np.asarray(log["t"], dtype=float)
    if len(t) < 2 or not np.all(np.diff(t) > 0):
        raise ExportError("the run log's times `t` must rise, over at least 2 samples")
    pos, quat = np.asarray(log["link_pos"], float), np.asarray(log["link_quat"], float)
    root = body.parents.index(-1)
    local = local_quats(quat, body.parents)
    buf = _Buffer()
    meshes, materials = _meshes(body, buf)
    nodes: list[dict] = [{"name": ROOT_NODE, "rotation": Y_UP_QUAT, "children": [1 + root]}]
    used_meshes: list[dict] = []
    for i, name in enumerate(body.names):
        translation = pos[0, i] if i == root else body.offsets[i]
        node: dict = {
            "name": name,
            "translation": [float(x) for x in translation],
            "rotation": [float(x) for x in local[0, i]],
        }
        children = body.children(i)
        if children:
            node["children"] = [1 + k for k in children]
        if meshes[i] is not None:
            node["mesh"] = len(used_meshes)
            used_meshes.append(meshes[i])
        nodes.append(node)
    # the animation: one time accessor shared by every sampler, keys from 0 s
    times = buf.add((t - t[0]).astype(np.float32), bounds=True)
    samplers = [{"input": times, "output": buf.add(pos[:, root].astype(np.float32))}]
    channels = [{"sampler": 0, "target": {"node": 1 + root, "path": "translation"}}]
    for i in range(len(body.names)):
        samplers.append({"input": times, "output": buf.add(local[:, i].astype(np.float32))})
        channels.append(
            {"sampler": len(samplers) - 1, "target": {"node": 1 + i, "path": "rotation"}}
        )
    for sampler in samplers:
        sampler["interpolation"] = "LINEAR"
    gltf = {
        "asset": {"version": "2.0", "generator": "quadsim export"},
        "scene": 0,
        "scenes": [{"name": "run", "nodes": [0]}],
        "nodes": nodes,
        "meshes": used_meshes,
        "materials": materials,
        "animations": [{"name": "run", "samplers": samplers, "channels": channels}],
        "accessors": buf.accessors,
        "bufferViews": buf.views,
        "buffers": [{"byteLength": buf.length}],
    }
    if not used_meshes:
        del gltf["meshes"], gltf["materials"]
    text = json.dumps(gltf, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)  # the JSON chunk pads with spaces to 4 bytes
    total = 12 + 8 + len(text) + 8 + buf.length
    out = Path(path)
    with out.open("wb") as f:
        f.write(struct.pack("<4sII", b"glTF", 2, total))
        f.write(struct.pack("<I4s", len(text), b"JSON") + text)
        f.write(struct.pack("<I4s", buf.length, b"BIN\0"))
        for chunk in buf.chunks:
            f.write(chunk)
    return out
