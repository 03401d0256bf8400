"""Reference motion: loading, footfall analysis, stride cycles, scaling, synthesis.

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

Footfalls: a foot is in stance when its toe is within ``contact_height_m`` of the
ground and its horizontal speed is below ``contact_speed_mps`` (default:
0.8 x the body speed clipped to [0.3, 1] m/s). Phases are fractions of the stride period in [0, 1);
phase offsets are touchdown phases relative to the left hind foot (LH), as in the
run summary of DESIGN.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from quadsim.optimize.errors import ReferenceAnalysisError, ReferenceFormatError

__all__ = [
    "FEET",
    "TOE_MARKERS",
    "MARKER_NAMES",
    "MOCAP_COLUMNS",
    "MOCAP_ATTRIBUTION",
    "GRAVITY_MPS2",
    "ReferenceMotion",
    "GaitStats",
    "StrideCycle",
    "load_reference",
    "load_mocap",
    "load_marker_csv",
    "heading_align",
    "detect_stance",
    "analyze_footfalls",
    "extract_strides",
    "body_relative",
    "leg_length",
    "froude_number",
    "froude_speed",
    "scale_motion",
    "synthetic_reference",
]

GRAVITY_MPS2 = 9.81
FEET: tuple[str, ...] = ("LF", "RF", "LH", "RH")
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


def _yaw_rotation(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _root_name(motion: ReferenceMotion) -> str | None:
    for n in ("pelvis", "mid_spine"):
        if motion.has(n):
            return n
    return None


def heading_align(motion: ReferenceMotion) -> ReferenceMotion:
    """Rotate about z so the net pelvis travel is along +x; pelvis starts above (0, 0).

    With no net travel (< 5 cm) the pelvis->neck_base direction gives the heading.
    """
    root = _root_name(motion)
    if root is None:
        return motion
    r = motion.marker(root)
    d = r[-1, :2] - r[0, :2]
    if np.hypot(*d) < 0.05 and motion.has("neck_base"):
        d = (motion.marker("neck_base") - r)[:, :2].mean(axis=0)
    yaw = math.atan2(d[1], d[0])
    R = _yaw_rotation(-yaw)
    origin = np.array([r[0, 0], r[0, 1], 0.0])
    return replace(motion, markers=(motion.markers - origin) @ R.T)


# --------------------------------------------------------------------------- footfalls


@dataclass(frozen=True)
class GaitStats:
    """Footfall statistics of a motion.

    stance: (T, 4) bool in FEET order; touchdowns/liftoffs: times [s] per foot;
    duty_factor: stance fraction per foot (median over complete strides);
    stride_period_s: median touchdown-to-touchdown interval; phase_offset: touchdown
    phase relative to LH in [0, 1); touchdown_order: feet sorted by phase offset,
    starting at LH; speed_mps: mean horizontal pelvis speed over the strides;
    strides: (start, stop) times [s] of the LH stride cycles used; periodic: the clip
    was analysed as exactly one cycle.
    """

    stance: np.ndarray
    touchdowns: dict[str, np.ndarray]
    liftoffs: dict[str, np.ndarray]
    duty_factor: dict[str, float]
    stride_period_s: float
    phase_offset: dict[str, float]
    touchdown_order: tuple[str, ...]
    speed_mps: float
    strides: tuple[tuple[float, float], ...]
    periodic: bool = False
    swing_intervals: dict[str, tuple[float, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary, keys as in the run summary of DESIGN.md."""
        return {
            "duty_factor": {k: round(v, 4) for k, v in self.duty_factor.items()},
            "phase_offset": {k: round(v, 4) for k, v in self.phase_offset.items()},
            "stride_period_s": round(self.stride_period_s, 4),
            "mean_speed_mps": round(self.speed_mps, 4),
            "touchdown_order": list(self.touchdown_order),
            "swing_intervals": {
                k: [round(a, 4), round(b, 4)] for k, (a, b) in self.swing_intervals.items()
            },
            "n_strides": len(self.strides),
            "periodic": self.periodic,
            "touchdowns_s": {
                k: [round(float(x), 4) for x in v] for k, v in self.touchdowns.items()
            },
        }


def _horizontal_speed(pos: np.ndarray, t: np.ndarray) -> np.ndarray:
    if len(t) < 2:
        return np.zeros(len(t))
    v = np.gradient(pos[:, :2], t, axis=0)
    return np.hypot(v[:, 0], v[:, 1])


