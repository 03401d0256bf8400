"""`quadsim view`: a run log as one self-contained HTML page that replays it in the browser."""

from __future__ import annotations

import argparse

from quadsim.export import replay


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view", help="write a run log (.npz from --log) as an HTML replay (orbit camera, player)"
    )
    p.add_argument("log", metavar="RUN.npz")
    p.add_argument("--out", required=True, metavar="FILE.html", help="the page to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(f"wrote {replay(args.log, args.out)}")
    return 0
