"""Footfalls of a motion-capture clip: which foot is in stance when, duty factors, touchdown
phases and the stride period.

A foot is in stance when its toe is within ``contact_height_m`` of the ground and its
horizontal speed is below ``contact_speed_mps`` (default: 0.8 x the body speed clipped to
[0.3, 1] m/s). Phases are fractions of the stride period in [0, 1); phase offsets are
touchdown phases relative to the left hind foot (LH), as in the run summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from quadsim.gaits.footfalls import clean_contacts
from quadsim.mocap.errors import ReferenceAnalysisError
from quadsim.mocap.motion import FEET, TOE_MARKERS, ReferenceMotion, root_marker

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
        root = root_marker(motion)
        body = float(np.median(_horizontal_speed(motion.marker(root), t))) if root else 0.0
        contact_speed_mps = min(1.0, max(0.3, 0.8 * body))
    raw = np.zeros((motion.n_frames, len(FEET)), dtype=bool)
    for j, foot in enumerate(FEET):
        toe = motion.marker(TOE_MARKERS[foot])
        slow = _horizontal_speed(toe, t) < contact_speed_mps
        if ground_z_m is None:
            z_slow = toe[slow, 2] if slow.any() else toe[:, 2]
            ground = float(np.percentile(z_slow, 25))
        else:
            ground = ground_z_m
        low = toe[:, 2] - ground < contact_height_m
        raw[:, j] = low & slow
    # the stance detector the run summary uses, with runs under min_run_frames flipped
    shortest_s = min_run_frames / motion.fps
    return clean_contacts(t, raw, shortest_s, shortest_s, periodic=periodic)


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
    root = root_marker(motion)
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