def _clean_runs(mask: np.ndarray, min_run: int, periodic: bool) -> np.ndarray:
    """Flip runs shorter than ``min_run`` frames (debounce)."""
    m = mask.copy()
    n = len(m)
    if min_run <= 1 or n == 0:
        return m
    for _ in range(2):
        if periodic and not (m.all() or (~m).all()):
            shift = int(np.argmax(m != m[-1]))  # start of a run
            r = np.roll(m, -shift)
            r = _clean_runs(r, min_run, periodic=False)
            m = np.roll(r, shift)
            continue
        edges = np.flatnonzero(np.diff(m.astype(np.int8))) + 1
        bounds = np.concatenate([[0], edges, [n]])
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            inner = a > 0 and b < n
            if b - a < min_run and (inner or periodic):
                m[a:b] = ~m[a]
    return m


def detect_stance(
    motion: ReferenceMotion,
    *,
    ground_z_m: float | None = None,
    contact_height_m: float = 0.03,
    contact_speed_mps: float | None = None,
    min_run_frames: int = 2,
    periodic: bool = False,
) -> np.ndarray:
    """(T, 4) stance mask in FEET order: toe within ``contact_height_m`` of the ground
    and horizontally slower than ``contact_speed_mps`` (default 0.8 x body speed, clipped
    to [0.3, 1.0] m/s).

    ground_z_m: ground height [m]; None measures it per foot as the 25th percentile of the
    toe marker's height over its slow frames (a toe-tip marker sits some mm above the sole).
    """
    t = motion.t
    if contact_speed_mps is None:
        root = _root_name(motion)
        body = float(np.median(_horizontal_speed(motion.marker(root), t))) if root else 0.0
        contact_speed_mps = min(1.0, max(0.3, 0.8 * body))
    out = np.zeros((motion.n_frames, len(FEET)), dtype=bool)
    for j, foot in enumerate(FEET):
        toe = motion.marker(TOE_MARKERS[foot])
        slow = _horizontal_speed(toe, t) < contact_speed_mps
        if ground_z_m is None:
            z_slow = toe[slow, 2] if slow.any() else toe[:, 2]
            ground = float(np.percentile(z_slow, 25))
        else:
            ground = ground_z_m
        low = toe[:, 2] - ground < contact_height_m
        out[:, j] = _clean_runs(low & slow, min_run_frames, periodic)
    return out


def _circ_mean01(x: np.ndarray) -> float:
    a = 2 * np.pi * np.asarray(x, dtype=float)
    return float((np.arctan2(np.sin(a).mean(), np.cos(a).mean()) / (2 * np.pi)) % 1.0)


def _circ_diff01(a: float, b: float) -> float:
    """Signed circular difference a - b in [-0.5, 0.5)."""
    return (a - b + 0.5) % 1.0 - 0.5


def analyze_footfalls(
    motion: ReferenceMotion,
    *,
    periodic: bool | None = None,
    min_speed_mps: float = 0.3,
    max_period_s: float = 2.0,
    **stance_kw: Any,
) -> GaitStats:
    """Footfalls, duty factors, stride period, phase offsets, touchdown order and speed.

    Strides are LH touchdown-to-touchdown cycles during which the body moves faster than
    ``min_speed_mps`` and that last less than ``max_period_s``; standing parts of a clip
    are ignored. ``periodic``: analyse the clip as exactly one cycle (the frame after the
    last is the first); None chooses it when some foot touches down fewer than twice.
    Raises ReferenceAnalysisError when no stride can be found.
    """
    if periodic is None:
        st = detect_stance(motion, periodic=False, **stance_kw)
        counts = [len(_edges(st[:, j], periodic=False)[0]) for j in range(len(FEET))]
        periodic = min(counts) < 2
    stance = detect_stance(motion, periodic=periodic, **stance_kw)
    t = motion.t
    dt = 1.0 / motion.fps
    td: dict[str, np.ndarray] = {}
    lo: dict[str, np.ndarray] = {}
    for j, foot in enumerate(FEET):
        a, b = _edges(stance[:, j], periodic=periodic)
        td[foot] = t[0] + a * dt if periodic else t[a]
        lo[foot] = t[0] + b * dt if periodic else t[b]
    root = _root_name(motion)
    if periodic:
        return _periodic_stats(motion, stance, td, lo, root)

    speed = _horizontal_speed(motion.marker(root), t) if root else np.zeros(len(t))
    per_foot_strides: dict[str, list[tuple[int, int]]] = {}
    for j, foot in enumerate(FEET):
        a, _ = _edges(stance[:, j], periodic=False)
        good = []
        for i0, i1 in zip(a[:-1], a[1:], strict=True):
            if (t[i1] - t[i0]) < max_period_s and speed[i0:i1].mean() > min_speed_mps:
                good.append((int(i0), int(i1)))
        per_foot_strides[foot] = good
    if not per_foot_strides["LH"]:
        raise ReferenceAnalysisError(
            f"{motion.source or 'motion'}: no complete moving LH stride found "
            f"(touchdowns: {', '.join(f'{k}={len(v)}' for k, v in td.items())})"
        )
    duty: dict[str, float] = {}
    periods: list[float] = []
    for j, foot in enumerate(FEET):
        fr = [stance[i0:i1, j].mean() for i0, i1 in per_foot_strides[foot]]
        periods += [t[i1] - t[i0] for i0, i1 in per_foot_strides[foot]]
        duty[foot] = float(np.median(fr)) if fr else float("nan")
    period = float(np.median(periods))
    lh = per_foot_strides["LH"]
    phase: dict[str, float] = {"LH": 0.0}
    for foot in FEET:
        if foot == "LH":
            continue
        ph = []
        for i0, i1 in lh:
            t0, t1 = t[i0], t[i1]
            inside = td[foot][(td[foot] >= t0) & (td[foot] < t1)]
            if len(inside):
                ph.append((inside[0] - t0) / (t1 - t0))
        phase[foot] = _circ_mean01(np.array(ph)) if ph else float("nan")
    v_mean = float(np.mean([speed[i0:i1].mean() for i0, i1 in lh]))
    strides = tuple((float(t[i0]), float(t[i1])) for i0, i1 in lh)
    return _finish_stats(stance, td, lo, duty, period, phase, v_mean, strides, False)


