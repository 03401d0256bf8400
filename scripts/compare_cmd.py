"""`quadsim compare run.npz --reference CLIP [--targets NAME|FILE] [--plot FIG.png] [--json]`:
how dog-like a run is, against a motion-capture clip or footfall targets from the literature
(`--targets canter`): stride period, duty factors, touchdown phases and every objective term
(f_d needs the clip); with --plot (and a clip), the gait diagrams and body-frame foot paths
side by side."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from quadsim.optimize.errors import ObjectiveError
from quadsim.optimize.targets import target_names
from quadsim.scripts.common import writable_path


def add_parser(subparsers: Any) -> None:
    """Register the ``compare`` subcommand."""
    p = subparsers.add_parser(
        "compare",
        help="compare a run log with a motion-capture clip (footfalls, objective terms)",
        description=__doc__,
    )
    p.add_argument("log", type=Path, help="run log (.npz) of quadsim run --log")
    p.add_argument("--reference", type=Path, help="mocap clip (*_joint_pos.txt)")
    p.add_argument(
        "--targets",
        metavar="NAME|FILE",
        help="footfall targets instead of the clip's footfalls: "
        + ", ".join(target_names())
        + ", or a targets .toml file",
    )
    p.add_argument("--plot", metavar="FIG.png", help="write the side-by-side figure here")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the comparison; optionally draw it. Returns the exit status."""
    from quadsim.optimize.compare import compare_log, comparison_text, plot_comparison
    from quadsim.runlog import load_log

    if args.reference is None and args.targets is None:
        raise ObjectiveError("quadsim compare needs --reference CLIP or --targets NAME|FILE")
    if args.plot:
        if args.reference is None:
            raise ObjectiveError("--plot draws the run beside a clip: give --reference CLIP")
        writable_path(args.plot, (".png", ".pdf", ".svg"))
    log = load_log(args.log, ("t", "base_pos", "base_quat", "foot_contact", "markers"))
    result = compare_log(log, args.reference, args.targets)
    print(json.dumps(result) if args.json else comparison_text(result))
    if args.plot:
        plot_comparison(log, args.reference, args.plot)
        if not args.json:
            print(f"figure: {args.plot}")
    return 0
