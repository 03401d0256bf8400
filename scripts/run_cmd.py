"""`quadsim run`: the dog moves in a gait at a commanded speed."""

from __future__ import annotations

import argparse

from quadsim.controller.profile import Profile
from quadsim.controller.simulate import AUTO, parse_push, simulate
from quadsim.export import FORMATS, check_output, check_replay, export_log
from quadsim.gaits.params import GaitParams, preset_names
from quadsim.runlog import save_log
from quadsim.scripts.common import (
    CliError,
    add_run_outputs,
    print_summary,
    progress_bar,
    writable_path,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="simulate a gait at a commanded speed")
    p.add_argument(
        "--gait",
        default="trot",
        help=f"gait preset ({', '.join(preset_names())}) or auto (chosen by speed); default trot",
    )
    p.add_argument(
        "--speed",
        type=float,
        default=None,
        metavar="V",
        help="forward speed [m/s] (default: the middle of the gait's band)",
    )
    p.add_argument(
        "--speed-profile",
        metavar="T:V,...",
        help='speed against time, linear between knots, e.g. "0:0.5,10:5.0,20:5.0" '
        "(replaces --speed)",
    )
    turn = p.add_mutually_exclusive_group()
    turn.add_argument(
        "--turn-rate",
        type=float,
        default=0.0,
        metavar="DEG_PER_S",
        help="turn at this rate [deg/s], positive to the left",
    )
    turn.add_argument(
        "--heading-profile",
        metavar="T:DEG,...",
        help='heading [deg] against time, e.g. "0:0,5:0,10:90"',
    )
    p.add_argument("--params", metavar="FILE.toml", help="gait parameter file (overrides --gait)")
    p.add_argument(
        "--push",
        action="append",
        default=[],
        metavar="T:FX,FY,FZ:DUR",
        help="push the chest at T s with a force (N, world frame) for DUR s; repeatable",
    )
    p.add_argument(
        "--terrain",
        metavar="SPEC",
        help="ground ahead of the dog: steps:H:D (H m high, D m long, up and down), "
        "slope:DEG (a hill), rough:A (+-A m, seeded by --seed) or stairs:H:N",
    )
    p.add_argument(
        "--export",
        metavar="FILE",
        help=f"write the run's motion as {' or '.join(FORMATS)} (see quadsim export)",
    )
    p.add_argument(
        "--html", metavar="FILE.html", help="write a replay for the browser (see quadsim view)"
    )
    add_run_outputs(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    log_path = writable_path(args.log, (".npz",)) if args.log else None
    video_path = writable_path(args.record, (".mp4",)) if args.record else None
    export_path = check_output(args.export) if args.export else None
    html_path = check_replay(args.html) if args.html else None
    auto = args.gait == AUTO and not args.params
    known = preset_names()
    if not (auto or args.params or args.gait in known or args.gait.endswith(".toml")):
        raise CliError(
            f"unknown gait {args.gait!r}; known gaits: {', '.join(known)}, {AUTO} "
            "(or a .toml gait file)"
        )
    if auto and args.speed is None and args.speed_profile is None:
        raise CliError("--gait auto needs --speed or --speed-profile")
    gait = AUTO if auto else GaitParams.load(args.params if args.params else args.gait)
    if args.speed_profile is not None:
        if args.speed is not None:
            raise CliError("give --speed or --speed-profile, not both")
        speed: float | Profile = Profile.parse(args.speed_profile, "speed", "m/s")
    else:
        speed = args.speed if args.speed is not None else sum(gait.speed_band_mps) / 2
    heading = (
        Profile.parse(args.heading_profile, "heading", "deg")
        if args.heading_profile is not None
        else None
    )
    pushes = [parse_push(text) for text in args.push]
    label = AUTO if auto else gait.gait
    update, close = progress_bar(not args.quiet and video_path is not None, label)
    try:
        result, summary = simulate(
            gait,
            speed,
            args.duration,
            seed=args.seed,
            pushes=pushes,
            turn_rate_dps=args.turn_rate,
            heading_deg=heading,
            spec=args.preset,
            terrain=args.terrain,
            record=video_path,
            camera=args.camera,
            gui=args.gui,
            progress=update,
        )
    finally:
        close()
    if log_path:
        save_log(log_path, result.log)
    if export_path:
        export_log(result.log, export_path)
    if html_path:
        export_log(result.log, html_path)
    print_summary(summary, args.json)
    return 0
