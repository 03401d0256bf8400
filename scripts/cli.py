"""The `quadsim` command line."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand modules; each has add_parser(subparsers) and sets `func`
COMMANDS = ("model", "stand", "run", "plot", "reference", "optimize", "retarget")
OUR_PACKAGES = ("models", "controller", "gaits", "ik", "optimize", "scripts")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quadsim",
        description="Physics-based quadruped locomotion (Coros et al. 2011) on pybullet.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"scripts.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"scripts.{name}_cmd":
                raise
            continue
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        # errors our packages raise on purpose carry a message for the user; others are bugs
        if type(exc).__module__.split(".")[0] not in OUR_PACKAGES:
            raise
        print(f"quadsim {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"quadsim {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
