"""`quadsim run`: the dog moves in a gait at a commanded speed."""

from __future__ import annotations

import argparse

from controller.episode import save_log
from controller.simulate import parse_push, simulate
from gaits.params import GaitParams, preset_names
from scripts.common import add_run_outputs, print_summary, progress_bar, writable_path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="simulate a gait at a commanded speed")
    p.add_argument("--gait", default="trot",
                   help=f"gait preset ({', '.join(preset_names())}); default trot")  # fmt: skip
    p.add_argument("--speed", type=float, default=None, metavar="V",
                   help="forward speed [m/s] (default: the middle of the gait's band)")  # fmt: skip
    p.add_argument("--params", metavar="FILE.toml", help="gait parameter file (overrides --gait)")
    p.add_argument("--push", action="append", default=[], metavar="T:FX,FY,FZ:DUR",
                   help="push the chest at T s with a force (N, world frame) for DUR s; "
                        "repeatable")  # fmt: skip
    add_run_outputs(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    log_path = writable_path(args.log, (".npz",)) if args.log else None
    video_path = writable_path(args.record, (".mp4",)) if args.record else None
    gait = GaitParams.load(args.params if args.params else args.gait)
    speed = args.speed if args.speed is not None else sum(gait.speed_band_mps) / 2
    gait.check_speed(speed)
    pushes = [parse_push(text) for text in args.push]
    update, close = progress_bar(not args.quiet and video_path is not None, f"{gait.gait}")
    try:
        result, summary = simulate(gait, speed, args.duration, seed=args.seed, pushes=pushes,
                                   spec=args.preset, record=video_path, gui=args.gui,
                                   progress=update)  # fmt: skip
    finally:
        close()
    if log_path:
        save_log(log_path, result.log)
    print_summary(summary, args.json)
    return 0
