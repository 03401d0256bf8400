"""Pictures of a run log: the gait (Hildebrand) diagram, foot contacts against the gait's
phase, speed, heights, torques against their limits, and the path from above."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quadsim.errors import QuadsimError
from quadsim.models import LEGS as FEET

KINDS = ("gait-diagram", "phase-contacts", "speed", "height", "torques", "path")


class PlotError(QuadsimError):
    """A plot that the run log or the time window cannot give."""


def save_plot(
    log: dict, kind: str, out: str | Path, start: float | None = None, end: float | None = None
) -> None:
    """Draw `kind` (one of KINDS) of the run log between `start` and `end` [s] into `out`
    (.png, .pdf or .svg)."""
    if kind not in KINDS:
        raise PlotError(f"unknown plot kind {kind!r}; choose one of {', '.join(KINDS)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if kind == "phase-contacts":
        fig = _phase_contacts(plt, log, start, end)
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
    heading = np.array([yaw_of(q) for q in log["base_quat"][half]]) if "base_quat" in log else []
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
