"""Every picture the project draws: a run log's gait (Hildebrand) diagram, foot contacts
against the gait's phase, speed, heights, torques against their limits and path from above;
a motion-capture clip's footfalls; a retargeting fit; an optimization's convergence.
matplotlib is imported on first use, headless (Agg)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from quadsim.errors import QuadsimError
from quadsim.models import LEGS as FEET

if TYPE_CHECKING:
    from quadsim.mocap.footfalls import GaitStats
    from quadsim.mocap.motion import ReferenceMotion
    from quadsim.mocap.retarget import Fit, FitModel

KINDS = ("gait-diagram", "phase-contacts", "speed", "height", "torques", "path", "plan")


class PlotError(QuadsimError):
    """A plot that the run log or the time window cannot give."""


def _pyplot():  # noqa: ANN202 - the pyplot module
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def save_plot(
    log: dict, kind: str, out: str | Path, start: float | None = None, end: float | None = None
) -> None:
    """Draw `kind` (one of KINDS) of the run log between `start` and `end` [s] into `out`
    (.png, .pdf or .svg)."""
    if kind not in KINDS:
        raise PlotError(f"unknown plot kind {kind!r}; choose one of {', '.join(KINDS)}")
    plt = _pyplot()
    if kind == "phase-contacts":
        fig = _phase_contacts(plt, log, start, end)
    elif kind == "plan":
        fig = _plan(plt, log, start, end)
    else:
        fig = _one_axes(plt, log, kind, start, end)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _one_axes(plt, log: dict, kind: str, start: float | None, end: float | None):  # noqa: ANN001, ANN202 - pyplot module, Figure
    """The plots drawn on one pair of axes: gait diagram, speed, path, heights, torques."""
    t = log["t"]
    size = {"gait-diagram": (9, 3.6), "path": (6, 6)}.get(kind, (9, 4.5))
    fig, ax = plt.subplots(figsize=size)
    if kind == "gait-diagram":
        start = start if start is not None else max(t[-1] - 3.0, 0.0)
        end = end if end is not None else t[-1]
        if not end > start:
            raise PlotError(f"--end {end} s must come after the first time shown, {start} s")
        keep = (t >= start) & (t <= end)
        contact = log["foot_contact"][keep]
        tk = t[keep]
        dt = float(np.median(np.diff(t))) if len(t) > 1 else 0.01
        for row, foot in enumerate(FEET):
            on = contact[:, row].astype(np.int8)
            edges = np.flatnonzero(np.diff(np.concatenate(([0], on, [0]))))
            pairs = zip(edges[::2], edges[1::2], strict=True)
            spans = [(tk[a], (tk[b - 1] - tk[a]) + dt) for a, b in pairs]
            ax.broken_barh(spans, (row - 0.35, 0.7), color="0.15" if foot[1] == "F" else "0.45")
        ax.set_yticks(range(4), FEET)
        ax.invert_yaxis()
        ax.set_xlabel("time [s]")
        ax.set_title("Footfall (Hildebrand) diagram: stance of each foot", pad=14)
        _shade_gaits(ax, log, start, end)
    elif kind == "speed":
        from quadsim.controller.episode import forward_speed

        ax.plot(t, forward_speed(log), label="forward speed (pelvis)")
        if "speed_cmd" in log:
            ax.plot(t, log["speed_cmd"], "--", label="commanded")
        ax.set_ylabel("speed [m/s]")
        ax.set_xlabel("time [s]")
        ax.legend(loc="lower right")
        _shade_gaits(ax, log, float(t[0]) if len(t) else 0.0)
    elif kind == "path":
        _path(ax, log)
    elif kind == "height":
        ax.plot(t, log["base_pos"][:, 2], label="pelvis (back leg frame)")
        if "chest_height" in log:
            ax.plot(t, log["chest_height"], label="chest (front leg frame)")
        ax.set_ylabel("height [m]")
        ax.set_xlabel("time [s]")
        ax.legend()
    else:
        tau = np.abs(log["joint_tau"])
        names = [str(n) for n in log.get("joint_names", [])]
        limit = log.get("torque_limit")
        share = tau / limit if limit is not None else tau
        for k in np.argsort(-share.max(axis=0))[:6]:
            ax.plot(t, share[:, k], label=names[k] if names else f"joint {k}")
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_ylabel("|torque| / limit" if limit is not None else "|torque| [N m]")
        ax.set_xlabel("time [s]")
        ax.set_title("The six joints nearest their torque limits")
        ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def _path(ax, log: dict) -> None:  # noqa: ANN001 - a matplotlib Axes
    """The pelvis path seen from above, beside the path the speed and heading commands
    trace from the same start, and the radius of the circle fitted to its second half."""
    from quadsim.controller.episode import turn_radius
    from quadsim.controller.kinematics import yaw_of

    t, xy = log["t"], log["base_pos"][:, :2]
    ax.plot(xy[:, 0], xy[:, 1], label="pelvis")
    ax.plot(xy[:1, 0], xy[:1, 1], "o", color="k", ms=4, label="start")
    if "speed_cmd" in log and "heading_cmd" in log and len(t) > 1:
        step = np.diff(t)[:, None] * log["speed_cmd"][:-1, None]
        heading = log["heading_cmd"][:-1]
        moves = step * np.stack([np.cos(heading), np.sin(heading)], axis=1)
        planned = xy[0] + np.concatenate([np.zeros((1, 2)), np.cumsum(moves, axis=0)])
        ax.plot(planned[:, 0], planned[:, 1], "--", color="0.5", label="commanded")
    half = t >= 0.5 * t[-1] if len(t) else np.zeros(0, bool)
    heading = yaw_of(log["base_quat"][half]) if "base_quat" in log else []
    radius = turn_radius(xy[half], heading) if len(heading) else None
    ax.set_title("Path from above" + (f" (turn radius {radius:.2f} m)" if radius else ""))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend(loc="best")


def _phase_contacts(plt, log: dict, start: float | None, end: float | None):  # noqa: ANN001, ANN202 - pyplot module, Figure
    """Per foot: the share of strides in contact at each phase of the gait, over the
    stance the gait graph planned (shaded), within one gait."""
    from quadsim.gaits.footfalls import contact_by_phase

    missing = {"gait_phase", "planned_stance"} - set(log)
    if missing:
        raise PlotError(
            f"run log lacks {', '.join(sorted(missing))} (written by an older "
            "quadsim; run it again with --log)"
        )
    t = log["t"]
    t_end = float(t[-1]) if len(t) else 0.0
    start = start if start is not None else min(2.0, t_end / 2)
    end = end if end is not None else t_end
    if not end > start:
        raise PlotError(f"--end {end} s must come after the first time shown, {start} s")
    keep = (t >= start) & (t <= end)
    if np.count_nonzero(keep) < 10:
        raise PlotError(f"the run log holds too few samples between {start} and {end} s")
    if "gait_index" in log and "gait_names" in log:
        names = [str(n) for n in log["gait_names"]]
        used = sorted({int(i) for i in log["gait_index"][keep]})
        if len(used) > 1:
            raise PlotError(
                f"{start}-{end} s spans the gaits {', '.join(names[i] for i in used)}"
                "; choose --start and --end within one gait"
            )
    by_phase = contact_by_phase(
        log["gait_phase"][keep], log["foot_contact"][keep], log["planned_stance"][keep]
    )
    x = by_phase["phase"]
    fig, axes = plt.subplots(4, 1, figsize=(9, 6.4), sharex=True)
    for k, (ax, foot) in enumerate(zip(axes, FEET, strict=True)):
        ax.fill_between(
            x, 0, by_phase["planned"][:, k], step="mid", color="0.85", label="planned stance"
        )
        ax.plot(
            x,
            by_phase["contact"][:, k],
            drawstyle="steps-mid",
            color="C0",
            label="share of strides in contact",
        )
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(foot, rotation=0, labelpad=14, va="center")
        stance_in = by_phase["stance_in_contact"][foot]
        swing_in = by_phase["swing_in_contact"][foot]
        ax.text(
            1.005,
            0.5,
            f"planned stance\nin contact {_share(stance_in)}\n"
            f"planned swing\nin contact {_share(swing_in)}",
            transform=ax.transAxes,
            fontsize=7,
            va="center",
        )
    axes[0].legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, fontsize=8, frameon=False)
    axes[-1].set_xlim(0, 1)
    axes[-1].set_xlabel("gait phase (stride fraction)")
    fig.suptitle(f"Foot contact against the gait's phase, {start:.1f}-{end:.1f} s")
    fig.tight_layout()
    return fig


def _plan(plt, log: dict, start: float | None, end: float | None):  # noqa: ANN001, ANN202 - pyplot module, Figure
    """A plan's timeline: each step (gait or skill) shaded and named, the heights of pelvis
    and chest, and each foot's contacts."""
    missing = {"link_pos", "link_names"} - set(log)
    if missing:
        raise PlotError(f"run log lacks {', '.join(sorted(missing))}; run it again with --log")
    t = log["t"]
    start = float(t[0]) if start is None else start
    end = float(t[-1]) if end is None else end
    keep = (t >= start) & (t <= end)
    if np.count_nonzero(keep) < 2:
        raise PlotError(f"the run log holds too few samples between {start} and {end} s")
    names = [str(n) for n in log["link_names"]]
    fig, (ax_h, ax_c) = plt.subplots(
        2, 1, figsize=(10, 5.2), sharex=True, gridspec_kw={"height_ratios": [2.2, 1]}
    )
    for link, colour in (("pelvis", "C0"), ("chest", "C3")):
        z = log["link_pos"][:, names.index(link), 2]
        ax_h.plot(t[keep], z[keep], color=colour, lw=1.2, label=link)
    ax_h.set_ylabel("height [m]")
    ax_h.set_ylim(bottom=0.0)
    ax_h.legend(loc="lower right", fontsize=8)
    _shade_gaits(ax_h, log, start, end)
    contact = log["foot_contact"]
    for k in range(len(FEET)):
        down = np.where(keep, contact[:, k], False)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], down.astype(int), [0]])))
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            ax_c.broken_barh([(t[a], t[b - 1] - t[a])], (3 - k - 0.35, 0.7), color="0.25")
    ax_c.set_yticks(range(4), list(reversed(FEET)))
    ax_c.set_ylabel("contact")
    ax_c.set_xlabel("time [s]")
    ax_c.set_xlim(start, end)
    fig.suptitle("The plan: each step, the body's heights and the feet's contacts")
    fig.tight_layout()
    return fig


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _shade_gaits(ax, log: dict, start: float, end: float = np.inf) -> None:  # noqa: ANN001 - a matplotlib Axes
    """Shade and name the stretches of each active gait (runs with the automatic choice)."""
    if "gait_index" not in log or "gait_names" not in log:
        return
    from quadsim.controller.drive import gaits_used

    names = tuple(str(n) for n in log["gait_names"])
    for used in gaits_used(log["t"], log["gait_index"], names):
        lo, hi = max(used["from_s"], start), min(used["to_s"], end)
        if hi <= lo:
            continue
        ax.axvspan(lo, hi, color=f"C{names.index(used['gait'])}", alpha=0.12, lw=0)
        ax.text(
            lo,
            1.01,
            used["gait"],
            transform=ax.get_xaxis_transform(),
            fontsize=8,
            va="bottom",
            ha="left",
            color=f"C{names.index(used['gait'])}",
        )


