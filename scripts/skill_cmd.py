"""`quadsim skill NAME`: one of the paper's skills from standing (quadsim.skills)."""

from __future__ import annotations

import argparse

from quadsim.controller.recording import CAMERAS, DEFAULT_CAMERA
from quadsim.runlog import save_log
from quadsim.scripts.common import (
    CliError,
    positive_float,
    print_summary,
    seed_number,
    writable_path,
)
from quadsim.skills.jump import JUMPS
from quadsim.skills.perform import JUMP_HEIGHT_M, perform_jump, perform_skill
from quadsim.skills.posture import skill_names
from quadsim.skills.skillfile import SkillFile


def add_parser(sub: argparse._SubParsersAction) -> None:
    names = ", ".join([*skill_names(), *JUMPS])
    p = sub.add_parser("skill", help=f"a skill (from standing; get-up from lying): {names}")
    p.add_argument(
        "name",
        metavar="NAME",
        help=f"one of: {names}; or a jump's skill file (a tuned copy, from optimize --skill)",
    )
    p.add_argument(
        "--hold", type=positive_float, metavar="S", help="hold the posture S s (default: 4)"
    )
    p.add_argument(
        "--height",
        type=positive_float,
        metavar="H",
        help="a jump's platform height [m] (default: "
        + ", ".join(f"{k} {v:g}" for k, v in JUMP_HEIGHT_M.items())
        + ")",
    )
    p.add_argument("--seed", type=seed_number, default=0, help="random seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.add_argument("--log", metavar="FILE.npz", help="write the run log (arrays) here")
    p.add_argument("--record", metavar="FILE.mp4", help="record a video (30 fps)")
    p.add_argument("--camera", choices=list(CAMERAS), default=DEFAULT_CAMERA)
    p.add_argument("--preset", default="shepherd", help="dog preset (default shepherd)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    log_path = writable_path(args.log, (".npz",)) if args.log else None
    video_path = writable_path(args.record, (".mp4",)) if args.record else None
    where = {"seed": args.seed, "spec": args.preset, "record": video_path, "camera": args.camera}
    name, source = args.name, None
    if name.endswith(".toml"):  # a tuned jump: its file says which
        name, source = SkillFile.load(args.name).name, args.name
        if name not in JUMPS:
            raise CliError(f"{args.name} is a {name} file; only the jumps play from a file")
    if name in JUMPS:
        if args.hold is not None:
            raise CliError(f"{name} holds no posture: drop --hold")
        result, summary = perform_jump(name, height_m=args.height, source=source, **where)
    else:
        if args.height is not None:
            raise CliError(f"--height is for the jumps ({', '.join(JUMPS)}), not {args.name}")
        result, summary = perform_skill(name, hold_s=args.hold, **where)
    if log_path:
        save_log(log_path, result.log)
    print_summary(summary, args.json)
    return 0
