"""Motion capture: markers in the world frame, loaded from the dog clips or a CSV, turned to
travel along +x, and scaled by leg length (the Froude rule).

World frame throughout (the project's): z up, x forward, y left, SI units.

Two file formats are read by :func:`load_reference`:

* the dog motion-capture format (``*_joint_pos.txt``): one frame per line, 81
  comma-separated floats = 27 markers x 3, 60 Hz, y-up, the dog walking roughly
  along +z. Converted to z-up (world x = raw z, y = raw x, z = raw y, a proper
  rotation) and, by default, turned about z so that the net travel of the pelvis is
  along +x and the pelvis starts above the origin. Column 1 duplicates the pelvis
  (column 0) and is dropped, so the motion holds the 26 :data:`MARKER_NAMES`.
  Data: Zhang, Starke, Komura, Saito, "Mode-Adaptive Neural Networks for Quadruped
  Motion Control" (SIGGRAPH 2018), CC BY-NC 4.0 -- see :data:`MOCAP_ATTRIBUTION`.
* a plain CSV with columns ``t, marker, x, y, z`` (header optional), already in
  the world frame, one row per marker per frame, every frame with the same markers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from quadsim.mocap.errors import ReferenceAnalysisError, ReferenceFormatError
from quadsim.models import GRAVITY_MPS2
from quadsim.models import LEGS as FEET

TOE_MARKERS: dict[str, str] = {f: f"{f}_toe" for f in FEET}

#: Canonical marker names, in the order of the mocap columns (pelvis duplicate dropped).
#: The simulated dog emits markers under these names.
MARKER_NAMES: tuple[str, ...] = (
    "pelvis",
    "mid_spine",
    "neck_base",
    "mid_neck",
    "head",
    "LF_scapula",
    "LF_shoulder",
    "LF_elbow",
    "LF_wrist",
    "LF_toe",
    "RF_scapula",
    "RF_shoulder",
    "RF_elbow",
    "RF_wrist",
    "RF_toe",
    "LH_hip",
    "LH_knee",
    "LH_hock",
    "LH_toe",
    "RH_hip",
    "RH_knee",
    "RH_hock",
    "RH_toe",
    "tail_base",
    "tail_mid",
    "tail_tip",
)

#: Mocap column (marker index 0..26) of each canonical marker; column 1 (pelvis copy) unused.
MOCAP_COLUMNS: dict[str, int] = {
    name: (0 if i == 0 else i + 1) for i, name in enumerate(MARKER_NAMES)
}
MOCAP_N_MARKERS = 27
MOCAP_FPS = 60.0
MOCAP_ATTRIBUTION = (
    "Dog mocap: Zhang, Starke, Komura, Saito, Mode-Adaptive Neural Networks for "
    "Quadruped Motion Control (SIGGRAPH 2018), CC BY-NC 4.0"
)
#: Markers whose height above ground defines the leg length (shoulder / hip joints).
LEG_ROOT_MARKERS: dict[str, str] = {
    "LF": "LF_shoulder",
    "RF": "RF_shoulder",
    "LH": "LH_hip",
    "RH": "RH_hip",
}


@dataclass(frozen=True)
class ReferenceMotion:
    """Marker trajectories in the world frame.

    t: (T,) [s]; markers: (T, M, 3) [m]; marker_names: M unique names; fps: [1/s];
    source: file path or a description; attribution: licence line to show with any
    figure derived from the data (None if none is needed).
    """

    t: np.ndarray
    markers: np.ndarray
    marker_names: tuple[str, ...]
    fps: float
    source: str = ""
    attribution: str | None = None

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float)
        m = np.asarray(self.markers, dtype=float)
        names = tuple(str(n) for n in self.marker_names)
        if m.ndim != 3 or m.shape[2] != 3 or m.shape[0] != t.shape[0] or m.shape[1] != len(names):
            raise ReferenceFormatError(
                f"{self.source or 'reference'}: markers must be (T, M, 3) with T={t.shape[0]} "
                f"and M={len(names)}, got {m.shape}"
            )
        if len(set(names)) != len(names):
            raise ReferenceFormatError(f"{self.source or 'reference'}: duplicate marker names")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "markers", m)
        object.__setattr__(self, "marker_names", names)

    @property
    def n_frames(self) -> int:
        return int(self.t.shape[0])

    @property
    def duration_s(self) -> float:
        """Duration [s] counting the last frame's own interval (n_frames / fps)."""
        return self.n_frames / self.fps

    def index(self, name: str) -> int:
        try:
            return self.marker_names.index(name)
        except ValueError:
            raise KeyError(
                f"no marker {name!r}; markers are: {', '.join(self.marker_names)}"
            ) from None

    def has(self, name: str) -> bool:
        return name in self.marker_names

    def marker(self, name: str) -> np.ndarray:
        """(T, 3) trajectory of one marker [m]."""
        return self.markers[:, self.index(name), :]

    def slice(self, start: int, stop: int) -> ReferenceMotion:
        """Frames [start, stop) as a new motion (time kept)."""
        return replace(self, t=self.t[start:stop], markers=self.markers[start:stop])