def plot_footfalls(motion: ReferenceMotion, stats: GaitStats, path: Path) -> None:
    """Hildebrand footfall diagram (stance bars per foot) over toe heights; the mocap's
    CC BY-NC attribution goes into the caption when the data carry one."""
    plt = _pyplot()
    from quadsim.mocap.motion import TOE_MARKERS

    t = motion.t
    dt = 1.0 / motion.fps
    fig, (ax1, ax2) = plt.subplots(
        2, 1, figsize=(10, 5.5), sharex=True, gridspec_kw={"height_ratios": [1, 1.3]}
    )
    colors = dict(zip(FEET, ["tab:blue", "tab:orange", "tab:green", "tab:red"], strict=True))
    for row, f in enumerate(FEET):
        st = stats.stance[:, FEET.index(f)]
        edges = np.flatnonzero(np.diff(np.r_[0, st.astype(np.int8), 0]))
        bars = [(t[a], (b - a) * dt) for a, b in zip(edges[::2], edges[1::2], strict=True)]
        ax1.broken_barh(bars, (row - 0.35, 0.7), color=colors[f])
        ax2.plot(t, motion.marker(TOE_MARKERS[f])[:, 2] * 100, color=colors[f], label=f)
    ax1.set_yticks(range(len(FEET)), FEET)
    ax1.invert_yaxis()
    ax1.set_title(
        f"{Path(motion.source).name}: stride {stats.stride_period_s:.2f} s, "
        f"{stats.speed_mps:.2f} m/s, duty "
        + ", ".join(f"{f} {stats.duty_factor[f]:.2f}" for f in FEET)
    )
    ax1.set_ylabel("stance")
    ax2.set_ylabel("toe height [cm]")
    ax2.set_xlabel("time [s]")
    ax2.legend(ncol=4, fontsize="small")
    if motion.attribution:
        fig.text(0.01, 0.005, motion.attribution, fontsize=7, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_fit(
    path: Path, fit: Fit, model: FitModel, attribution: str | None, n_panels: int = 4
) -> None:
    """Side view (x-z) of the scaled mocap markers and the fitted model, a few frames."""
    plt = _pyplot()
    from quadsim.mocap.retarget import fit_errors

    sk = model.skeleton
    n_t = fit.t.shape[0]
    frames = np.unique(np.linspace(0, n_t - 1, min(n_panels, n_t)).round().astype(int))
    fig, axes = plt.subplots(1, len(frames), figsize=(3.6 * len(frames), 3.6), squeeze=False)
    errs = fit_errors(fit)
    idx = {n: i for i, n in enumerate(fit.marker_names)}
    chains = [
        ["pelvis", "mid_spine", "neck_base", "mid_neck", "head"],
        ["pelvis", "tail_base", "tail_mid", "tail_tip"],
    ]
    for f in FEET:
        root = f"{f}_shoulder" if f in ("LF", "RF") else f"{f}_hip"
        mid = ("elbow", "wrist") if f in ("LF", "RF") else ("knee", "hock")
        chains.append([root, f"{f}_{mid[0]}", f"{f}_{mid[1]}", f"{f}_toe"])
    for ax, k in zip(axes[0], frames, strict=True):
        ref = fit.markers_ref[k]
        ok = ~np.isnan(ref[:, 0])
        ax.plot(ref[ok, 0], ref[ok, 2], "o", ms=4, color="tab:orange", label="mocap (scaled)")
        for ch in chains:
            pts = np.array([fit.markers_fit[k, idx[n]] for n in ch if n in idx])
            ax.plot(pts[:, 0], pts[:, 2], "-", color="tab:blue", lw=2, alpha=0.8)
        ax.plot([], [], "-", color="tab:blue", label=f"{sk.spec.name} model fit")
        ax.axhline(0.0, color="0.6", lw=0.8)
        ax.set_aspect("equal")
        ax.set_title(f"t = {fit.t[k]:.2f} s, error {errs['fit_error'][k] * 100:.1f} cm", fontsize=9)
        ax.set_xlabel("x [m]")
    axes[0][0].set_ylabel("z [m]")
    axes[0][0].legend(fontsize=7, loc="upper left")
    caption = "Markers vs fitted dog model (side view)."
    if attribution:
        caption += " " + attribution
    fig.text(0.01, 0.01, caption, fontsize=7, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def convergence_png(
    history: Sequence[Mapping[str, float]], base_columns: Sequence[str], title: str = ""
) -> bytes:
    """An optimization run's history as a PNG: best-so-far and median f per generation (log
    scale if positive), and the terms of each generation's best (the columns beyond
    `base_columns`)."""
    plt = _pyplot()
    g = [r["generation"] for r in history]
    terms = sorted({k for r in history for k in r} - set(base_columns))
    fig, axes = plt.subplots(
        2 if terms else 1, 1, figsize=(8, 6 if terms else 4), sharex=True, squeeze=False
    )
    ax = axes[0, 0]
    best = np.array([r["best_f"] for r in history], dtype=float)
    med = np.array([r["median_f"] for r in history], dtype=float)
    ax.plot(g, best, label="best so far")
    ax.plot(g, med, label="generation median", alpha=0.7)
    if np.all(best > 0) and np.all(med > 0):
        ax.set_yscale("log")
    ax.set_ylabel("f")
    ax.legend()
    ax.set_title(title or "CMA-ES convergence")
    if terms:
        ax2 = axes[1, 0]
        for k in terms:
            ax2.plot(g, [r.get(k, np.nan) for r in history], label=k)
        ax2.set_ylabel("terms of the generation's best")
        ax2.legend()
    axes[-1, 0].set_xlabel("generation")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def plot_pushes_survived(impulse: Mapping[str, Mapping[float, float]], path: Path) -> None:
    """Per title (a gait at its speed), the largest push survived [N*s] by the direction
    it pushes [deg] (0: forward, 90: left), as polar plots on one radial scale."""
    plt = _pyplot()
    top = max(max(by_direction.values()) for by_direction in impulse.values())
    fig, axes = plt.subplots(2, 3, figsize=(11, 7.5), subplot_kw={"projection": "polar"})
    for ax, (title, by_direction) in zip(axes.ravel(), impulse.items(), strict=False):
        angles = np.radians([*by_direction, next(iter(by_direction))])
        values = [*by_direction.values(), next(iter(by_direction.values()))]
        ax.plot(angles, values, "o-")
        ax.fill(angles, values, alpha=0.2)
        ax.set_ylim(0, top)
        ax.set_title(title, pad=12)
        ax.set_theta_zero_location("E")  # 0 degrees: pushed forward, drawn to the right
    fig.suptitle("Largest push survived [N·s], by the direction it pushes (0: forward, 90: left)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
