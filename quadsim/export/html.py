"""A run as one self-contained HTML page that replays it in the browser: meshcat's viewer
(three.js with an orbit camera, and an animation player with play, pause, a time scrubber
and a time scale) inlined with the dog's visual shapes, its link poses, the ground, and a
caption of the gait and speed. No network is needed to open it.

meshcat is the robotics field's web viewer (Drake and Pinocchio use it); only the browser
bundle of its Python package (`pip install "quadsim[view]"`) is read, never its server."""

from __future__ import annotations

import base64
import importlib.util
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

import numpy as np

from quadsim.export.body import Body, ExportError, Visual
from quadsim.export.shapes import mesh

FPS = 30.0  # [frames/s] of the replay: smooth to the eye, a seventh of the log's samples
GROUND_RGB = ((0.80, 0.80, 0.78), (0.62, 0.66, 0.72))  # 1 m tiles: the eye reads speed off them
TILE_M = 1.0
TERRAIN_RGB = (0.55, 0.50, 0.45)
GROUND_MARGIN_M = 5.0  # the ground reaches this far beyond where the dog went


def viewer_bundle() -> str:
    """meshcat's browser bundle (three.js and its viewer), from the installed package."""
    spec = importlib.util.find_spec("meshcat")  # found, not imported: its server is not needed
    try:
        bundle = Path(spec.origin).parent / "viewer" / "dist" / "main.min.js"
        return bundle.read_text(encoding="utf-8")
    except (AttributeError, TypeError, FileNotFoundError) as err:
        raise ExportError(
            'an HTML replay needs meshcat\'s viewer: pip install "quadsim[view]"'
        ) from err


def _rgb_hex(rgba: tuple[float, ...]) -> int:
    r, g, b = (int(round(255 * min(max(c, 0.0), 1.0))) for c in rgba[:3])
    return (r << 16) | (g << 8) | b


def _mesh_json(name: str, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]) -> dict:
    """A three.js JSON object: a group of meshes, one per colour; parts are (positions,
    normals, triangles, colour) in the group's frame."""
    geometries, materials, children = [], [], []
    for k, (pos, nrm, tri, colour) in enumerate(parts):
        uid = f"{name}-{k}"
        geometries.append(
            {
                "uuid": f"g-{uid}",
                "type": "BufferGeometry",
                "data": {
                    "attributes": {
                        "position": _attribute(pos),
                        "normal": _attribute(nrm),
                    },
                    "index": {"type": "Uint32Array", "array": tri.ravel().tolist()},
                },
            }
        )
        materials.append({"uuid": f"m-{uid}", "type": "MeshLambertMaterial", "color": colour})
        children.append(
            {"uuid": f"o-{uid}", "type": "Mesh", "geometry": f"g-{uid}", "material": f"m-{uid}"}
        )
    return {
        "metadata": {"version": 4.5, "type": "Object"},
        "geometries": geometries,
        "materials": materials,
        "object": {"uuid": f"o-{name}", "type": "Group", "children": children},
    }


def _attribute(values: np.ndarray) -> dict:
    rounded = np.round(np.asarray(values, dtype=float), 4).ravel().tolist()
    return {"itemSize": 3, "type": "Float32Array", "array": rounded, "normalized": False}


