"""BVH (Biovision hierarchy) of a run: the link tree as joints, the motion at the log's rate.

Y up, as BVH readers expect: the simulator's world (z up, x forward) turned -90 degrees
about x, so Blender's importer (forward -Z, up Y, its defaults) puts the dog back z up and
x forward. Metres. The root carries 6 channels (position, then rotation), every other joint
3; rotations are intrinsic Z, X, Y in degrees (R = Rz Rx Ry), the roll (X) in the middle,
where a dog's angles stay small, so the Euler angles never lock.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from quadsim.export.body import Body, ExportError, local_rotations

# the simulator's world (z up) into BVH's (y up): (x, y, z) -> (x, z, -y)
Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
ROTATION_CHANNELS = "Zrotation Xrotation Yrotation"
# log samples may be this far (a fraction of the step) from an even rate [-]
UNEVEN_TOLERANCE = 0.01


def frame_time(t: np.ndarray) -> float:
    """The log's step [s], which must be even: BVH has one frame time."""
    steps = np.diff(np.asarray(t, dtype=float))
    dt = float(np.median(steps))
    if not dt > 0 or np.max(np.abs(steps - dt)) > UNEVEN_TOLERANCE * dt:
        raise ExportError("the run log's times `t` must rise in even steps")
    return dt


def zxy_degrees(rot: np.ndarray) -> np.ndarray:
    """Euler angles (..., 3) [deg] (z, x, y) with rot = Rz Rx Ry, from matrices (..., 3, 3)."""
    x = np.arcsin(np.clip(rot[..., 2, 1], -1.0, 1.0))
    z = np.arctan2(-rot[..., 0, 1], rot[..., 1, 1])
    y = np.arctan2(-rot[..., 2, 0], rot[..., 2, 2])
    return np.degrees(np.stack([z, x, y], axis=-1))


def end_site(body: Body, i: int) -> np.ndarray:
    """Where a leaf link's bone ends, in its frame [m]: the far end of its first capsule or
    cylinder, twice the centre of another shape, or 5 cm down if it has none."""
    for v in body.visuals[i]:
        centre = np.array(v.pos)
        if v.kind in ("capsule", "cylinder"):
            axis = np.array(v.rot)[:, 2] * 0.5 * v.size[1]
            ends = (centre + axis, centre - axis)
            return max(ends, key=lambda e: float(np.linalg.norm(e)))
        if np.linalg.norm(centre) > 1e-3:
            return 2.0 * centre
    return np.array([0.0, 0.0, -0.05])


def _hierarchy(body: Body) -> str:
    lines: list[str] = []

    def joint(i: int, depth: int) -> None:
        pad = "  " * depth
        kind = "ROOT" if body.parents[i] < 0 else "JOINT"
        offset = Y_UP @ body.offsets[i]
        lines.append(f"{pad}{kind} {body.names[i]}")
        lines.append(f"{pad}{{")
        lines.append(f"{pad}  OFFSET {offset[0]:.6f} {offset[1]:.6f} {offset[2]:.6f}")
        if kind == "ROOT":
            lines.append(f"{pad}  CHANNELS 6 Xposition Yposition Zposition {ROTATION_CHANNELS}")
        else:
            lines.append(f"{pad}  CHANNELS 3 {ROTATION_CHANNELS}")
        children = body.children(i)
        for k in children:
            joint(k, depth + 1)
        if not children:
            end = Y_UP @ end_site(body, i)
            lines.append(f"{pad}  End Site")
            lines.append(f"{pad}  {{")
            lines.append(f"{pad}    OFFSET {end[0]:.6f} {end[1]:.6f} {end[2]:.6f}")
            lines.append(f"{pad}  }}")
        lines.append(f"{pad}}}")

    joint(body.parents.index(-1), 0)
    return "\n".join(["HIERARCHY", *lines, ""])


def export_bvh(log: Mapping[str, np.ndarray], body: Body, path: str | Path) -> Path:
    """Write the motion of run log `log` (its link poses) on `body` as BVH at `path`."""
    dt = frame_time(log["t"])
    pos, quat = np.asarray(log["link_pos"], float), np.asarray(log["link_quat"], float)
    order = body.depth_first()
    root = order[0]
    # each joint's rotation relative to its parent's, turned into BVH's y-up axes
    rot = Y_UP @ local_rotations(quat, body.parents)[:, order] @ Y_UP.T
    # Euler angles jump by 360 degrees where they wrap; unwrapped, a turn plays smoothly
    angles = np.degrees(np.unwrap(np.radians(zxy_degrees(rot)), axis=0))
    motion = np.concatenate([pos[:, root] @ Y_UP.T, angles.reshape(len(pos), -1)], axis=1)
    text = io.StringIO()
    text.write(_hierarchy(body))
    text.write(f"MOTION\nFrames: {len(motion)}\nFrame Time: {dt:.6f}\n")
    # 10 um and 1e-4 degrees: far below what a viewer shows; 7.6 MB a simulated minute
    np.savetxt(text, motion, fmt=["%.5f"] * 3 + ["%.4f"] * (motion.shape[1] - 3))
    out = Path(path)
    out.write_text(text.getvalue())
    return out
