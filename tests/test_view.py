"""The HTML replay (`quadsim view`, `quadsim run --html`): one page that needs no network,
carrying the log's motion at the replay's frame rate, the ground and terrain, and a caption;
headless Chromium draws the dog in its coat's colours. Its bad input is tested with the
exports' (test_export.py)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from test_cli import quadsim

from quadsim.controller.simulate import simulate
from quadsim.export import replay
from quadsim.export.html import FPS
from quadsim.models.looks import SADDLE, TAN
from quadsim.runlog import load_log, save_log

DURATION = 3.0
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def trot(tmp_path_factory) -> tuple[dict, Path]:
    """A trot over 3 cm steps, its log and its replay."""
    folder = tmp_path_factory.mktemp("view")
    result, summary = simulate("trot", 2.0, DURATION, seed=0, terrain="steps:0.03:1")
    assert not summary["fell"]
    npz = folder / "trot.npz"
    save_log(npz, result.log)
    return load_log(npz), replay(npz, folder / "trot.html")


def scene_of(page: str) -> dict:
    match = re.search(r"^const scene = (\{.*\});$", page, flags=re.MULTILINE)
    assert match, "the page carries no scene"
    return json.loads(match.group(1))


def test_the_page_needs_no_network(trot: tuple[dict, Path]) -> None:
    page = trot[1].read_text()
    tags = re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", page)
    assert tags and all("src=" not in t and "href=" not in t for t in tags), tags
    assert "MeshCat.Viewer" in page  # the viewer is inlined


def test_the_replay_carries_the_logs_motion(trot: tuple[dict, Path]) -> None:
    log, html = trot
    scene = scene_of(html.read_text())
    frames, links = scene["frames"], len(scene["links"])
    assert links == len(log["link_names"])
    assert frames == int(round((log["t"][-1] - log["t"][0]) * FPS)) + 1
    motion = np.frombuffer(base64.b64decode(scene["motion"]), dtype="<f4")
    times = motion[:frames]
    pos = motion[frames : frames + links * frames * 3].reshape(links, frames, 3)
    quat = motion[frames + links * frames * 3 :].reshape(links, frames, 4)
    # every frame is the log sample nearest its time on the replay's clock, at the time
    # and pose the log has, within float32
    clock = log["t"][0] + np.arange(frames) / FPS
    rows = np.minimum(np.searchsorted(log["t"], clock), len(log["t"]) - 1)
    assert np.allclose(times, log["t"][rows] - log["t"][0], atol=1e-6)
    assert np.abs(pos - log["link_pos"][rows].transpose(1, 0, 2)).max() < 1e-5
    assert np.abs(quat - log["link_quat"][rows].transpose(1, 0, 2)).max() < 1e-6


def test_the_replay_shows_the_ground_the_terrain_and_a_caption(trot: tuple[dict, Path]) -> None:
    log, html = trot
    scene = scene_of(html.read_text())
    ground = scene["ground"]
    # two tones of flat tiles, then one mesh per step of the terrain
    assert len(ground["geometries"]) == 2 + len(log["ground_boxes"]) > 2
    tops = [max(g["data"]["attributes"]["position"]["array"][2::3]) for g in ground["geometries"]]
    assert np.allclose(tops[2:], log["ground_boxes"][:, 4])
    caption = scene["captions"][-1]
    assert caption.startswith("trot ") and "(command 2.00)" in caption


def test_run_writes_the_replay_straight_from_the_run(tmp_path: Path) -> None:
    out = quadsim(
        "run", "--gait", "walk", "--duration", "0.5", "--quiet", "--html", f"{tmp_path}/w.html"
    )
    assert out.returncode == 0, out.stderr
    assert scene_of((tmp_path / "w.html").read_text())["captions"][0].startswith("walk ")


def screenshot(page: Path, png: Path, profile: Path, seconds: float) -> np.ndarray:
    """What headless Chromium draws of `page` after `seconds` of (virtual) time."""
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-unsafe-swiftshader",  # WebGL on the CPU
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=960,600",
        f"--virtual-time-budget={int(seconds * 1000)}",
        f"--screenshot={png}",
    ]
    subprocess.run([CHROMIUM, *flags, page.as_uri()], capture_output=True, timeout=120, check=True)
    return iio.imread(png)[..., :3].astype(float) / 255.0


def _near(image: np.ndarray, rgba: tuple[float, ...], tolerance: float) -> np.ndarray:
    return np.abs(image - np.array(rgba[:3])).max(axis=-1) < tolerance


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (Debian package chromium) to draw with")
def test_chromium_draws_the_dog_in_the_middle_of_the_frame(
    trot: tuple[dict, Path], tmp_path: Path
) -> None:
    image = screenshot(trot[1], tmp_path / "shot.png", tmp_path / "profile", 2.0)
    h, w, _ = image.shape
    middle = image[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4]
    # lit and shaded, the coat keeps its hue: tan within 0.2 of its colour (or darker by
    # shading), the saddle near black
    tan = _near(middle, TAN, 0.2)
    black = _near(middle, SADDLE, 0.08)
    assert tan.sum() > 500 and black.sum() > 200, (tan.sum(), black.sum())
    # and nowhere near the corners, where only the sky and ground are
    assert _near(image[: h // 8, : w // 8], TAN, 0.2).sum() == 0
