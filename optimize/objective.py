"""Objective terms of the gait optimization, as pure functions on run-log arrays.

f = w_d f_d + w_v f_v + w_h f_h + w_r f_r (Coros et al. 2011; default weights 100, 5, 0.5, 5):

* f_d [m^2]: weighted mean squared distance between the simulated and the reference
  markers over one stride cycle, both in the body frame (relative to the pelvis ground
  projection, turned to the stride's travel), phases aligned at LH touchdown, the
  reference scaled to the simulated dog's leg length (Froude-similar).
* f_v [m/s]: mean over strides of the stride-mean velocity error (sagittal and coronal
  components, i.e. along and across the commanded heading).
* f_h [m/s^2]: mean magnitude of the head marker's acceleration.
* f_r [deg]: mean absolute heading (yaw) error.

Footfall terms (the `footfalls` and `both` objectives; 0 weight in the paper's), against a
reference's :class:`FootfallTargets` (its stride period scaled by the Froude rule):

* f_T [1]: relative stride period error |T - T_ref| / T_ref;
* f_df [1]: mean over the feet of |duty factor - the reference's|;
* f_ph [stride]: mean over the feet of the circular distance between touchdown phases
  (relative to LH) and the reference's, in [0, 0.5];
* f_ld [1]: mean over the feet of the landings per stride beyond one (a foot that lifts and
  lands again mid-stance, or strikes in its swing: every dog's foot lands once a stride).

A run that falls or goes unstable scores :func:`fall_penalty`: large, finite, and
smaller the longer the dog lasted, so the optimizer can still rank failures.

Run-log arrays (DESIGN.md): ``t`` (T,), ``base_pos`` (T,3), ``base_quat`` (T,4 xyzw),
``base_vel`` (T,3), ``foot_pos`` (T,4,3), ``foot_contact`` (T,4) bool (LF, RF, LH, RH),
``markers`` (T,M,3), ``marker_names`` (M,).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from quadsim.controller.kinematics import yaw_of
from quadsim.mocap.motion import FEET, LEG_ROOT_MARKERS
from quadsim.optimize.errors import ObjectiveError
from quadsim.optimize.reference import StrideCycle, body_relative, resample_cycle

__all__ = [
    "Weights",
    "Objective",
    "marker_distance",
    "match_markers",
    "stride_bounds",
    "sim_stride_cycle",
    "f_d",
    "f_v",
    "f_h",
    "f_r",
    "fall_penalty",
    "FootfallTargets",
    "footfall_terms",
    "OBJECTIVES",
    "evaluate_log",
]

LH = FEET.index("LH")
FOOTFALL_TERMS = ("f_T", "f_df", "f_ph", "f_ld")


@dataclass(frozen=True)
class Weights:
    """Weights of the objective terms (paper: 100, 5, 0.5, 5; footfall terms T, df, ph, ld 0)."""

    d: float = 100.0
    v: float = 5.0
    h: float = 0.5
    r: float = 5.0
    T: float = 0.0
    df: float = 0.0
    ph: float = 0.0
    ld: float = 0.0

    @classmethod
    def from_sequence(cls, w: Sequence[float]) -> Weights:
        if len(w) not in (4, 8):
            raise ObjectiveError(
                f"need 4 weights (d, v, h, r) or 8 (+ T, df, ph, ld), got {len(w)}"
            )
        return cls(*(float(x) for x in w))


# Footfall weights: the trot preset against dog_trot (quadsim compare, 14 s) scores 8.9 for its
# period (0.36 s against 0.66), 2.8 for duty and 1.1 for phases, beside 9.9 for the paper's; a
# hind foot landing twice a stride (the robust walk run's mean: f_ld 0.23) scores 4.6.
FOOTFALL_WEIGHTS = {"T": 20.0, "df": 50.0, "ph": 50.0, "ld": 20.0}
#: The objectives of `quadsim optimize --objective`: the paper's terms; the footfall terms
#: with velocity and heading (so the dog still goes where it is told); all of them.
OBJECTIVES: dict[str, Weights] = {
    "paper": Weights(),
    "footfalls": Weights(d=0.0, h=0.0, **FOOTFALL_WEIGHTS),
    "both": Weights(**FOOTFALL_WEIGHTS),
}


@dataclass(frozen=True)
class FootfallTargets:
    """The footfalls a gait should show (feet LF, RF, LH, RH).

    period_s: stride period [s]; duty_factor: stance fraction per foot; phase_offset:
    touchdown phase relative to LH in [0, 1).
    """

    period_s: float
    duty_factor: tuple[float, float, float, float]
    phase_offset: tuple[float, float, float, float]


@dataclass(frozen=True)
class Objective:
    """Result record: every term, the weights and the total (what the optimizer minimizes).

    Terms that could not be computed (no reference, too short a run) are 0 and listed in
    ``skipped``. ``fell``: the run fell or went unstable; then ``total`` is the penalty.
    """

    total: float
    f_d: float
    f_v: float
    f_h: float
    f_r: float
    f_T: float = 0.0
    f_df: float = 0.0
    f_ph: float = 0.0
    f_ld: float = 0.0
    fell: bool = False
    survived_s: float = 0.0
    duration_s: float = 0.0
    weights: Weights = field(default_factory=Weights)
    skipped: tuple[str, ...] = ()

    def __float__(self) -> float:
        return float(self.total)

    def terms(self) -> dict[str, float]:
        """The raw terms (unweighted): the paper's four, and the footfall terms where a run
        was scored against footfall targets."""
        out = {"f_d": self.f_d, "f_v": self.f_v, "f_h": self.f_h, "f_r": self.f_r}
        for name in FOOTFALL_TERMS:
            if name not in self.skipped:
                out[name] = getattr(self, name)
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["skipped"] = list(self.skipped)
        return d


# --------------------------------------------------------------------------- f_d


def marker_distance(sim: np.ndarray, ref: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Weighted mean over samples and markers of the squared distance [m^2].

    sim, ref: (N, M, 3) [m]; weights: (M,) non-negative (default all 1).
    """
    sim = np.asarray(sim, dtype=float)
    ref = np.asarray(ref, dtype=float)
    if sim.shape != ref.shape or sim.ndim != 3 or sim.shape[2] != 3:
        raise ObjectiveError(f"marker arrays must both be (N, M, 3), got {sim.shape}, {ref.shape}")
    w = np.ones(sim.shape[1]) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (sim.shape[1],) or np.any(w < 0) or w.sum() <= 0:
        raise ObjectiveError(f"weights must be (M,)={sim.shape[1]} non-negative, not all 0")
    d2 = np.sum((sim - ref) ** 2, axis=2)  # (N, M)
    return float((d2 @ w).mean() / w.sum())


