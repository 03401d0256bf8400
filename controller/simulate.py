"""One call from a gait and a command to a finished run: the Python API behind `quadsim run`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from quadsim.controller.drive import Driver, gaits_used
from quadsim.controller.episode import RunResult, run_episode, summarize
from quadsim.controller.errors import SimError
from quadsim.controller.loop import Controller
from quadsim.controller.profile import Profile
from quadsim.controller.recording import DEFAULT_CAMERA, VideoRecorder, camera_named
from quadsim.controller.sim import Push, World
from quadsim.controller.terrain import Terrain, parse_terrain
from quadsim.gaits.params import GaitParams
from quadsim.gaits.schedule import GaitSchedule, on_lead
from quadsim.models import DogSpec, preset
from quadsim.skills.recovery import Recovery

CONTROL_DT = 1e-3  # [s] the controller runs at 1 kHz; the joint servo at the physics rate
AUTO = "auto"  # the gait name that lets the speed choose the gait
START_POSE_NOISE_RAD = 0.01  # seeded jitter of the start pose: seeds give different runs
MAX_TURN_RATE_DPS = 360.0  # a full turn a second: far beyond what a dog does running


def simulate(
    params: GaitParams | str,
    speed_mps: float | Profile,
    duration_s: float,
    *,
    seed: int = 0,
    pushes: Sequence[Push] = (),
    turn_rate_dps: float = 0.0,
    heading_deg: Profile | None = None,
    spec: DogSpec | str = "shepherd",
    terrain: Terrain | str | None = None,
    record: str | Path | None = None,
    camera: str = DEFAULT_CAMERA,
    gui: bool = False,
    progress: Callable[[float], None] | None = None,
    log_hz: float = 200.0,
    recover: bool = False,
    use: Mapping[str, GaitParams | str] | None = None,
) -> tuple[RunResult, dict]:
    """Run `params` (a GaitParams, a preset name, or "auto": the gait chosen by speed) at
    `speed_mps` [m/s] (a number or a Profile of time) for `duration_s` [s] from standing,
    turning at `turn_rate_dps` [deg/s] or along `heading_deg` (a Profile of time), over
    `terrain` (a spec such as "steps:0.06:1" or a Terrain; flat ground if None); returns
    the run and its summary (DESIGN.md's run-summary contract, plus `gaits_used` for "auto"
    and `turn_radius_m`); `record` films it (MP4) with `camera` (side, three-quarter, front
    or top). `recover`: after a fall the dog gets up and goes on in its gait to the run's
    end (skills/recovery.py); the summary keeps `fell` and `fall_time_s` (the first fall)
    and adds `recoveries`. `use` ("auto" only): gaits (or their files) to play in place of
    the presets of their names, e.g. {"trot": "best_trot.toml"}. On a dog other than the
    shepherd, the gait (its speed band too) is Froude-scaled to the dog's legs
    (`gait_for_dog`) and `speed_mps` is the dog's own. A canter or gallop leads with the
    legs inside the turn (the side `heading_deg` ends on, for a profile; `on_lead`).
    Raises GaitError for an unknown gait or a speed outside the band."""
    dog = preset(spec) if isinstance(spec, str) else spec
    _check_inputs(seed, turn_rate_dps)
    camera_named(camera)  # before the run, not after it
    speed = speed_mps if isinstance(speed_mps, Profile) else Profile.constant(speed_mps)
    turn_side = turn_rate_dps or (
        heading_deg(duration_s) - heading_deg(0.0) if heading_deg is not None else 0.0
    )
    schedule = None
    if params == AUTO:
        length_ratio, mass_ratio = dog.froude_ratios()
        used = {k: GaitParams.load(v) if isinstance(v, str) else v for k, v in (use or {}).items()}
        schedule = GaitSchedule.auto(speed.max, length_ratio, mass_ratio, use=used, lead=turn_side)
        gait = schedule.at(speed(0.0)).params
    else:
        if use:
            raise SimError("use= replaces gaits of the automatic schedule: give params 'auto'")
        gait = GaitParams.load(params) if isinstance(params, str) else params
        gait = gait_for_dog(on_lead(gait, turn_side), dog)  # a turn's inside lead
        gait.check_speed(speed.min)
        gait.check_speed(speed.max)
    ground = parse_terrain(terrain) if isinstance(terrain, str) else terrain
    rng = np.random.default_rng(seed)
    with World(dog, gui=gui, renderer="egl" if record else None) as world:
        if ground is not None:
            world.add_terrain(ground, seed)
        world.place_dog(
            world.skeleton.stand_angles() + rng.normal(0.0, START_POSE_NOISE_RAD, world.n_joints)
        )
        standing = world.trunk_heights()
        for push in pushes:
            world.add_push(push)

        def gait_driver() -> Driver:  # from standing: at the start, and after a get-up
            controller = Controller(
                world.skeleton, gait, dt=CONTROL_DT, ground_map=world.ground_map
            )
            return Driver(
                controller,
                speed,
                heading_deg=heading_deg,
                turn_rate_dps=turn_rate_dps,
                schedule=schedule,
            )

        recovery = Recovery(world.skeleton, gait_driver) if recover else None
        driver = recovery if recovery is not None else gait_driver()
        recorder = VideoRecorder(record, camera=camera) if record else None
        try:
            result = run_episode(
                world,
                driver,
                duration_s,
                control_hz=1.0 / CONTROL_DT,
                recorder=recorder,
                progress=progress,
                log_hz=log_hz,
                extra_log=driver.log_fields,
                caption=driver.caption if schedule or recover else None,
                hooks=[recovery] if recovery is not None else (),
                on_fall=recovery.on_fall if recovery is not None else None,
            )
        finally:
            if recorder is not None:
                recorder.close()
    summary = summarize(
        result,
        gait=AUTO if schedule else gait.gait,
        speed_cmd=speed_mps if isinstance(speed_mps, float | int) else speed.max,
        duration_s=duration_s,
        seed=seed,
    )
    result.log["gait_names"] = np.array([gait.gait])  # the one gait; replays show it
    result.log["standing_heights_m"] = standing  # what "standing again" is a fraction of
    if schedule is not None:
        result.log["gait_names"] = np.array(schedule.names)
        summary["gaits_used"] = gaits_used(
            result.log["t"], result.log["gait_index"], schedule.names
        )
    if recovery is not None:
        summary["recoveries"] = recovery.judge(result.log, speed, result.status == "unstable")
    return result, summary


def gait_for_dog(gait: GaitParams, dog: DogSpec) -> GaitParams:
    """`gait` Froude-scaled from the dog it was made for (the shepherd, or the one its
    ratios name) to `dog`: lengths by the leg-length ratio, times by its square root."""
    dog_length, dog_mass = dog.froude_ratios()
    length_ratio, mass_ratio = dog_length / gait.length_ratio, dog_mass / gait.mass_ratio
    if math.isclose(length_ratio, 1.0) and math.isclose(mass_ratio, 1.0):  # already its own
        return gait
    return gait.scaled_to(length_ratio, mass_ratio)


def _check_inputs(seed: int, turn_rate_dps: float) -> None:
    if not (isinstance(seed, int | np.integer) and seed >= 0):
        raise SimError(f"seed must be a whole number >= 0, got {seed!r}")
    if not abs(turn_rate_dps) <= MAX_TURN_RATE_DPS:
        raise SimError(
            f"turn rate must be within +-{MAX_TURN_RATE_DPS:g} deg/s, got {turn_rate_dps:g}"
        )


def parse_push(text: str) -> Push:
    """A push from "T:FX,FY,FZ:DUR" (time [s], force [N] in the world frame, duration [s])."""
    parts = text.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        force = tuple(float(f) for f in parts[1].split(","))
        if len(force) != 3:
            raise ValueError
        start, duration = float(parts[0]), float(parts[2])
    except ValueError:
        raise SimError(
            f"push {text!r} must look like T:FX,FY,FZ:DUR, e.g. 10:0,200,0:0.1 "
            "(time s, force N, duration s)"
        ) from None
    return Push(start=start, force=force, duration=duration)  # type: ignore[arg-type]
