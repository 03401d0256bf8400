"""The dog as a camera sees it: coat colours in the picture, and each named camera its own
view (TinyRenderer, headless and the same on every machine)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from quadsim.controller import sim
from quadsim.controller.errors import SimError
from quadsim.controller.recording import CAMERAS, FollowCamera, VideoRecorder
from quadsim.controller.sim import World
from quadsim.controller.simulate import simulate
from quadsim.models import urdf_text

WIDTH, HEIGHT = 320, 240


def coat(img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks (H, W) of tan pixels (orange-brown, lit or shaded) and of black ones (the
    saddle, muzzle, ears: nothing else in the scene is near black; shadows are grey)."""
    rgb = img.astype(float)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    tan = (r > 90) & (r > g + 20) & (g > b + 15)
    black = rgb.max(axis=-1) < 45
    return tan, black


def bbox_aspect(mask: np.ndarray) -> float:
    """Width over height of the box around the mask's pixels."""
    rows, cols = np.nonzero(mask)
    return (np.ptp(cols) + 1) / (np.ptp(rows) + 1)


@pytest.fixture(scope="module")
def views() -> dict[str, np.ndarray]:
    """The standing dog through each named camera."""
    with World("shepherd", renderer="tiny") as world:
        world.place_dog(world.skeleton.stand_angles())
        state = world.read_state()
        return {name: FollowCamera(name).view(world, state, WIDTH, HEIGHT) for name in CAMERAS}


def test_coat_colours_appear_in_a_rendered_frame(views: dict[str, np.ndarray]) -> None:
    tan, black = coat(views["side"])
    assert tan.mean() > 0.02 and black.mean() > 0.01, (tan.mean(), black.mean())
    # both on the dog, in the middle of the picture (the camera aims at it)
    for mask in (tan, black):
        rows, cols = np.nonzero(mask)
        assert WIDTH / 4 < cols.mean() < 3 * WIDTH / 4
        assert HEIGHT / 6 < rows.mean() < 5 * HEIGHT / 6
    # the saddle is on the back: black pixels sit above the tan ones on average
    assert np.nonzero(black)[0].mean() < np.nonzero(tan)[0].mean()


def test_each_camera_shows_its_own_view(views: dict[str, np.ndarray]) -> None:
    aspect = {name: bbox_aspect(np.logical_or(*coat(img))) for name, img in views.items()}
    # from the side the dog is long and low; from ahead narrow and tall
    assert aspect["side"] > 1.4 and aspect["front"] < 0.9, aspect
    assert aspect["front"] < aspect["three-quarter"] < aspect["side"], aspect
    # from above there is no horizon: the top of the picture is the blue-checked ground,
    # where from the side it is sky

    def ground_at_top(img: np.ndarray) -> float:
        band = img[: HEIGHT // 10].astype(int)
        return float((band[..., 2] > band[..., 0] + 30).mean())

    assert ground_at_top(views["side"]) == 0.0 and ground_at_top(views["top"]) > 0.2
    names = list(views)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert np.abs(views[a].astype(int) - views[b].astype(int)).mean() > 10, (a, b)


def test_an_unknown_camera_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(SimError, match="side, three-quarter, front, top"):
        VideoRecorder(tmp_path / "x.mp4", camera="sideways")
    with pytest.raises(SimError, match="side, three-quarter, front, top"):
        simulate("trot", 2.0, 1.0, record=tmp_path / "x.mp4", camera="sideways")
    assert not (tmp_path / "x.mp4").exists()


def test_the_looks_do_not_change_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same trot with the dog drawn and with no visual shapes at all: every logged
    array is bit for bit the same, so the looks cannot move a gait figure."""
    drawn, _ = simulate("trot", 2.0, 1.5, seed=3)
    plain = re.compile(r"\s*<visual>.*?</visual>", re.DOTALL)
    monkeypatch.setattr(sim, "urdf_text", lambda sk: plain.sub("", urdf_text(sk)))
    bare, _ = simulate("trot", 2.0, 1.5, seed=3)
    assert "<visual>" in str(drawn.log["urdf"]) and "<visual>" not in str(bare.log["urdf"])
    for key, value in drawn.log.items():
        if key != "urdf":
            np.testing.assert_array_equal(value, bare.log[key], err_msg=key)
