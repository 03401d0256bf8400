"""The reference the objective compares a run with: stride cycles of a motion (real or
simulated) relative to the body, and a synthetic reference made from a gait graph when no
motion capture is given. Motion capture itself is quadsim.mocap."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from quadsim.mocap.errors import ReferenceAnalysisError
from quadsim.mocap.footfalls import GaitStats, analyze_footfalls
from quadsim.mocap.motion import (
    FEET,
    MARKER_NAMES,
    TOE_MARKERS,
    ReferenceMotion,
    leg_length,
    root_marker,
    yaw_rotation,
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
        R = yaw_rotation(-math.atan2(heading_xy[1], heading_xy[0]))
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
    root = root_marker(motion)
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
    root = motion.index(root_marker(motion) or motion.marker_names[0])
    r = motion.markers[:, root, :]
    step = (r[-1] - r[0]) * n / max(n - 1, 1)
    step[2] = 0.0
    t = np.concatenate([motion.t, motion.t + n * dt])
    m = np.concatenate([motion.markers, motion.markers + step])
    return t, m


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