# --------------------------------------------------------------------------- loading


def load_reference(path: str | Path, *, align: bool = True) -> ReferenceMotion:
    """Load a mocap ``*_joint_pos.txt`` file or a ``t,marker,x,y,z`` CSV.

    The format is told from the content: a first data line of 81 numbers is mocap;
    5 fields with a non-numeric second field is the CSV. ``align`` turns a mocap clip
    so that it travels along +x (CSV files are taken as they are).
    Raises ReferenceFormatError naming the file, the line and the problem.
    """
    p = Path(path)
    lines = _read_lines(p)
    first = next(((i, ln) for i, ln in enumerate(lines, 1) if ln.strip()), None)
    if first is None:
        raise ReferenceFormatError(f"{p}: file is empty")
    lineno, line = first
    fields = [f.strip() for f in line.split(",")]
    if len(fields) == 5 and not _is_float(fields[1]):
        return _parse_csv(p, lines)
    if len(fields) == MOCAP_N_MARKERS * 3:
        return _parse_mocap(p, lines, align=align)
    raise ReferenceFormatError(
        f"{p}:{lineno}: cannot tell the format: expected {MOCAP_N_MARKERS * 3} "
        f"comma-separated numbers (mocap) or 5 columns t,marker,x,y,z (CSV), "
        f"got {len(fields)} fields"
    )


def load_mocap(path: str | Path, *, align: bool = True) -> ReferenceMotion:
    """Load the dog mocap format (81 floats per line, 60 Hz, y-up) into the world frame."""
    p = Path(path)
    return _parse_mocap(p, _read_lines(p), align=align)


def load_marker_csv(path: str | Path) -> ReferenceMotion:
    """Load a ``t, marker, x, y, z`` CSV (world frame, header optional)."""
    p = Path(path)
    return _parse_csv(p, _read_lines(p))


def _read_lines(p: Path) -> list[str]:
    try:
        return p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ReferenceFormatError(f"{p}: reference file not found") from None
    except IsADirectoryError:
        raise ReferenceFormatError(f"{p}: is a directory, expected a reference file") from None
    except UnicodeDecodeError as e:
        raise ReferenceFormatError(f"{p}: not a text file ({e.reason})") from None


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _parse_mocap(p: Path, lines: list[str], *, align: bool) -> ReferenceMotion:
    rows: list[list[float]] = []
    n_expected = MOCAP_N_MARKERS * 3
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fields = line.split(",")
        if len(fields) != n_expected:
            raise ReferenceFormatError(
                f"{p}:{lineno}: expected {n_expected} comma-separated values "
                f"({MOCAP_N_MARKERS} markers x 3), got {len(fields)}"
            )
        try:
            vals = [float(f) for f in fields]
        except ValueError:
            bad = next(f for f in fields if not _is_float(f))
            raise ReferenceFormatError(f"{p}:{lineno}: not a number: {bad.strip()!r}") from None
        if not all(math.isfinite(v) for v in vals):
            raise ReferenceFormatError(f"{p}:{lineno}: non-finite value")
        rows.append(vals)
    if len(rows) < 2:
        raise ReferenceFormatError(f"{p}: need at least 2 frames, got {len(rows)}")
    raw = np.asarray(rows).reshape(len(rows), MOCAP_N_MARKERS, 3)
    cols = [MOCAP_COLUMNS[n] for n in MARKER_NAMES]
    # y-up (x, y, z) -> z-up world: world x = raw z, world y = raw x, world z = raw y.
    world = raw[:, cols, :][:, :, [2, 0, 1]]
    t = np.arange(len(rows)) / MOCAP_FPS
    motion = ReferenceMotion(
        t=t,
        markers=world,
        marker_names=MARKER_NAMES,
        fps=MOCAP_FPS,
        source=str(p),
        attribution=MOCAP_ATTRIBUTION,
    )
    return heading_align(motion) if align else motion


