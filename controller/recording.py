"""Headless MP4 recording: frames from World.render, encoded by imageio-ffmpeg, with a
camera that follows the dog from one of a few named views."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from quadsim.controller.errors import SimError
from quadsim.controller.kinematics import wrap_angle, yaw_of

if TYPE_CHECKING:  # the CLI reads the camera names without loading pybullet
    from quadsim.controller.sim import World
    from quadsim.controller.state import DogState


@dataclass(frozen=True)
class Camera:
    """A view of the dog: `yaw_deg` from its heading (0: from its right side, so it runs to
    the right of the picture; 90: from ahead), `pitch_deg` (negative: looking down),
    `distance` [m] from the target and the target's height `height` [m] relative to the
    pelvis (the middle of the body is `ahead` [m] in front of the pelvis)."""

    yaw_deg: float
    pitch_deg: float
    distance: float
    height: float
    ahead: float = 0.3


# side: the eye at leg height (0.37 m, looking a little up at the body), so the footfalls
# show against the horizon
CAMERAS: dict[str, Camera] = {
    "side": Camera(0.0, 1.0, 1.7, -0.08),
    "three-quarter": Camera(50.0, -15.0, 2.0, -0.15),
    "front": Camera(90.0, -6.0, 2.2, -0.15),
    "top": Camera(0.0, -89.0, 2.4, 0.0),
}
DEFAULT_CAMERA = "side"
# how much of the way to the dog's place and heading the camera moves each frame: it lags
# a little, so the picture does not shake with the body and the stride's yaw
FOLLOW_POSITION = 0.25
FOLLOW_HEADING = 0.1


def camera_named(name: str) -> Camera:
    """The camera called `name`; raises SimError naming the valid choices."""
    try:
        return CAMERAS[name]
    except KeyError:
        raise SimError(f"unknown camera {name!r}; choose one of: {', '.join(CAMERAS)}") from None


class FollowCamera:
    """A camera (a name of CAMERAS) that follows the dog, a little behind its moves."""

    def __init__(self, name: str = DEFAULT_CAMERA) -> None:
        self.camera = camera_named(name)
        self._target: np.ndarray | None = None
        self._heading = 0.0
        self._t = 0.0

    def view(self, world: World, state: DogState, width: int, height: int) -> np.ndarray:
        """The picture (height, width, 3) uint8 of `world` now, the camera moved on towards
        where `state` puts the dog."""
        cam = self.camera
        heading = float(yaw_of(state.base_quat))
        if self._target is None:
            self._heading = heading
        else:
            self._heading += FOLLOW_HEADING * wrap_angle(heading - self._heading)
        forward = np.array([math.cos(self._heading), math.sin(self._heading), 0.0])
        goal = state.base_pos + cam.ahead * forward + np.array([0.0, 0.0, cam.height])
        if self._target is None:
            self._target = goal
        else:
            # carried on at the dog's speed, then pulled part of the way to it: smooth, yet
            # no lag behind a galloping dog
            ahead = self._target + state.base_vel * (state.t - self._t)
            self._target = ahead + FOLLOW_POSITION * (goal - ahead)
        self._t = state.t
        return world.render(
            width,
            height,
            self._target,
            distance=cam.distance,
            yaw_deg=math.degrees(self._heading) + cam.yaw_deg,
            pitch_deg=cam.pitch_deg,
        )


class VideoRecorder:
    """Writes an MP4 at `fps` [frames/s] with a camera (a name of CAMERAS) that follows the
    dog smoothly."""

    def __init__(
        self,
        path: str | Path,
        fps: int = 30,
        size: tuple[int, int] = (640, 480),
        camera: str = DEFAULT_CAMERA,
    ) -> None:
        self.camera = FollowCamera(camera)
        self.path = Path(path)
        self.fps = fps
        self.width, self.height = size
        self.frames = 0
        import imageio.v2 as imageio  # only a recording run pays for the import

        self._writer = imageio.get_writer(
            str(self.path),
            fps=fps,
            codec="libx264",
            quality=7,
            macro_block_size=8,
            ffmpeg_log_level="error",
        )

    def due(self, t: float) -> bool:
        """Whether a frame is due at simulated time `t` [s]."""
        return t + 1e-9 >= self.frames / self.fps

    def capture(self, world: World, state: DogState, text: str | None = None) -> None:
        """Render the scene now and append it to the video, with `text` (if any)
        written in its top-left corner."""
        img = self.camera.view(world, state, self.width, self.height)
        if text:
            img = _write_text(img, text)
        self._writer.append_data(img)
        self.frames += 1

    def close(self) -> None:
        self._writer.close()


@functools.cache
def _caption_font():  # noqa: ANN202 - a PIL font
    from PIL import ImageFont

    return ImageFont.load_default(size=22)


def _write_text(img: np.ndarray, text: str) -> np.ndarray:
    """`img` with `text` in dark letters on a light box in its top-left corner."""
    from PIL import Image, ImageDraw

    picture = Image.fromarray(img)
    draw = ImageDraw.Draw(picture)
    font = _caption_font()
    left, top, right, bottom = draw.textbbox((12, 10), text, font=font)
    draw.rectangle((left - 6, top - 4, right + 6, bottom + 4), fill=(245, 245, 240))
    draw.text((12, 10), text, fill=(20, 20, 20), font=font)
    return np.asarray(picture)
