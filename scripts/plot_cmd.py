"""`quadsim plot`: pictures of a run log (gait diagram, speed, heights, torques)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from scripts.common import CliError, writable_path

KINDS = ("gait-diagram", "speed", "height", "torques")
FEET = ("LF", "RF", "LH", "RH")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="plot a run log (.npz from --log)")
    p.add_argument("log", metavar="RUN.npz")
    p.add_argument("--kind", choices=KINDS, default="gait-diagram")
    p.add_argument("--out", required=True, metavar="FIG.png")
    p.add_argument("--start", type=float, default=None, metavar="S",
                   help="first time shown [s] (gait diagram default: the last 3 s)")  # fmt: skip
    p.add_argument("--end", type=float, default=None, metavar="S",
                   help="last time shown in the gait diagram [s] (default: the end)")  # fmt: skip
    p.set_defaults(func=run)


def load_log(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        raise CliError(f"run log {path!r} does not exist")
    try:
        with np.load(p) as data:
            log = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise CliError(f"run log {path!r} is not a readable .npz file ({exc})") from None
    missing = {"t", "base_pos", "base_vel", "foot_contact", "joint_tau"} - set(log)
    if missing:
        raise CliError(f"run log {path!r} lacks arrays: {', '.join(sorted(missing))}")
    return log


def run(args: argparse.Namespace) -> int:
    out = writable_path(args.out, (".png", ".pdf", ".svg"))
    log = load_log(args.log)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = log["t"]
    fig, ax = plt.subplots(figsize=(9, 3.6 if args.kind == "gait-diagram" else 4.5))
    if args.kind == "gait-diagram":
        start = args.start if args.start is not None else max(t[-1] - 3.0, 0.0)
        end = args.end if args.end is not None else t[-1]
        if not end > start:
            raise CliError(f"--end {end} s must come after the first time shown, {start} s")
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
    elif args.kind == "speed":
        from controller.episode import forward_speed

        ax.plot(t, forward_speed(log), label="forward speed (pelvis)")
        if "speed_cmd" in log:
            ax.plot(t, log["speed_cmd"], "--", label="commanded")
        ax.set_ylabel("speed [m/s]")
        ax.set_xlabel("time [s]")
        ax.legend(loc="lower right")
        _shade_gaits(ax, log, float(t[0]) if len(t) else 0.0)
    elif args.kind == "height":
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
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")
    return 0


def _shade_gaits(ax, log: dict, start: float, end: float = np.inf) -> None:  # noqa: ANN001 - a matplotlib Axes
    """Shade and name the stretches of each active gait (runs with the automatic choice)."""
    if "gait_index" not in log or "gait_names" not in log:
        return
    from controller.drive import gaits_used

    names = tuple(str(n) for n in log["gait_names"])
    for used in gaits_used(log["t"], log["gait_index"], names):
        lo, hi = max(used["from_s"], start), min(used["to_s"], end)
        if hi <= lo:
            continue
        ax.axvspan(lo, hi, color=f"C{names.index(used['gait'])}", alpha=0.12, lw=0)
        ax.text(lo, 1.01, used["gait"], transform=ax.get_xaxis_transform(), fontsize=8,
                va="bottom", ha="left", color=f"C{names.index(used['gait'])}")  # fmt: skip
