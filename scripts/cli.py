"""The `quadsim` command line."""

from __future__ import annotations

import argparse
import importlib
import sys

from quadsim.errors import QuadsimError

# subcommand modules; each has add_parser(subparsers) and sets `func`
COMMANDS = (
    "model",
    "stand",
    "run",
    "skill",
    "plot",
    "export",
    "view",
    "reference",
    "optimize",
    "retarget",
    "compare",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of command `only` alone (each imports what its
    command needs: scipy, matplotlib, mocap; a run need not wait for the others')."""
    parser = argparse.ArgumentParser(
        prog="quadsim",
        description="Physics-based quadruped locomotion (Coros et al. 2011) on pybullet.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"quadsim.scripts.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"quadsim.scripts.{name}_cmd":
                raise
            continue
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except QuadsimError as exc:  # bad input; anything else is a bug and keeps its traceback
        print(f"quadsim {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"quadsim {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
