"""`quadsim export`: a run log's motion as BVH or binary glTF (quadsim.export)."""

from __future__ import annotations

import argparse

from quadsim.export import FORMATS, export


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a run log (.npz from --log) as BVH or glTF (.glb)")
    p.add_argument("log", metavar="RUN.npz")
    p.add_argument(
        "--out", required=True, metavar="FILE", help=f"output; its suffix: {', '.join(FORMATS)}"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(f"wrote {export(args.log, args.out)}")
    return 0