def _link_parts(body: Body, i: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    """The visual shapes of link i merged into one mesh per colour."""
    by_colour: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    for visual in body.visuals[i]:
        by_colour.setdefault(_rgb_hex(visual.rgba), []).append(mesh(visual))
    parts = []
    for colour, meshes in by_colour.items():
        offsets = np.cumsum([0] + [len(v) for v, _, _ in meshes[:-1]])
        pos = np.concatenate([v for v, _, _ in meshes])
        nrm = np.concatenate([n for _, n, _ in meshes])
        tri = np.concatenate([t + o for (_, _, t), o in zip(meshes, offsets, strict=True)])
        parts.append((pos, nrm, tri, colour))
    return parts


def _box(lo: tuple[float, float, float], hi: tuple[float, float, float]) -> tuple:
    """(positions, normals, triangles) of the box between corners lo and hi [m]."""
    lo_a, hi_a = np.array(lo, dtype=float), np.array(hi, dtype=float)
    centre = tuple(0.5 * (lo_a + hi_a))
    return mesh(
        Visual("box", tuple(hi_a - lo_a), centre, tuple(map(tuple, np.eye(3))), (1, 1, 1, 1))
    )


def _field(origin_x: float, origin_y: float, cell: float, heights: np.ndarray) -> tuple:
    """(positions, normals, triangles) of a heightfield's surface [m]."""
    nx, ny = heights.shape
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    pos = np.column_stack(
        [origin_x + cell * i.ravel(), origin_y + cell * j.ravel(), heights.ravel()]
    )
    gx, gy = np.gradient(heights.astype(float), cell)
    nrm = np.column_stack([-gx.ravel(), -gy.ravel(), np.ones(nx * ny)])
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    a = (i[:-1, :-1] * ny + j[:-1, :-1]).ravel()
    tri = np.concatenate(
        [np.column_stack([a, a + ny, a + ny + 1]), np.column_stack([a, a + ny + 1, a + 1])]
    )
    return pos, nrm, tri


def _tiles(x0: int, x1: int, y0: int, y1: int, parity: int) -> tuple:
    """(positions, normals, triangles) of the ground's tiles from (x0, y0) to (x1, y1) [tiles]
    whose x + y index has `parity`, facing up."""
    i, j = np.meshgrid(np.arange(x0, x1), np.arange(y0, y1), indexing="ij")
    keep = (i + j) % 2 == parity
    cx, cy = TILE_M * i[keep].astype(float), TILE_M * j[keep].astype(float)
    corners = [(0, 0), (1, 0), (1, 1), (0, 1)]
    pos = np.stack(
        [
            np.column_stack([cx + TILE_M * a, cy + TILE_M * b, np.zeros_like(cx)])
            for a, b in corners
        ],
        axis=1,
    ).reshape(-1, 3)
    nrm = np.tile([0.0, 0.0, 1.0], (len(pos), 1))
    base = 4 * np.arange(len(cx))[:, None]
    tri = np.concatenate([base + [0, 1, 2], base + [0, 2, 3]])
    return pos, nrm, tri


def _ground(log: Mapping[str, np.ndarray]) -> dict:
    """The flat ground under where the dog went (tiled), the terrain's boxes and
    heightfields."""
    pos = np.asarray(log["link_pos"])
    lo = np.floor((pos[..., :2].reshape(-1, 2).min(axis=0) - GROUND_MARGIN_M) / TILE_M)
    hi = np.ceil((pos[..., :2].reshape(-1, 2).max(axis=0) + GROUND_MARGIN_M) / TILE_M)
    (x0, y0), (x1, y1) = lo.astype(int), hi.astype(int)
    parts = [(*_tiles(x0, x1, y0, y1, p), _rgb_hex(GROUND_RGB[p])) for p in (0, 1)]
    terrain = _rgb_hex(TERRAIN_RGB)
    for bx0, bx1, by0, by1, top in np.asarray(log.get("ground_boxes", np.zeros((0, 5)))):
        parts.append((*_box((bx0, by0, 0.0), (bx1, by1, top)), terrain))
    for k, (fx, fy, cell) in enumerate(np.asarray(log.get("ground_fields", np.zeros((0, 3))))):
        parts.append((*_field(fx, fy, cell, np.asarray(log[f"ground_field_{k}"])), terrain))
    return _mesh_json("ground", parts)


def _frames(t: np.ndarray, fps: float) -> np.ndarray:
    """Indices of the log samples nearest to the replay's frames."""
    times = np.arange(t[0], t[-1] + 0.5 / fps, 1.0 / fps)
    return np.clip(np.searchsorted(t, times), 0, len(t) - 1)


def _captions(log: Mapping[str, np.ndarray], root: int, rows: np.ndarray) -> list[str]:
    """Per frame: the gait (where the log names it), the root link's horizontal speed
    [m/s] and the commanded speed (where the log has it)."""
    t = np.asarray(log["t"], dtype=float)
    names = [str(n) for n in np.atleast_1d(log.get("gait_names", np.array([""])))]
    index = np.rint(np.asarray(log.get("gait_index", np.zeros(len(t))))).astype(int)
    root_xy = np.asarray(log["link_pos"])[:, root, :2]
    speed = np.hypot(*np.gradient(root_xy, t, axis=0).T) if len(t) > 1 else np.zeros(len(t))
    cmd = log.get("speed_cmd")
    out = []
    for r in rows:
        text = f"{names[index[r]]}  {speed[r]:.2f} m/s".strip()
        out.append(text + (f" (command {float(cmd[r]):.2f})" if cmd is not None else ""))
    return out


def export_html(
    log: Mapping[str, np.ndarray], body: Body, path: str | Path, fps: float = FPS
) -> Path:
    """Write the replay of run log arrays `log` (the dog `body`) to `path`."""
    bundle = viewer_bundle()
    t = np.asarray(log["t"], dtype=float)
    rows = _frames(t, fps)
    pos = np.asarray(log["link_pos"], dtype=np.float32)[rows]  # (F, L, 3)
    quat = np.asarray(log["link_quat"], dtype=np.float32)[rows]  # (F, L, 4) xyzw, as three.js
    times = (t[rows] - t[0]).astype(np.float32)
    links = [
        {"path": f"/meshcat/dog/{name}", "object": _mesh_json(name, _link_parts(body, i))}
        for i, name in enumerate(body.names)
    ]
    motion = np.concatenate(
        [times, pos.transpose(1, 0, 2).ravel(), quat.transpose(1, 0, 2).ravel()]
    )
    scene = {
        "links": links,
        "ground": _ground(log),
        "frames": len(rows),
        "fps": fps,
        "motion": base64.b64encode(motion.astype("<f4").tobytes()).decode("ascii"),
        "captions": _captions(log, body.parents.index(-1), rows),
        "pelvis": body.parents.index(-1),
    }
    page = resources.files("quadsim.export").joinpath("replay.html").read_text(encoding="utf-8")
    page = page.replace("/*BUNDLE*/", bundle.replace("</script", "<\\/script"))
    page = page.replace("/*SCENE*/null", json.dumps(scene, separators=(",", ":")))
    out = Path(path)
    out.write_text(page, encoding="utf-8")
    return out