def _parse_csv(p: Path, lines: list[str]) -> ReferenceMotion:
    frames: dict[float, dict[str, tuple[float, float, float]]] = {}
    first_line: dict[float, int] = {}
    order: list[str] = []
    header_skipped = False
    for lineno, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 5:
            raise ReferenceFormatError(
                f"{p}:{lineno}: expected 5 columns t,marker,x,y,z, got {len(fields)}"
            )
        if not header_skipped and not frames and not _is_float(fields[0]):
            header_skipped = True
            continue
        try:
            t, x, y, z = (float(fields[i]) for i in (0, 2, 3, 4))
        except ValueError:
            raise ReferenceFormatError(
                f"{p}:{lineno}: t, x, y, z must be numbers, got {fields[0]!r}, "
                f"{fields[2]!r}, {fields[3]!r}, {fields[4]!r}"
            ) from None
        name = fields[1]
        if not name:
            raise ReferenceFormatError(f"{p}:{lineno}: empty marker name")
        if not all(math.isfinite(v) for v in (t, x, y, z)):
            raise ReferenceFormatError(f"{p}:{lineno}: non-finite value")
        frame = frames.setdefault(t, {})
        first_line.setdefault(t, lineno)
        if name in frame:
            raise ReferenceFormatError(f"{p}:{lineno}: marker {name!r} repeated at t={t}")
        frame[name] = (x, y, z)
        if len(frames) == 1 and name not in order:
            order.append(name)
    if len(frames) < 2:
        raise ReferenceFormatError(f"{p}: need at least 2 frames, got {len(frames)}")
    ts = sorted(frames)
    for t in ts:
        if set(frames[t]) != set(order):
            missing = sorted(set(order) - set(frames[t]))
            extra = sorted(set(frames[t]) - set(order))
            raise ReferenceFormatError(
                f"{p}:{first_line[t]}: frame t={t} has a different marker set "
                f"(missing {missing}, extra {extra}) than the first frame"
            )
    markers = np.array([[frames[t][n] for n in order] for t in ts], dtype=float)
    t_arr = np.asarray(ts)
    dt = float(np.median(np.diff(t_arr)))
    return ReferenceMotion(
        t=t_arr, markers=markers, marker_names=tuple(order), fps=1.0 / dt, source=str(p)
    )


def yaw_rotation(yaw: float) -> np.ndarray:
    """The rotation (3, 3) by `yaw` [rad] about the vertical."""
    return Rotation.from_euler("z", yaw).as_matrix()


def root_marker(motion: ReferenceMotion) -> str | None:
    for n in ("pelvis", "mid_spine"):
        if motion.has(n):
            return n
    return None


def heading_align(motion: ReferenceMotion) -> ReferenceMotion:
    """Rotate about z so the net pelvis travel is along +x; pelvis starts above (0, 0).

    With no net travel (< 5 cm) the pelvis->neck_base direction gives the heading.
    """
    root = root_marker(motion)
    if root is None:
        return motion
    r = motion.marker(root)
    d = r[-1, :2] - r[0, :2]
    if np.hypot(*d) < 0.05 and motion.has("neck_base"):
        d = (motion.marker("neck_base") - r)[:, :2].mean(axis=0)
    yaw = math.atan2(d[1], d[0])
    R = yaw_rotation(-yaw)
    origin = np.array([r[0, 0], r[0, 1], 0.0])
    return replace(motion, markers=(motion.markers - origin) @ R.T)


# --------------------------------------------------------------------------- scaling


def leg_length(motion: ReferenceMotion, *, stance: np.ndarray | None = None) -> float:
    """Leg length [m]: median height of the shoulder and hip joints above the ground
    (over stance frames of each leg when ``stance`` is given)."""
    hs = []
    for j, foot in enumerate(FEET):
        name = LEG_ROOT_MARKERS[foot]
        if not motion.has(name):
            continue
        z = motion.marker(name)[:, 2]
        if stance is not None and stance[:, j].any():
            z = z[stance[:, j]]
        hs.append(float(np.median(z)))
    if not hs:
        raise ReferenceAnalysisError(
            f"{motion.source}: no shoulder/hip markers ({', '.join(LEG_ROOT_MARKERS.values())})"
        )
    return float(np.mean(hs))


def froude_number(speed_mps: float, leg_length_m: float) -> float:
    """Fr = v^2 / (g L) (dimensionless)."""
    return speed_mps**2 / (GRAVITY_MPS2 * leg_length_m)


def froude_speed(speed_mps: float, leg_length_from_m: float, leg_length_to_m: float) -> float:
    """Dynamically similar speed for another leg length: v ~ sqrt(L)."""
    return speed_mps * math.sqrt(leg_length_to_m / leg_length_from_m)


def scale_motion(motion: ReferenceMotion, factor: float) -> ReferenceMotion:
    """Geometric scale by ``factor`` (positions) with Froude time scaling (t * sqrt(factor)),
    so speeds scale by sqrt(factor) and the Froude number is kept."""
    ts = math.sqrt(factor)
    return replace(motion, t=motion.t * ts, markers=motion.markers * factor, fps=motion.fps / ts)
