"""One call from a gait and a command to a finished run: the Python API behind `quadsim run`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from controller.episode import RunResult, run_episode, summarize
from controller.loop import Controller
from controller.recording import VideoRecorder
from controller.sim import Push, World
from gaits.params import GaitParams
from models import DogSpec

CONTROL_DT = 1e-3  # [s] the controller runs at 1 kHz; the joint servo at the physics rate
START_POSE_NOISE_RAD = 0.01  # seeded jitter of the start pose: seeds give different runs


def simulate(
    params: GaitParams | str,
    speed_mps: float,
    duration_s: float,
    *,
    seed: int = 0,
    pushes: Sequence[Push] = (),
    turn_rate_dps: float = 0.0,
    spec: DogSpec | str = "shepherd",
    record: str | Path | None = None,
    gui: bool = False,
    progress: Callable[[float], None] | None = None,
    log_hz: float = 200.0,
) -> tuple[RunResult, dict]:
    """Run `params` (a GaitParams or a preset name) at `speed_mps` [m/s] for `duration_s` [s]
    from standing; returns the run and its summary (DESIGN.md's run-summary contract).
    Raises GaitError for an unknown gait or a speed outside the gait's band."""
    gait = GaitParams.load(params) if isinstance(params, str) else params
    gait.check_speed(speed_mps)
    rng = np.random.default_rng(seed)
    with World(spec, gui=gui, renderer="egl" if record else None) as world:
        world.place_dog(world.skeleton.stand_angles()
                        + rng.normal(0.0, START_POSE_NOISE_RAD, world.n_joints))  # fmt: skip
        for push in pushes:
            world.add_push(push)
        controller = Controller(world.skeleton, gait, dt=CONTROL_DT, servo_dt=world.dt)
        controller.command.speed_mps = speed_mps
        controller.command.turn_rate_rps = np.radians(turn_rate_dps)
        recorder = VideoRecorder(record) if record else None
        try:
            result = run_episode(world, controller, duration_s, control_hz=1.0 / CONTROL_DT,
                                 recorder=recorder,
                                 progress=progress, log_hz=log_hz,
                                 extra_log=controller.log_fields)  # fmt: skip
        finally:
            if recorder is not None:
                recorder.close()
    summary = summarize(result, gait=gait.gait, speed_cmd=speed_mps, duration_s=duration_s,
                        seed=seed)  # fmt: skip
    return result, summary


def parse_push(text: str) -> Push:
    """A push from "T:FX,FY,FZ:DUR" (time [s], force [N] in the world frame, duration [s])."""
    from controller.errors import SimError

    parts = text.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        force = tuple(float(f) for f in parts[1].split(","))
        if len(force) != 3:
            raise ValueError
        return Push(start=float(parts[0]), force=force, duration=float(parts[2]))  # type: ignore[arg-type]
    except ValueError:
        raise SimError(f"push {text!r} must look like T:FX,FY,FZ:DUR, e.g. 10:0,200,0:0.1 "
                       "(time s, force N, duration s)") from None  # fmt: skip
