"""How dog-like a run is: a run log against a motion-capture clip (`quadsim compare`).

The clip's stride period is scaled to the simulated dog's leg length by the Froude rule and
its markers geometrically, as the optimizer's objective does; the run is measured after its
start from standing (the optimizer's SETTLE_S).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from quadsim.gaits.footfalls import clean_contacts, footfall_stats
from quadsim.mocap.footfalls import analyze_footfalls
from quadsim.mocap.motion import FEET, TOE_MARKERS, load_reference
from quadsim.optimize.errors import ObjectiveError
from quadsim.optimize.objective import (
    OBJECTIVES,
    MarkerSplit,
    evaluate_log,
    marker_cycles,
    marker_split,
    sim_stride_cycle,
    stride_bounds,
)

__all__ = ["compare_log", "comparison_text", "plot_comparison"]

STRIDES_SHOWN = 3  # strides of each gait diagram
MARKERS_SHOWN = 3  # markers of f_d's split, the farthest first


def compare_log(
    log: Mapping[str, Any],
    reference: str | Path | None = None,
    targets: str | Path | None = None,
) -> dict[str, Any]:
    """Stride period, duty factors and touchdown phases of a run log and of a clip (or of
    footfall targets, quadsim.optimize.targets), every objective term and the total of every
    objective (quadsim.optimize.objective.OBJECTIVES) whose terms could all be measured.

    log: run-log arrays (t, base_pos, base_quat, foot_contact, markers, marker_names; the
    speed command is the last of `speed_cmd`, else the run's mean speed after its start).
    reference: a clip, for f_d (and the footfalls, without `targets`); targets: a name or
    file whose footfalls replace the clip's.
    """
    from quadsim.optimize.sim_eval import (
        SETTLE_S,
        dog_leg_length,
        reference_cycle,
        reference_footfalls,
    )
    from quadsim.optimize.targets import target_file

    if reference is None and targets is None:
        raise ObjectiveError("compare needs a --reference clip or --targets NAME|FILE")
    t = np.asarray(log["t"], dtype=float)
    if len(t) < 2 or t[-1] - t[0] <= SETTLE_S + 1.0:
        raise ObjectiveError(
            f"the run log spans {t[-1] - t[0] if len(t) else 0:.2f} s; compare needs more than "
            f"{SETTLE_S + 1.0:g} s (the first {SETTLE_S:g} s, the start, are not compared)"
        )
    L = dog_leg_length()
    path = str(Path(reference).resolve()) if reference is not None else None
    cycle = reference_cycle(path, "", L) if path else None
    chosen = target_file(targets) if targets is not None else None
    if chosen is not None:
        footfalls, against, speed = chosen.footfalls, chosen.name, chosen.speed_mps
    else:
        footfalls, against, speed = reference_footfalls(path, "", L), Path(path).name, None
    late = t >= t[0] + SETTLE_S
    stats = footfall_stats(t[late], np.asarray(log["foot_contact"], dtype=bool)[late])
    if "speed_cmd" in log:  # the speed the run settles at, as the optimizer scores it
        v_cmd = float(np.asarray(log["speed_cmd"])[-1])
    else:
        p = np.asarray(log["base_pos"])[late]
        v_cmd = float((p[-1, 0] - p[0, 0]) / (t[late][-1] - t[late][0]))
    obj = evaluate_log(
        log,
        reference=cycle,
        v_cmd=(v_cmd, 0.0),
        weights=OBJECTIVES["both"],
        footfalls=footfalls,
        start_s=SETTLE_S,
    )
    terms = obj.terms()
    split = None
    if cycle is not None and not obj.fell and "f_d" not in obj.skipped:
        split = marker_split(*marker_cycles(log, cycle, start_s=SETTLE_S))
    totals = {}
    for name, w in OBJECTIVES.items():
        weighted = {
            "f_d": w.d,
            "f_v": w.v,
            "f_h": w.h,
            "f_r": w.r,
            "f_T": w.T,
            "f_df": w.df,
            "f_ph": w.ph,
            "f_ld": w.ld,
        }
        if any(weighted[k] and k in obj.skipped for k in weighted):
            continue  # an objective with a term not measured (f_d without a clip) has no total
        totals[name] = sum(weight * terms[k] for k, weight in weighted.items())
    return {
        "reference": path,
        "targets": chosen.path if chosen is not None else None,
        "against": against,
        "leg_length_m": L,
        "speed_cmd_mps": v_cmd,
        "run": {
            "stride_period_s": stats["stride_period_s"],
            "duty_factor": stats["duty_factor"],
            "phase_offset": stats["phase_offset"],
        },
        "clip": {
            "stride_period_s": footfalls.period_s,
            "speed_mps": speed if speed is not None else cycle.speed_mps,
            "duty_factor": dict(zip(FEET, footfalls.duty_factor, strict=True)),
            "phase_offset": dict(zip(FEET, footfalls.phase_offset, strict=True)),
        },
        "terms": terms,
        "skipped": list(obj.skipped),
        "objective": totals,
        "fell": bool(obj.fell),
        "f_d_split": None if split is None else _split_dict(split),
    }


def _split_dict(split: MarkerSplit) -> dict[str, Any]:
    """f_d's pose and motion, and the markers farthest from the clip's."""
    farthest = np.argsort(-(split.marker_pose + split.marker_motion))[:MARKERS_SHOWN]
    return {
        "pose": split.pose,
        "motion": split.motion,
        "markers": [
            {
                "name": split.names[i],
                "pose": float(split.marker_pose[i]),
                "motion": float(split.marker_motion[i]),
                "offset_m": split.offset[i].tolist(),
            }
            for i in farthest
        ],
    }


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def comparison_text(c: Mapping[str, Any]) -> str:
    """`compare_log`'s result as a table for a person."""
    run, clip = c["run"], c["clip"]
    kind = "targets" if c.get("targets") else "clip"
    column = "target" if kind == "targets" else "clip"
    width = len("run-" + column) + 2
    lines = [
        f"against {c['against']} (scaled to a {c['leg_length_m']:.3f} m leg; the {kind} at "
        f"{clip['speed_mps']:.2f} m/s, the run commanded {c['speed_cmd_mps']:.2f} m/s)",
        f"{'':22}{'run':>8}{column:>8}{'run-' + column:>{width}}",
    ]

    def row(name: str, a: float | None, b: float, circular: bool = False) -> str:
        if a is None:
            return f"{name:22}{'-':>8}{b:8.3f}{'-':>{width}}"
        d = ((a - b + 0.5) % 1.0 - 0.5) if circular else a - b
        return f"{name:22}{a:8.3f}{b:8.3f}{d:+{width}.3f}"

    lines.append(row("stride period [s]", run["stride_period_s"], clip["stride_period_s"]))
    for f in FEET:
        lines.append(row(f"duty factor {f}", run["duty_factor"][f], clip["duty_factor"][f]))
    for f in FEET:
        a, b = run["phase_offset"][f], clip["phase_offset"][f]
        lines.append(row(f"touchdown phase {f}", a, b, circular=True))
    w = OBJECTIVES["both"]
    weights = {
        "f_d": ("marker distance [m^2]", w.d),
        "f_v": ("velocity error [m/s]", w.v),
        "f_h": ("head acceleration [m/s^2]", w.h),
        "f_r": ("heading error [deg]", w.r),
        "f_T": ("stride period error [1]", w.T),
        "f_df": ("duty factor error [1]", w.df),
        "f_ph": ("touchdown phase error", w.ph),
        "f_ld": ("extra landings a stride", w.ld),
    }
    lines.append(f"{'objective term':34}{'value':>10}{'weight':>8}{'weighted':>10}")
    for key, (label, weight) in weights.items():
        if key in c.get("skipped", ()):
            lines.append(f"{key:5} {label:28}{'-':>10}{weight:8g}{'-':>10}")
            continue
        v = c["terms"][key]
        lines.append(f"{key:5} {label:28}{v:10.4f}{weight:8g}{weight * v:10.3f}")
        if key == "f_d" and c.get("f_d_split"):
            lines += _split_lines(c["f_d_split"])
    lines.append("objectives: " + ", ".join(f"{k} {v:.3f}" for k, v in c["objective"].items()))
    if c["fell"]:
        lines.append("the run fell: the terms are those of the fall penalty")
    return "\n".join(lines)


def _split_lines(split: Mapping[str, Any]) -> list[str]:
    """f_d's split under its row: pose and motion, then the farthest markers."""
    lines = [
        f"{'':6}{'pose: stride-mean offsets':28}{split['pose']:10.4f}",
        f"{'':6}{'motion about the pose':28}{split['motion']:10.4f}",
    ]
    for m in split["markers"]:
        x, y, z = (100 * v for v in m["offset_m"])
        lines.append(
            f"{'':6}{m['name']:14}pose {m['pose']:.4f} motion {m['motion']:.4f}: run-clip "
            f"{x:+.0f} cm ahead, {y:+.0f} cm left, {z:+.0f} cm up"
        )
    return lines


# --------------------------------------------------------------------------- figure


def _stride_spans(
    t: np.ndarray, stance: np.ndarray, t0: float, period: float
) -> list[list[tuple[float, float]]]:
    """Stance spans [(start, length)] per foot in stride units from t0, over the shown
    strides."""
    x = (t - t0) / period
    keep = (x >= 0) & (x <= STRIDES_SHOWN)
    dx = float(np.median(np.diff(x))) if len(x) > 1 else 0.01
    spans = []
    for k in range(stance.shape[1]):
        on = stance[keep, k].astype(np.int8)
        xs = x[keep]
        edges = np.flatnonzero(np.diff(np.concatenate(([0], on, [0]))))
        spans.append(
            [(xs[a], xs[b - 1] - xs[a] + dx) for a, b in zip(edges[::2], edges[1::2], strict=True)]
        )
    return spans


def _clip_diagram(motion: Any, stats: Any) -> tuple[list, float]:
    """The clip's stance spans over the shown strides (a one-cycle clip repeated)."""
    t, stance = motion.t, stats.stance
    if stats.periodic:
        n, dt = motion.n_frames, 1.0 / motion.fps
        reps = STRIDES_SHOWN + 2
        t = np.concatenate([motion.t + k * n * dt for k in range(reps)])
        stance = np.tile(stance, (reps, 1))
    t0 = float(stats.touchdowns["LH"][0])
    return _stride_spans(t, stance, t0, stats.stride_period_s), stats.stride_period_s


def _feet_paths(cycle_markers: np.ndarray, names: list[str]) -> dict[str, np.ndarray]:
    """(n_phase + 1, 3) closed body-frame path of each toe marker."""
    out = {}
    for f in FEET:
        if TOE_MARKERS[f] in names:
            p = cycle_markers[:, names.index(TOE_MARKERS[f])]
            out[f] = np.vstack([p, p[:1]])
    return out


def plot_comparison(log: Mapping[str, Any], reference: str | Path, out: str | Path) -> None:
    """A side-by-side figure: the gait diagrams of the run and the clip over three strides
    (from an LH touchdown), and each foot's path over the mean stride in the body frame
    (the pelvis's ground point, x along the travel), seen from the side."""
    from quadsim.optimize.sim_eval import (
        SETTLE_S,
        dog_leg_length,
        reference_cycle,
        reference_footfalls,
    )
    from quadsim.plots import _pyplot

    path = str(Path(reference).resolve())
    t = np.asarray(log["t"], dtype=float)
    contact = clean_contacts(t, np.asarray(log["foot_contact"], dtype=bool))
    bounds = stride_bounds(contact, start=int(np.searchsorted(t, t[0] + SETTLE_S)))
    if len(bounds) < STRIDES_SHOWN:
        raise ObjectiveError(
            f"the run shows {len(bounds)} complete strides after its start; the figure needs "
            f"{STRIDES_SHOWN}"
        )
    first = bounds[-STRIDES_SHOWN]
    period = float(np.median([t[b] - t[a] for a, b in bounds]))
    run_spans = _stride_spans(t, contact, float(t[first[0]]), period)
    motion = load_reference(path)
    stats = analyze_footfalls(motion)
    clip_spans, clip_period = _clip_diagram(motion, stats)
    L = dog_leg_length()
    cycle = reference_cycle(path, "", L)
    names = [str(n) for n in log["marker_names"]]
    sim_cycle = sim_stride_cycle(
        t,
        np.asarray(log["markers"], dtype=float),
        names,
        bounds,
        n_phase=cycle.n_phase,
        base_pos=np.asarray(log["base_pos"]),
    )
    run_paths = _feet_paths(sim_cycle, names)
    clip_paths = _feet_paths(cycle.markers, list(cycle.marker_names))

    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(13, 6.5))
    colors = dict(zip(FEET, ["tab:blue", "tab:orange", "tab:green", "tab:red"], strict=True))
    titles = (
        f"run: stride {period:.2f} s",
        f"{Path(path).stem}: stride {reference_footfalls(path, '', L).period_s:.2f} s "
        f"(scaled; {clip_period:.2f} s as captured)",
    )
    for ax, spans, title in zip(axes[0], (run_spans, clip_spans), titles, strict=True):
        for row, f in enumerate(FEET):
            ax.broken_barh(spans[row], (row - 0.35, 0.7), color=colors[f])
        ax.set_yticks(range(4), FEET)
        ax.invert_yaxis()
        ax.set_xlim(0, STRIDES_SHOWN)
        ax.set_xlabel("time [strides from an LH touchdown]")
        ax.set_title(f"stance, {title}", fontsize="medium")
    lims = np.array([[np.inf, -np.inf], [np.inf, -np.inf]])
    for ax, paths, who in zip(axes[1], (run_paths, clip_paths), ("run", "clip"), strict=True):
        for f, p in paths.items():
            ax.plot(p[:, 0], p[:, 2], color=colors[f], ls="-" if f[0] == "L" else "--", label=f)
            ax.plot(p[:1, 0], p[:1, 2], "o", color=colors[f], ms=4)
            lims[0] = min(lims[0, 0], p[:, 0].min()), max(lims[0, 1], p[:, 0].max())
            lims[1] = min(lims[1, 0], p[:, 2].min()), max(lims[1, 1], p[:, 2].max())
        ax.set_title(
            f"{who}: feet over the mean stride, body frame (dot: LH touchdown)", fontsize="medium"
        )
        ax.set_xlabel("x ahead of the pelvis [m]")
        ax.set_ylabel("height [m]")
        ax.legend(ncol=4, fontsize="small", loc="upper center")
    for ax in axes[1]:  # the same scales, so the two strides compare at a glance
        ax.set_xlim(lims[0, 0] - 0.05, lims[0, 1] + 0.05)
        ax.set_ylim(lims[1, 0] - 0.02, lims[1, 1] + 0.08)
    if motion.attribution:
        fig.text(0.01, 0.005, motion.attribution, fontsize=7, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(out, dpi=100)
    plt.close(fig)
