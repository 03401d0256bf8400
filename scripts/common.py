"""What the subcommands share: input checks, output-path checks, progress bars, JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm

from quadsim.controller.recording import CAMERAS, DEFAULT_CAMERA
from quadsim.errors import QuadsimError


class CliError(QuadsimError):
    """A bad command-line input; the message names the problem and the valid choices."""


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def seed_number(text: str) -> int:
    """argparse type: a whole number >= 0 (numpy's generators take no negative seeds)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def writable_path(path: str | Path, suffixes: tuple[str, ...] = ()) -> Path:
    """Check early that `path` can be written (so a long run is not lost at the end)."""
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise CliError(f"output file {str(p)!r} must end in {' or '.join(suffixes)}")
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise CliError(f"cannot write {str(p)!r}: it is a directory")
    if not parent.is_dir():
        raise CliError(f"cannot write {str(p)!r}: folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise CliError(f"cannot write {str(p)!r}: permission denied")
    return p


def add_run_outputs(parser: argparse.ArgumentParser) -> None:
    """The outputs every simulation command offers."""
    parser.add_argument(
        "--duration",
        type=positive_float,
        default=20.0,
        metavar="S",
        help="simulated time [s] (default 20)",
    )
    parser.add_argument("--seed", type=seed_number, default=0, help="random seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the run summary as JSON")
    parser.add_argument("--log", metavar="FILE.npz", help="write the run log (arrays) here")
    parser.add_argument("--record", metavar="FILE.mp4", help="record a video (30 fps)")
    parser.add_argument(
        "--camera",
        choices=list(CAMERAS),
        default=DEFAULT_CAMERA,
        help=f"the video's view of the dog (default {DEFAULT_CAMERA}: from the side at leg "
        "height, which shows the footfalls)",
    )
    parser.add_argument("--gui", action="store_true", help="open pybullet's window")
    parser.add_argument("--preset", default="shepherd", help="dog preset (default shepherd)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def progress_bar(enabled: bool, desc: str) -> tuple[Callable[[float], None], Callable[[], None]]:
    """(update(fraction), close()) for a percentage bar on stderr, or no-ops."""
    if not enabled:
        return (lambda _f: None), (lambda: None)
    bar = tqdm(
        total=100,
        desc=desc,
        unit="%",
        file=sys.stderr,
        leave=False,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}",
    )

    def update(fraction: float) -> None:
        bar.update(int(round(fraction * 100)) - bar.n)

    return update, bar.close


def print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary))
        return
    for key, value in summary.items():
        print(f"{key:>18}: {value}")