def _edges(mask: np.ndarray, *, periodic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Frame indices of touchdowns (swing->stance) and lift-offs (stance->swing)."""
    m = mask.astype(np.int8)
    if periodic:
        d = m - np.roll(m, 1)
        return np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    d = np.diff(m)
    return np.flatnonzero(d == 1) + 1, np.flatnonzero(d == -1) + 1


def _periodic_stats(
    motion: ReferenceMotion,
    stance: np.ndarray,
    td: dict[str, np.ndarray],
    lo: dict[str, np.ndarray],
    root: str | None,
) -> GaitStats:
    n = motion.n_frames
    period = n / motion.fps
    if len(td["LH"]) == 0:
        raise ReferenceAnalysisError(
            f"{motion.source or 'motion'}: LH never touches down in this cycle"
        )
    t0 = td["LH"][0]
    duty = {f: float(stance[:, j].mean()) for j, f in enumerate(FEET)}
    phase = {
        f: float(((td[f][0] - t0) / period) % 1.0) if len(td[f]) else float("nan") for f in FEET
    }
    if root:
        r = motion.marker(root)
        v = float(np.hypot(*(r[-1, :2] - r[0, :2])) / ((n - 1) / motion.fps))
    else:
        v = float("nan")
    start = float(motion.t[0])
    return _finish_stats(stance, td, lo, duty, period, phase, v, ((start, start + period),), True)


def _finish_stats(stance, td, lo, duty, period, phase, v, strides, periodic) -> GaitStats:  # noqa: ANN001
    order = tuple(sorted((f for f in FEET if np.isfinite(phase[f])), key=lambda f: phase[f]))
    swing = {}
    for f in FEET:
        if np.isfinite(phase[f]) and np.isfinite(duty[f]):
            swing[f] = (float((phase[f] - (1 - duty[f])) % 1.0), float(phase[f]))
    return GaitStats(
        stance=stance,
        touchdowns=td,
        liftoffs=lo,
        duty_factor=duty,
        stride_period_s=period,
        phase_offset=phase,
        touchdown_order=order,
        speed_mps=v,
        strides=strides,
        periodic=periodic,
        swing_intervals=swing,
    )


# --------------------------------------------------------------------------- strides


@dataclass(frozen=True)
class StrideCycle:
    """One (mean) stride cycle in the body frame, sampled at ``n_phase`` phases k / n_phase.

    markers: (N, M, 3) [m], relative to the pelvis ground projection and turned so the
    stride's travel is along +x (heights kept); period_s [s]; speed_mps [m/s];
    leg_length_m [m] of the motion it came from; cycles: (K, N, M, 3) all cycles.
    """

    markers: np.ndarray
    marker_names: tuple[str, ...]
    period_s: float
    speed_mps: float
    leg_length_m: float
    cycles: np.ndarray
    attribution: str | None = None

    @property
    def n_phase(self) -> int:
        return int(self.markers.shape[0])

    def scaled(self, leg_length_m: float) -> StrideCycle:
        """Geometrically scale to another leg length; period and speed by the Froude rule."""
        s = leg_length_m / self.leg_length_m
        return replace(
            self,
            markers=self.markers * s,
            cycles=self.cycles * s,
            period_s=self.period_s * math.sqrt(s),
            speed_mps=self.speed_mps * math.sqrt(s),
            leg_length_m=leg_length_m,
        )


def body_relative(
    markers: np.ndarray, origin_xy: np.ndarray, heading_xy: np.ndarray | None = None
) -> np.ndarray:
    """Markers (N, M, 3) relative to a moving ground point ``origin_xy`` (N, 2), turned so
    that ``heading_xy`` (2,) points along +x (no turn if None or shorter than 1 mm)."""
    out = np.array(markers, dtype=float, copy=True)
    out[:, :, :2] -= np.asarray(origin_xy, dtype=float)[:, None, :]
    if heading_xy is not None and np.hypot(*heading_xy) > 1e-3:
        R = _yaw_rotation(-math.atan2(heading_xy[1], heading_xy[0]))
        out = out @ R.T
    return out


def resample_cycle(
    t: np.ndarray, values: np.ndarray, t0: float, t1: float, n_phase: int
) -> np.ndarray:
    """Linear interpolation of ``values`` (T, ...) at t0 + (k / n_phase)(t1 - t0)."""
    tq = t0 + (np.arange(n_phase) / n_phase) * (t1 - t0)
    flat = values.reshape(len(t), -1)
    out = np.empty((n_phase, flat.shape[1]))
    for c in range(flat.shape[1]):
        out[:, c] = np.interp(tq, t, flat[:, c])
    return out.reshape((n_phase,) + values.shape[1:])


def extract_strides(
    motion: ReferenceMotion,
    *,
    n_phase: int = 50,
    stats: GaitStats | None = None,
    max_cycles: int | None = None,
) -> StrideCycle:
    """Cut the LH stride cycles, resample each to ``n_phase`` phase samples in the body frame
    and average them. A periodic one-cycle clip is rolled to start at LH touchdown."""
    stats = stats or analyze_footfalls(motion)
    root = _root_name(motion)
    if root is None:
        raise ReferenceAnalysisError(f"{motion.source}: needs a 'pelvis' marker for strides")
    L = leg_length(motion, stance=stats.stance)
    cycles = []
    if stats.periodic:
        t_ext, m_ext = _unwrap_periodic(motion)
        t0 = stats.touchdowns["LH"][0]
        spans = [(t0, t0 + stats.stride_period_s)]
    else:
        t_ext, m_ext = motion.t, motion.markers
        spans = list(stats.strides)
    if max_cycles is not None:
        spans = spans[:max_cycles]
    ri = motion.index(root)
    for t0, t1 in spans:
        m = resample_cycle(t_ext, m_ext, t0, t1, n_phase + 1)
        heading = m[-1, ri, :2] - m[0, ri, :2]
        m = m[:n_phase]
        cycles.append(body_relative(m, m[:, ri, :2], heading))
    arr = np.stack(cycles)
    return StrideCycle(
        markers=arr.mean(axis=0),
        marker_names=motion.marker_names,
        period_s=stats.stride_period_s,
        speed_mps=stats.speed_mps,
        leg_length_m=L,
        cycles=arr,
        attribution=motion.attribution,
    )


def _unwrap_periodic(motion: ReferenceMotion) -> tuple[np.ndarray, np.ndarray]:
    """Two copies of a one-cycle clip back to back; the second moved by the net travel."""
    n = motion.n_frames
    dt = 1.0 / motion.fps
    root = motion.index(_root_name(motion) or motion.marker_names[0])
    r = motion.markers[:, root, :]
    step = (r[-1] - r[0]) * n / max(n - 1, 1)
    step[2] = 0.0
    t = np.concatenate([motion.t, motion.t + n * dt])
    m = np.concatenate([motion.markers, motion.markers + step])
    return t, m


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


# --------------------------------------------------------------------------- synthesis


def _in_swing(phase: np.ndarray, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
    """Mask of phases in the (possibly wrapping) swing interval and progress in it [0, 1)."""
    length = (end - start) % 1.0
    u = (phase - start) % 1.0
    mask = u < length
    return mask, np.where(mask, u / length if length > 0 else 0.0, 0.0)


def synthetic_reference(
    period_s: float,
    swing: Mapping[str, tuple[float, float]],
    leg_length_m: float,
    speed_mps: float,
    *,
    n_strides: int = 3,
    fps: float = 60.0,
    body_length_m: float | None = None,
    width_m: float | None = None,
    swing_height_m: float | None = None,
) -> ReferenceMotion:
    """Markers of an idealized dog walking along +x with the given gait graph.

    swing: leg -> (swing_start, swing_end) phases in [0, 1) (may wrap); touchdown is at
    swing_end. Stance feet stay planted on the ground (z = 0) under the hip +- half the
    stance travel; swing feet move forward on a smooth (cosine) path with a sine height
    bump. Markers: pelvis, mid_spine, neck_base, head, tail_base, shoulders/hips and toes.
    """
    missing = [f for f in FEET if f not in swing]
    if missing:
        raise ValueError(f"swing intervals missing for {missing}; legs are {list(FEET)}")
    L = leg_length_m
    bl = body_length_m if body_length_m is not None else 1.0 * L
    w = width_m if width_m is not None else 0.35 * L
    h_sw = swing_height_m if swing_height_m is not None else 0.15 * L
    n = int(round(n_strides * period_s * fps))
    t = np.arange(n) / fps
    phase = (t / period_s) % 1.0
    cycle_idx = np.floor(t / period_s)
    x_body = speed_mps * t
    stride_len = speed_mps * period_s
    mount = {
        "LF": (bl / 2, w / 2),
        "RF": (bl / 2, -w / 2),
        "LH": (-bl / 2, w / 2),
        "RH": (-bl / 2, -w / 2),
    }
    names: list[str] = []
    cols: list[np.ndarray] = []

    def add(name: str, xyz: np.ndarray) -> None:
        names.append(name)
        cols.append(xyz)

    z_body = np.full(n, L)
    add("pelvis", np.stack([x_body - bl / 2, np.zeros(n), z_body], axis=1))
    add("mid_spine", np.stack([x_body, np.zeros(n), z_body + 0.02 * L], axis=1))
    add("neck_base", np.stack([x_body + bl / 2, np.zeros(n), z_body + 0.05 * L], axis=1))
    add("head", np.stack([x_body + bl / 2 + 0.4 * L, np.zeros(n), z_body + 0.4 * L], axis=1))
    add("tail_base", np.stack([x_body - bl / 2 - 0.1 * L, np.zeros(n), z_body], axis=1))
    for foot in FEET:
        mx, my = mount[foot]
        root = "_shoulder" if foot[1] == "F" else "_hip"
        add(foot + root, np.stack([x_body + mx, np.full(n, my), z_body], axis=1))
    for foot in FEET:
        s0, s1 = swing[foot]
        s0, s1 = s0 % 1.0, s1 % 1.0
        duty = 1.0 - ((s1 - s0) % 1.0)
        mx, my = mount[foot]
        # touchdown k at time (k + s1) * T; foot lands half a stance travel ahead of the hip
        half = 0.5 * speed_mps * duty * period_s

        def land_x(k: np.ndarray, mx: float = mx, s1: float = s1, half: float = half):  # noqa: ANN202
            return speed_mps * (k + s1) * period_s + mx + half

        in_sw, u = _in_swing(phase, s0, s1)
        # the next touchdown after time t
        k_next = np.where(phase < s1, cycle_idx, cycle_idx + 1)
        x_next = land_x(k_next)
        x_prev = x_next - stride_len
        # stance: planted at the last touchdown; swing: from previous to next landing
        k_last = k_next - 1
        x_stance = land_x(k_last)
        blend = 0.5 - 0.5 * np.cos(np.pi * u)
        x = np.where(in_sw, x_prev + blend * (x_next - x_prev), x_stance)
        z = np.where(in_sw, h_sw * np.sin(np.pi * u), 0.0)
        add(TOE_MARKERS[foot], np.stack([x, np.full(n, my), z], axis=1))
    return ReferenceMotion(
        t=t,
        markers=np.stack(cols, axis=1),
        marker_names=tuple(names),
        fps=fps,
        source=f"synthetic(T={period_s}s, v={speed_mps}m/s, L={leg_length_m}m)",
    )


def stats_from_swing(swing: Mapping[str, tuple[float, float]]) -> dict[str, dict[str, float]]:
    """Expected duty factors and phase offsets (relative to LH) of a gait graph."""
    duty = {f: 1.0 - ((b - a) % 1.0) for f, (a, b) in swing.items()}
    lh = swing["LH"][1]
    phase = {f: (b - lh) % 1.0 for f, (a, b) in swing.items()}
    return {"duty_factor": duty, "phase_offset": phase}


def reference_names_in(names: Sequence[str]) -> list[str]:
    """The canonical marker names present in ``names`` (in canonical order)."""
    s = set(names)
    return [n for n in MARKER_NAMES if n in s]
