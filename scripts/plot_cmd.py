"""`quadsim plot`: pictures of a run log (quadsim.plots)."""

from __future__ import annotations

import argparse

from quadsim.plots import KINDS, save_plot
from quadsim.runlog import load_log
from quadsim.scripts.common import writable_path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="plot a run log (.npz from --log)")
    p.add_argument("log", metavar="RUN.npz")
    p.add_argument("--kind", choices=KINDS, default="gait-diagram")
    p.add_argument("--out", required=True, metavar="FIG.png")
    p.add_argument(
        "--start",
        type=float,
        default=None,
        metavar="S",
        help="first time shown [s] (gait diagram default: the last 3 s; phase contacts: from 2 s)",
    )
    p.add_argument(
        "--end",
        type=float,
        default=None,
        metavar="S",
        help="last time shown in the gait diagram or phase contacts [s] (default: the end)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = writable_path(args.out, (".png", ".pdf", ".svg"))
    save_plot(load_log(args.log), args.kind, out, args.start, args.end)
    print(f"wrote {out}")
    return 0
