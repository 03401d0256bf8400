"""A run log's motion for other programs: BVH (Blender, motion-capture tools) and binary glTF
(.glb: Blender, three.js, any glTF viewer). Both read the log's link poses (`link_pos`,
`link_quat`) and the body from the URDF the run simulated (`urdf`); see docs/export.md."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from quadsim.export.body import NEEDED, Body, ExportError, Visual, body_from_urdf, body_of_log
from quadsim.export.bvh import export_bvh
from quadsim.export.glb import export_glb
from quadsim.export.html import export_html
from quadsim.runlog import load_log

__all__ = [
    "FORMATS",
    "NEEDED",
    "Body",
    "ExportError",
    "Visual",
    "body_from_urdf",
    "body_of_log",
    "check_output",
    "check_replay",
    "export",
    "export_bvh",
    "export_glb",
    "export_html",
    "export_log",
    "replay",
]

# the writer of each output suffix
FORMATS: dict[str, Callable[[Mapping[str, np.ndarray], Body, str | Path], Path]] = {
    ".bvh": export_bvh,
    ".glb": export_glb,
    ".html": export_html,
}


def check_output(path: str | Path) -> Path:
    """`path` as an export's output: a known suffix, in a folder that exists."""
    out = Path(path)
    if out.suffix.lower() not in FORMATS:
        raise ExportError(
            f"cannot export to {str(out)!r}: unknown format {out.suffix or '(no suffix)'!r}; "
            f"formats: {', '.join(FORMATS)}"
        )
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise ExportError(f"cannot write {str(out)!r}: folder {str(folder)!r} does not exist")
    if out.is_dir():
        raise ExportError(f"cannot write {str(out)!r}: it is a directory")
    return out


def export_log(log: Mapping[str, np.ndarray], out_path: str | Path) -> Path:
    """Write run log arrays `log` to `out_path`, in the format its suffix names."""
    out = check_output(out_path)
    return FORMATS[out.suffix.lower()](log, body_of_log(log), out)


def export(log_path: str | Path, out_path: str | Path) -> Path:
    """Write the run log at `log_path` (.npz) to `out_path`, as its suffix says (.bvh, .glb,
    .html)."""
    check_output(out_path)  # before reading a large log
    return export_log(load_log(log_path, required=()), out_path)


def check_replay(path: str | Path) -> Path:
    """`path` as a replay's output: an .html file in a folder that exists."""
    if Path(path).suffix.lower() != ".html":
        raise ExportError(f"a replay is written to an .html file, got {str(path)!r}")
    return check_output(path)


def replay(log_path: str | Path, out_path: str | Path) -> Path:
    """Write the run log at `log_path` (.npz) as a self-contained HTML replay `out_path`."""
    check_replay(out_path)
    return export(log_path, out_path)
