"""Headless MP4 recording: frames from World.render, encoded by imageio-ffmpeg."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from quadsim.controller.sim import World
from quadsim.controller.state import DogState


class VideoRecorder:
    """Writes an MP4 at `fps` [frames/s] with a camera that follows the dog smoothly."""

    def __init__(self, path: str | Path, fps: int = 30, size: tuple[int, int] = (640, 480)) -> None:
        self.path = Path(path)
        self.fps = fps
        self.width, self.height = size
        self.frames = 0
        self._target: np.ndarray | None = None
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
        goal = state.base_pos + np.array([0.3, 0.0, -0.15])
        # the camera lags behind the dog a little, so the picture does not shake with the body
        self._target = goal if self._target is None else self._target + 0.25 * (goal - self._target)
        img = world.render(
            self.width, self.height, self._target, distance=2.0, yaw_deg=35.0, pitch_deg=-15.0
        )
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
