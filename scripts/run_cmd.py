"""`quadsim run`: the dog moves in a gait at a commanded speed, or plays a plan of gaits and
skills."""

from __future__ import annotations

import argparse
from pathlib import Path

from quadsim.controller.episode import RunResult
from quadsim.controller.profile import Profile
from quadsim.controller.simulate import AUTO, gait_for_dog, parse_push, simulate
from quadsim.export import FORMATS, check_output, check_replay, export_log
from quadsim.gaits.params import GaitParams, preset_names
from quadsim.models import preset
from quadsim.runlog import save_log
from quadsim.scripts.common import (
    CliError,
    add_run_outputs,
    print_summary,
    progress_bar,
    writable_path,
)
from quadsim.skills.jump import Platform
from quadsim.skills.plan import parse_plan
from quadsim.skills.scene import play_plan


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
        help="forward speed [m/s] of the dog of --preset (default: the middle of the gait's "
        "band, Froude-scaled to that dog)",
    )
    p.add_argument(
        "--use",
        action="append",
        default=[],
        metavar="GAIT=FILE",
        help="with --gait auto: play this gait file in place of the preset GAIT (repeatable), "
        "e.g. --use trot=runs/trot/best_trot.toml",
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
    p.add_argument(
        "--plan",
        metavar='"STEP; ..."',
        help='a scene: gaits with speed and duration and skills with their hold, e.g. "walk '
        '1.0 3; sit 4; lie-down 4; stand-up; trot 2.0 5" (sets gaits, speeds and length)',
    )
    p.add_argument(
        "--recover",
        action="store_true",
        help="after a fall, get up and go on in the gait (the summary adds recoveries)",
    )
    p.add_argument(
        "--platform",
        action="append",
        default=[],
        metavar="X:H",
        help="with --plan: a platform H m high whose edge is at x = X m (6 m long, 3 m wide) "
        "for jump-onto and jump-off steps; repeatable",
    )
    add_run_outputs(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    log_path = writable_path(args.log, (".npz",)) if args.log else None
    video_path = writable_path(args.record, (".mp4",)) if args.record else None
    export_path = check_output(args.export) if args.export else None
    html_path = check_replay(args.html) if args.html else None
    if args.platform and args.plan is None:
        raise CliError("--platform is for plans (--plan with jump-onto or jump-off steps)")
    if args.plan is not None:
        result, summary = _play(args, video_path)
        _write_outputs(result, log_path, export_path, html_path)
        print_summary(summary, args.json)
        return 0
    auto = args.gait == AUTO and not args.params
    known = preset_names()
    if not (auto or args.params or args.gait in known or args.gait.endswith(".toml")):
        raise CliError(
            f"unknown gait {args.gait!r}; known gaits: {', '.join(known)}, {AUTO} "
            "(or a .toml gait file)"
        )
    if auto and args.speed is None and args.speed_profile is None:
        raise CliError("--gait auto needs --speed or --speed-profile")
    use = _used_gaits(args.use, auto)
    dog = preset(args.preset)
    gait = (
        AUTO
        if auto
        else gait_for_dog(GaitParams.load(args.params if args.params else args.gait), dog)
    )
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
            recover=args.recover,
            use=use,
        )
    finally:
        close()
    _write_outputs(result, log_path, export_path, html_path)
    print_summary(summary, args.json)
    return 0


def _used_gaits(pairs: list[str], auto: bool) -> dict[str, GaitParams]:
    """The gait files of `--use GAIT=FILE`, by the preset name they replace."""
    if pairs and not auto:
        raise CliError("--use replaces gaits of --gait auto; give --gait auto")
    used = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not path.endswith(".toml"):
            raise CliError(f"--use {pair!r} must look like GAIT=FILE.toml (trot=best_trot.toml)")
        used[name] = GaitParams.load(path)
    return used


def _play(args: argparse.Namespace, video_path: Path | None) -> tuple[RunResult, dict]:
    """`--plan`: the plan sets the gaits, speeds and length; steering and pushes are not
    (yet) part of a plan."""
    given = {
        "--speed": args.speed is not None,
        "--speed-profile": args.speed_profile is not None,
        "--heading-profile": args.heading_profile is not None,
        "--turn-rate": args.turn_rate != 0.0,
        "--push": bool(args.push),
        "--terrain": args.terrain is not None,
        "--params": args.params is not None,
        "--recover": args.recover,
    }
    clash = [name for name, yes in given.items() if yes]
    if clash:
        raise CliError(f"--plan sets the gaits and speeds itself; drop {', '.join(clash)}")
    steps = parse_plan(args.plan)
    platforms = [Platform.parse(text) for text in args.platform]
    return play_plan(
        steps,
        seed=args.seed,
        spec=args.preset,
        record=video_path,
        camera=args.camera,
        platforms=platforms,
    )


def _write_outputs(
    result: RunResult, log: Path | None, export: Path | None, html: Path | None
) -> None:
    if log:
        save_log(log, result.log)
    if export:
        export_log(result.log, export)
    if html:
        export_log(result.log, html)
