"""`quadsim stand`: the dog stands (PD toward the standing pose plus gravity compensation)."""

from __future__ import annotations

import argparse

import numpy as np

from quadsim.controller.episode import run_episode, summarize
from quadsim.controller.recording import VideoRecorder
from quadsim.controller.sim import World
from quadsim.controller.stand import StandController
from quadsim.runlog import save_log
from quadsim.scripts.common import add_run_outputs, print_summary, progress_bar, writable_path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stand", help="simulate the dog standing")
    add_run_outputs(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    log_path = writable_path(args.log, (".npz",)) if args.log else None
    video_path = writable_path(args.record, (".mp4",)) if args.record else None
    rng = np.random.default_rng(args.seed)
    with World(args.preset, gui=args.gui, renderer="egl" if video_path else None) as world:
        # a small random start pose (seeded), so that seeds give different runs
        world.place_dog(world.skeleton.stand_angles() + rng.normal(0.0, 0.01, world.n_joints))
        recorder = VideoRecorder(video_path, camera=args.camera) if video_path else None
        update, close = progress_bar(not args.quiet and video_path is not None, "stand")
        try:
            controller = StandController(world.skeleton)
            result = run_episode(
                world, controller, args.duration, recorder=recorder, progress=update
            )
        finally:
            close()
            if recorder:
                recorder.close()
    summary = summarize(
        result, gait="stand", speed_cmd=0.0, duration_s=args.duration, seed=args.seed
    )
    if log_path:
        save_log(log_path, result.log)
    print_summary(summary, args.json)
    return 0
