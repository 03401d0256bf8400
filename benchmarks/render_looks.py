"""The dog's picture in the README (docs/dog.png) and a short clip of each gait at its
nominal speed (docs/clips/<gait>.mp4), filmed by the default side camera.

    python benchmarks/render_looks.py [--picture-only] [--seconds 4] [--size 480x360]

The picture is drawn by pybullet's TinyRenderer (headless, the same on every machine): the
trot at 2 m/s, mid-stride, from the side and from three-quarters ahead. Each clip starts
once the gait has reached its speed (1 m/s^2 from standing) and settled for a second.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image

from quadsim.controller.drive import Driver
from quadsim.controller.episode import run_episode
from quadsim.controller.loop import Controller
from quadsim.controller.profile import Profile
from quadsim.controller.recording import FollowCamera, VideoRecorder
from quadsim.controller.sim import World
from quadsim.controller.simulate import CONTROL_DT, START_POSE_NOISE_RAD
from quadsim.controller.state import DogState
from quadsim.gaits.params import NOMINAL_SPEED_MPS, GaitParams

DOCS = Path(__file__).resolve().parents[1] / "docs"
PICTURE_AT_S = 2.6  # [s] into the trot: at speed, the legs spread mid-stride
PICTURE_DISTANCE_M = (1.5, 1.9)  # side, three-quarter
PICTURE_ROWS = slice(70, 340)
SETTLE_S = 1.0  # [s] at the nominal speed before a clip starts
ACCEL_MPS2 = 1.0  # the drive's speed ramp from standing


class LateRecorder(VideoRecorder):
    """A VideoRecorder whose first frame is at simulated time `start_s`."""

    def __init__(self, path: Path, start_s: float, size: tuple[int, int]) -> None:
        super().__init__(path, size=size)
        self.start_s = start_s

    def due(self, t: float) -> bool:
        return t >= self.start_s and super().due(t - self.start_s)


class Snapshot:
    """Takes the README picture's two views once, at `at_s`, in a recorder's place."""

    def __init__(self, at_s: float) -> None:
        self.at_s = at_s
        self.views: list[np.ndarray] = []
        self.cameras = [FollowCamera("side"), FollowCamera("three-quarter")]
        for cam, distance in zip(self.cameras, PICTURE_DISTANCE_M, strict=True):
            # closer than a video's and aimed higher: the dog fills the picture
            cam.camera = replace(cam.camera, distance=distance, height=-0.02, pitch_deg=-6.0)

    def due(self, t: float) -> bool:
        return not self.views and t >= self.at_s

    def capture(self, world: World, state: DogState, text: str | None = None) -> None:
        self.views = [cam.view(world, state, 480, 360) for cam in self.cameras]


def run(gait: str, speed: float, duration: float, recorder: object, renderer: str) -> None:
    """Run `gait` at `speed` [m/s] from standing (seed 0), filmed by `recorder`."""
    rng = np.random.default_rng(0)
    with World("shepherd", renderer=renderer) as world:
        world.place_dog(
            world.skeleton.stand_angles() + rng.normal(0.0, START_POSE_NOISE_RAD, world.n_joints)
        )
        params = GaitParams.load(gait)
        controller = Controller(world.skeleton, params, dt=CONTROL_DT, ground_map=world.ground_map)
        driver = Driver(controller, Profile.constant(speed))
        run_episode(
            world,
            driver,
            duration,
            control_hz=1.0 / CONTROL_DT,
            recorder=recorder,
            caption=lambda _s: f"{gait} {speed:g} m/s",
        )


def picture(out: Path) -> None:
    snap = Snapshot(PICTURE_AT_S)
    run("trot", NOMINAL_SPEED_MPS["trot"], PICTURE_AT_S + 0.01, snap, "tiny")
    both = np.concatenate(snap.views, axis=1)[PICTURE_ROWS]  # less empty sky
    Image.fromarray(both).save(out, optimize=True)
    print(f"{out}: {out.stat().st_size / 1e3:.0f} kB")


def clips(folder: Path, seconds: float, size: tuple[int, int], gaits: list[str]) -> None:
    folder.mkdir(exist_ok=True)
    for gait in gaits:
        speed = NOMINAL_SPEED_MPS[gait]
        start = speed / ACCEL_MPS2 + SETTLE_S
        path = folder / f"{gait}.mp4"
        recorder = LateRecorder(path, start, size)
        began = time.perf_counter()
        try:
            run(gait, speed, start + seconds, recorder, "egl")
        finally:
            recorder.close()
        wall = time.perf_counter() - began
        print(f"{path}: {path.stat().st_size / 1e3:.0f} kB, {recorder.frames} frames, {wall:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--picture-only", action="store_true")
    parser.add_argument("--seconds", type=float, default=4.0, help="clip length [s]")
    parser.add_argument("--size", default="480x360", help="clip frame size, WxH")
    parser.add_argument(
        "--gaits", default=",".join(NOMINAL_SPEED_MPS), help="the clips to film (a changed gait's)"
    )
    args = parser.parse_args()
    gaits = args.gaits.split(",")
    if unknown := sorted(set(gaits) - set(NOMINAL_SPEED_MPS)):
        parser.error(f"unknown gaits {unknown}; choose from {', '.join(NOMINAL_SPEED_MPS)}")
    picture(DOCS / "dog.png")
    if not args.picture_only:
        width, height = (int(v) for v in args.size.split("x"))
        clips(DOCS / "clips", args.seconds, (width, height), gaits)


if __name__ == "__main__":
    main()
