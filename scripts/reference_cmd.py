"""`quadsim reference FILE [--plot FIG.png] [--json]`: footfalls and stride statistics of a
reference motion (dog mocap ``*_joint_pos.txt`` or a ``t,marker,x,y,z`` CSV)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from quadsim.mocap.footfalls import GaitStats, analyze_footfalls
from quadsim.mocap.motion import (
    FEET,
    ReferenceMotion,
    froude_number,
    leg_length,
    load_reference,
)
from quadsim.plots import plot_footfalls


def add_parser(subparsers: Any) -> None:
    """Register the ``reference`` subcommand."""
    p = subparsers.add_parser(
        "reference",
        help="footfalls and stride statistics of a reference motion",
        description=__doc__,
    )
    p.add_argument("file", type=Path, help="mocap *_joint_pos.txt or t,marker,x,y,z CSV")
    p.add_argument(
        "--plot",
        type=Path,
        metavar="FIG.png",
        help="write a Hildebrand footfall diagram and toe heights",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(func=run)


def summary(motion: ReferenceMotion, stats: GaitStats) -> dict[str, Any]:
    """JSON-ready statistics of a motion."""
    L = leg_length(motion, stance=stats.stance)
    d: dict[str, Any] = {
        "file": motion.source,
        "frames": motion.n_frames,
        "fps": motion.fps,
        "duration_s": round(motion.duration_s, 4),
        "leg_length_m": round(L, 4),
        "froude_number": round(froude_number(stats.speed_mps, L), 4),
        **stats.to_dict(),
    }
    if motion.attribution:
        d["attribution"] = motion.attribution
    return d


def run(args: argparse.Namespace) -> int:
    """Print footfalls and stride statistics; optionally plot them. Returns the exit status."""
    motion = load_reference(args.file)
    stats = analyze_footfalls(motion)
    info = summary(motion, stats)
    if args.json:
        print(json.dumps(info))
    else:
        _print_text(info)
    if args.plot:
        plot_footfalls(motion, stats, args.plot)
        if not args.json:
            print(f"plot: {args.plot}")
    return 0


def _print_text(d: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(f"{d['file']}: {d['frames']} frames at {d['fps']:g} Hz ({d['duration_s']} s)\n")
    out.write(
        f"stride period {d['stride_period_s']:.3f} s over {d['n_strides']} stride(s)"
        f"{' (clip is one cycle)' if d['periodic'] else ''}; "
        f"speed {d['mean_speed_mps']:.2f} m/s; leg length {d['leg_length_m']:.3f} m; "
        f"Froude {d['froude_number']:.2f}\n"
    )
    out.write("foot  duty   touchdown phase (rel. LH)  swing interval   touchdowns [s]\n")
    for f in FEET:
        sw = d["swing_intervals"].get(f, ["nan", "nan"])
        tds = ", ".join(f"{x:.2f}" for x in d["touchdowns_s"][f][:8])
        more = " ..." if len(d["touchdowns_s"][f]) > 8 else ""
        out.write(
            f"{f:<4}  {d['duty_factor'][f]:.3f}  {d['phase_offset'][f]:.3f}"
            f"                      [{sw[0]}, {sw[1]}]   {tds}{more}\n"
        )
    out.write(f"touchdown order: {' -> '.join(d['touchdown_order'])}\n")
    if d.get("attribution"):
        out.write(f"data: {d['attribution']}\n")