def match_markers(
    sim_names: Sequence[str],
    ref_names: Sequence[str],
    weights: Mapping[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices (into sim, into ref) and weights of the markers present in both, by name.

    weights: marker name -> weight (names not given weigh 1; weight 0 drops a marker).
    """
    sim_names = [str(n) for n in sim_names]
    ref_idx = {str(n): i for i, n in enumerate(ref_names)}
    si, ri, w = [], [], []
    for i, n in enumerate(sim_names):
        if n in ref_idx:
            wi = 1.0 if weights is None else float(weights.get(n, 1.0))
            if wi > 0:
                si.append(i)
                ri.append(ref_idx[n])
                w.append(wi)
    if not si:
        raise ObjectiveError(
            f"no marker names in common: simulated {sim_names[:6]}..., reference "
            f"{list(ref_names)[:6]}..."
        )
    return np.asarray(si), np.asarray(ri), np.asarray(w)


def stride_bounds(
    foot_contact: np.ndarray, *, foot: int = LH, start: int = 0
) -> list[tuple[int, int]]:
    """(i0, i1) frame pairs of consecutive touchdowns of ``foot`` at or after frame ``start``."""
    c = np.asarray(foot_contact, dtype=bool)[:, foot].astype(np.int8)
    td = np.flatnonzero(np.diff(c) == 1) + 1
    td = td[td >= start]
    return [(int(a), int(b)) for a, b in zip(td[:-1], td[1:], strict=True)]


def _origin_xy(markers: np.ndarray, names: Sequence[str], base_pos: np.ndarray | None):
    names = [str(n) for n in names]
    if "pelvis" in names:
        return markers[:, names.index("pelvis"), :2]
    if base_pos is None:
        raise ObjectiveError("need a 'pelvis' marker or base_pos for the body frame")
    return np.asarray(base_pos, dtype=float)[:, :2]


def sim_stride_cycle(
    t: np.ndarray,
    markers: np.ndarray,
    marker_names: Sequence[str],
    bounds: Sequence[tuple[int, int]],
    *,
    n_phase: int = 50,
    base_pos: np.ndarray | None = None,
) -> np.ndarray:
    """Mean stride cycle (n_phase, M, 3) in the body frame, from frame bounds [(i0, i1)]."""
    if not bounds:
        raise ObjectiveError("no complete stride in the run log")
    t = np.asarray(t, dtype=float)
    markers = np.asarray(markers, dtype=float)
    origin = _origin_xy(markers, marker_names, base_pos)
    both = np.concatenate([markers, np.pad(origin, ((0, 0), (0, 1)))[:, None, :]], axis=1)
    cycles = []
    for i0, i1 in bounds:
        m = resample_cycle(t, both, t[i0], t[i1], n_phase + 1)
        o = m[:, -1, :2]
        cycles.append(body_relative(m[:n_phase, :-1], o[:n_phase], o[-1] - o[0]))
    return np.mean(cycles, axis=0)


def _sim_leg_length(markers: np.ndarray, names: Sequence[str], contact: np.ndarray | None):
    names = [str(n) for n in names]
    hs = []
    for j, foot in enumerate(FEET):
        n = LEG_ROOT_MARKERS[foot]
        if n in names:
            z = markers[:, names.index(n), 2]
            if contact is not None and contact[:, j].any():
                z = z[contact[:, j]]
            hs.append(float(np.median(z)))
    return float(np.mean(hs)) if hs else None


def marker_cycles(
    log: Mapping[str, Any],
    reference: StrideCycle,
    *,
    marker_weights: Mapping[str, float] | None = None,
    leg_length_m: float | None = None,
    start_s: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """The run's mean stride cycle and the reference's, marker by marker in the body frame
    ((n_phase, M, 3) each, LH touchdown to touchdown), the M matched markers' names and
    their weights. The log's strides after ``start_s`` are resampled to the reference's
    phase samples and averaged; the reference is scaled to ``leg_length_m`` (default:
    measured from the simulated shoulder/hip markers)."""
    t = np.asarray(log["t"], dtype=float)
    markers = np.asarray(log["markers"], dtype=float)
    names = [str(n) for n in log["marker_names"]]
    contact = np.asarray(log["foot_contact"], dtype=bool)
    start = int(np.searchsorted(t, t[0] + start_s))
    bounds = stride_bounds(contact, start=start)
    L = leg_length_m or _sim_leg_length(markers, names, contact) or reference.leg_length_m
    ref = reference.scaled(L)
    si, ri, w = match_markers(names, ref.marker_names, marker_weights)
    sim_cycle = _cycle_with_origin(t, markers, names, si, bounds, ref, log)
    return sim_cycle, ref.markers[:, ri], [names[i] for i in si], w


def f_d(
    log: Mapping[str, Any],
    reference: StrideCycle,
    *,
    marker_weights: Mapping[str, float] | None = None,
    leg_length_m: float | None = None,
    start_s: float = 0.0,
    align: str = "touchdown",
) -> float:
    """Reference-marker deviation [m^2] of a run log against a reference stride cycle
    (the cycles of `marker_cycles`).

    align: "touchdown" (cut at LH touchdown) or "best" (also try every cyclic phase shift).
    """
    sim_cycle, ref_m, _, w = marker_cycles(
        log, reference, marker_weights=marker_weights, leg_length_m=leg_length_m, start_s=start_s
    )
    if align == "touchdown":
        return marker_distance(sim_cycle, ref_m, w)
    if align == "best":
        return min(
            marker_distance(np.roll(sim_cycle, k, axis=0), ref_m, w) for k in range(len(ref_m))
        )
    raise ObjectiveError(f"unknown align {align!r}; valid: 'touchdown', 'best'")


@dataclass(frozen=True)
class MarkerSplit:
    """f_d = pose + motion [m^2]: the squared distance between the markers' stride means
    (the pose: body proportions, carriage, a crabbing clip) and the mean squared
    difference of their motion about those means; per marker as well (weights not
    applied), with each marker's mean offset run - reference [m]."""

    pose: float
    motion: float
    names: list[str]
    marker_pose: np.ndarray  # (M,) [m^2]
    marker_motion: np.ndarray  # (M,) [m^2]
    offset: np.ndarray  # (M, 3) [m]


def marker_split(
    sim: np.ndarray, ref: np.ndarray, names: Sequence[str], w: np.ndarray
) -> MarkerSplit:
    """`marker_distance(sim, ref, w)` split into the markers' pose and their motion."""
    diff = np.asarray(sim, dtype=float) - np.asarray(ref, dtype=float)
    offset = diff.mean(axis=0)
    marker_pose = np.sum(offset**2, axis=1)
    marker_motion = np.sum(diff.var(axis=0), axis=1)
    w = np.asarray(w, dtype=float)
    return MarkerSplit(
        pose=float(marker_pose @ w / w.sum()),
        motion=float(marker_motion @ w / w.sum()),
        names=list(names),
        marker_pose=marker_pose,
        marker_motion=marker_motion,
        offset=offset,
    )


def _cycle_with_origin(t, markers, names, si, bounds, ref, log):  # noqa: ANN001, ANN202
    """Body-frame cycle of the matched markers, origin from the full marker set."""
    full = sim_stride_cycle(
        t,
        markers,
        names,
        bounds,
        n_phase=ref.n_phase,
        base_pos=np.asarray(log["base_pos"]) if "base_pos" in log else None,
    )
    return full[:, si]


# --------------------------------------------------------------------------- f_v, f_h, f_r


def f_v(
    t: np.ndarray,
    base_pos: np.ndarray,
    v_cmd: tuple[float, float],
    *,
    heading_cmd_rad: float = 0.0,
    bounds: Sequence[tuple[int, int]] | None = None,
) -> float:
    """Mean over strides of |stride-mean velocity - v_cmd| [m/s].

    v_cmd: (sagittal, coronal) [m/s] in the commanded heading frame (x along
    ``heading_cmd_rad``). bounds: stride frame pairs; None or empty uses the whole log.
    """
    t = np.asarray(t, dtype=float)
    p = np.asarray(base_pos, dtype=float)
    spans = list(bounds) if bounds else [(0, len(t) - 1)]
    c, s = math.cos(heading_cmd_rad), math.sin(heading_cmd_rad)
    errs = []
    for i0, i1 in spans:
        if t[i1] <= t[i0]:
            continue
        v = (p[i1, :2] - p[i0, :2]) / (t[i1] - t[i0])
        sag, cor = c * v[0] + s * v[1], -s * v[0] + c * v[1]
        errs.append(math.hypot(sag - v_cmd[0], cor - v_cmd[1]))
    if not errs:
        raise ObjectiveError("f_v needs at least two distinct times")
    return float(np.mean(errs))


def f_h(t: np.ndarray, head_pos: np.ndarray) -> float:
    """Mean magnitude of the head's acceleration [m/s^2] (second central differences)."""
    t = np.asarray(t, dtype=float)
    p = np.asarray(head_pos, dtype=float)
    if len(t) < 3:
        raise ObjectiveError("f_h needs at least 3 samples")
    a = np.gradient(np.gradient(p, t, axis=0), t, axis=0)
    return float(np.linalg.norm(a[1:-1], axis=1).mean())


def f_r(base_quat_xyzw: np.ndarray, heading_cmd_deg: float = 0.0) -> float:
    """Mean absolute heading error [deg], wrapped to [0, 180]."""
    yaw = np.degrees(yaw_of(base_quat_xyzw))
    err = (yaw - heading_cmd_deg + 180.0) % 360.0 - 180.0
    return float(np.abs(err).mean())


def fall_penalty(survived_s: float, duration_s: float, scale: float = 1e4) -> float:
    """scale * (1 + (duration - survived) / duration): in [scale, 2 scale], lower is longer."""
    if duration_s <= 0:
        return 2.0 * scale
    frac_lost = min(max((duration_s - survived_s) / duration_s, 0.0), 1.0)
    return float(scale * (1.0 + frac_lost))


def footfall_terms(
    t: np.ndarray, contact: np.ndarray, targets: FootfallTargets
) -> dict[str, float]:
    """f_T, f_df, f_ph and f_ld of contacts (T, 4) at times t [s] against `targets`. A run
    whose feet show no measurable stride scores the worst period, phase and landing terms
    (1, 0.5 and 1)."""
    from quadsim.gaits.footfalls import clean_contacts, footfall_stats, touchdowns

    t = np.asarray(t, dtype=float)
    stats = footfall_stats(t, np.asarray(contact, dtype=bool))
    duty = np.array([stats["duty_factor"][f] for f in FEET], dtype=float)
    f_df_ = float(np.mean(np.abs(duty - np.asarray(targets.duty_factor))))
    period = stats["stride_period_s"]
    phases = [stats["phase_offset"][f] for f in FEET]
    if period is None or any(p is None for p in phases):
        return {"f_T": 1.0, "f_df": f_df_, "f_ph": 0.5, "f_ld": 1.0}
    gap = (np.asarray(phases, dtype=float) - np.asarray(targets.phase_offset)) % 1.0
    strides = (t[-1] - t[0]) / period
    landings = [len(x) / strides for x in touchdowns(t, clean_contacts(t, contact))]
    return {
        "f_T": abs(period - targets.period_s) / targets.period_s,
        "f_df": f_df_,
        "f_ph": float(np.mean(np.minimum(gap, 1.0 - gap))),
        "f_ld": float(np.mean([max(n - 1.0, 0.0) for n in landings])),
    }


# --------------------------------------------------------------------------- total


def evaluate_log(
    log: Mapping[str, Any],
    *,
    reference: StrideCycle | None = None,
    v_cmd: tuple[float, float] = (1.0, 0.0),
    heading_cmd_deg: float = 0.0,
    weights: Weights = Weights(),  # noqa: B008 (frozen)
    marker_weights: Mapping[str, float] | None = None,
    fell: bool = False,
    fall_time_s: float | None = None,
    duration_s: float | None = None,
    start_s: float = 0.0,
    penalty_scale: float = 1e4,
    footfalls: FootfallTargets | None = None,
    contacts: tuple[np.ndarray, np.ndarray] | None = None,
) -> Objective:
    """All terms and the weighted total of one run log.

    fell / fall_time_s: the run fell (or went unstable) at that time -> penalty total.
    duration_s: commanded duration [s] (default: the log's span). start_s: ignore the
    first seconds (settling) for f_d, f_v, f_r and the footfall terms. Non-finite terms
    count as a fall. footfalls: targets of the footfall terms (without: skipped);
    contacts: (t, contact (T, 4)) at a finer rate than the log's, for them.
    """
    t = np.asarray(log["t"], dtype=float)
    span = float(t[-1] - t[0]) if len(t) > 1 else 0.0
    duration = float(duration_s) if duration_s is not None else span
    survived = float(fall_time_s) if fall_time_s is not None else span
    skipped: list[str] = []
    terms = {"f_d": 0.0, "f_v": 0.0, "f_h": 0.0, "f_r": 0.0}
    if footfalls is None:
        skipped += FOOTFALL_TERMS
    if fell:
        return Objective(
            total=fall_penalty(survived, duration, penalty_scale),
            **terms,
            fell=True,
            survived_s=survived,
            duration_s=duration,
            weights=weights,
            skipped=tuple(terms) + FOOTFALL_TERMS,
        )
    start = int(np.searchsorted(t, t[0] + start_s))
    contact = np.asarray(log["foot_contact"], dtype=bool) if "foot_contact" in log else None
    bounds = stride_bounds(contact, start=start) if contact is not None else []
    names = [str(n) for n in log.get("marker_names", [])]
    if reference is not None and bounds and "markers" in log:
        terms["f_d"] = f_d(log, reference, marker_weights=marker_weights, start_s=start_s)
    else:
        skipped.append("f_d")
    base_pos = np.asarray(log["base_pos"], dtype=float)
    terms["f_v"] = f_v(
        t[start:],
        base_pos[start:],
        v_cmd,
        heading_cmd_rad=math.radians(heading_cmd_deg),
        bounds=[(a - start, b - start) for a, b in bounds],
    )
    if "head" in names and len(t) >= 3:
        terms["f_h"] = f_h(t, np.asarray(log["markers"])[:, names.index("head")])
    else:
        skipped.append("f_h")
    terms["f_r"] = f_r(np.asarray(log["base_quat"])[start:], heading_cmd_deg)
    if footfalls is not None:
        ct, cc = contacts if contacts is not None else (t, contact)
        if cc is None:
            raise ObjectiveError("footfall terms need foot_contact in the log or contacts")
        ct = np.asarray(ct, dtype=float)
        late = ct >= t[0] + start_s
        terms.update(footfall_terms(ct[late], np.asarray(cc, dtype=bool)[late], footfalls))
    total = weights.d * terms["f_d"] + weights.v * terms["f_v"] + weights.h * terms["f_h"]
    total += weights.r * terms["f_r"]
    if footfalls is not None:
        total += weights.T * terms["f_T"] + weights.df * terms["f_df"] + weights.ph * terms["f_ph"]
        total += weights.ld * terms["f_ld"]
    if not math.isfinite(total):
        return Objective(
            total=fall_penalty(survived, duration, penalty_scale),
            **terms,
            fell=True,
            survived_s=survived,
            duration_s=duration,
            weights=weights,
            skipped=tuple(skipped),
        )
    return Objective(
        total=float(total),
        **terms,
        fell=False,
        survived_s=survived,
        duration_s=duration,
        weights=weights,
        skipped=tuple(skipped),
    )
