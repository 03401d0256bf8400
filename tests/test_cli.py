"""The command line: summaries, logs, video, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_looks import bbox_aspect, coat

from quadsim.gaits.params import preset_names


def quadsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "quadsim.scripts.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_stand_json_is_one_object_on_stdout_and_log_follows_the_contract(tmp_path: Path) -> None:
    log = tmp_path / "stand.npz"
    out = quadsim("stand", "--duration", "1", "--json", "--log", str(log))
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["fell"] is False and summary["duration_s"] == 1.0
    assert set(summary["duty_factor"]) == {"LF", "RF", "LH", "RH"}
    data = np.load(log)
    T = len(data["t"])
    J = len(data["joint_names"])
    assert data["base_pos"].shape == (T, 3) and data["base_quat"].shape == (T, 4)
    assert data["foot_pos"].shape == (T, 4, 3) and data["foot_contact"].dtype == bool
    assert data["joint_q"].shape == (T, J) and data["joint_tau"].shape == (T, J)
    assert data["markers"].shape == (T, len(data["marker_names"]), 3)


def test_model_info_and_urdf(tmp_path: Path) -> None:
    out = quadsim("model", "--info", "--json", "--preset", "small")
    info = json.loads(out.stdout)
    assert info["dof"] == 38 and info["total_mass_kg"] == pytest.approx(10.0)
    urdf = tmp_path / "dog.urdf"
    assert quadsim("model", "--urdf", str(urdf)).returncode == 0
    assert urdf.read_text().startswith("<?xml")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["stand", "--duration", "0"], "positive"),
        (["stand", "--duration", "-3"], "positive"),
        (["stand", "--preset", "tiny"], "shepherd, small"),
        (["model", "--preset", "tiny"], "shepherd, small"),
        (["stand", "--log", "/no/such/folder/x.npz"], "does not exist"),
        (["stand", "--record", "/no/such/folder/x.mp4"], "does not exist"),
        (["stand", "--record", "video.avi"], ".mp4"),
        (["stand", "--duration", "1e12"], "at most 600 s"),
        (["stand", "--seed", "-5"], "must be >= 0"),
        (["run", "--gait", "trot", "--speed", "2", "--seed", "-5"], "must be >= 0"),
        (["run", "--gait", "trot", "--duration", "1e12"], "at most 600 s"),
        (["run", "--gait", "trot", "--turn-rate", "1e6"], "within +-360 deg/s"),
        (["run", "--gait", "trot", "--push", "0.5:1e9,0,0:0.1"], "at most 5000 N"),
        (
            ["run", "--gait", "trot", "--speed", "2.2", "--preset", "small"],
            "outside the trot band 0.815-2.039 m/s",  # the shepherd's band, Froude-scaled
        ),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(args: list[str], expected: str) -> None:
    out = quadsim(*args)
    assert out.returncode == 2
    assert expected in out.stderr
    assert "Traceback" not in out.stderr
    assert out.stdout == ""


def test_record_writes_a_playable_mp4_at_30_fps(tmp_path: Path) -> None:
    import imageio.v3 as iio

    video = tmp_path / "stand.mp4"
    out = quadsim("stand", "--duration", "1", "--record", str(video), "--quiet")
    assert out.returncode == 0, out.stderr
    frames = iio.imread(video)
    assert 28 <= len(frames) <= 31
    assert frames.shape[1:] == (480, 640, 3)
    assert frames[len(frames) // 2].std() > 10  # a picture, not a blank frame


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "--gait", "trot", "--speed", "9"], "outside the trot band 1.0-2.5 m/s"),
        (["run", "--gait", "moonwalk"], "known gaits: " + ", ".join(preset_names())),
        (["run", "--params", "/no/such/gait.toml"], "does not exist"),
        (["run", "--push", "1:2:3"], "T:FX,FY,FZ:DUR"),
        (["plot", "/no/such/run.npz", "--out", "fig.png"], "does not exist"),
    ],
)
def test_run_and_plot_bad_input_exit_2(args: list[str], expected: str) -> None:
    out = quadsim(*args)
    assert out.returncode == 2, out.stderr
    assert expected in out.stderr and "Traceback" not in out.stderr


def test_malformed_params_file_names_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        "schema_version = 1\ngait = 'trot'\nspeed_band_mps = [1.0, 2.5]\n"
        "[params]\nperiod_s = 'fast'\n"
    )
    out = quadsim("run", "--params", str(bad))
    assert out.returncode == 2 and "period_s" in out.stderr


def test_plot_draws_every_kind_from_a_run_log(tmp_path: Path) -> None:
    import imageio.v3 as iio

    log = tmp_path / "run.npz"
    assert (
        quadsim(
            "run",
            "--gait",
            "trot",
            "--speed",
            "1.5",
            "--duration",
            "1.5",
            "--log",
            str(log),
            "--quiet",
        ).returncode
        == 0
    )
    for kind in ("gait-diagram", "phase-contacts", "speed", "height", "torques", "path"):
        fig = tmp_path / f"{kind}.png"
        out = quadsim("plot", str(log), "--kind", kind, "--out", str(fig))
        assert out.returncode == 0, out.stderr
        image = iio.imread(fig)
        assert image.shape[0] > 200 and image.std() > 5  # a drawn figure, not a blank page
    window = tmp_path / "window.png"
    out = quadsim("plot", str(log), "--out", str(window), "--start", "0.5", "--end", "1.0")
    assert out.returncode == 0, out.stderr
    assert not np.array_equal(iio.imread(window), iio.imread(tmp_path / "gait-diagram.png"))
    out = quadsim("plot", str(log), "--out", str(window), "--start", "1.0", "--end", "0.5")
    assert out.returncode == 2 and "must come after" in out.stderr and "Traceback" not in out.stderr


def test_phase_contacts_need_one_gait_and_a_log_that_records_the_plan(tmp_path: Path) -> None:
    t = np.arange(0.0, 4.0, 0.01)
    log = {
        "t": t,
        "base_pos": np.zeros((len(t), 3)),
        "base_vel": np.zeros((len(t), 3)),
        "foot_contact": np.ones((len(t), 4), bool),
        "joint_tau": np.zeros((len(t), 2)),
    }
    old = tmp_path / "old.npz"
    np.savez(old, **log)
    out = quadsim("plot", str(old), "--kind", "phase-contacts", "--out", str(tmp_path / "a.png"))
    assert out.returncode == 2 and "planned_stance" in out.stderr and "Traceback" not in out.stderr
    # the path needs only positions: no commands, no orientation
    out = quadsim("plot", str(old), "--kind", "path", "--out", str(tmp_path / "p.png"))
    assert out.returncode == 0, out.stderr
    two = tmp_path / "two.npz"
    np.savez(
        two,
        **log,
        gait_phase=(t / 0.4) % 1.0,
        planned_stance=np.ones((len(t), 4), bool),
        gait_index=(t > 2.5).astype(float),
        gait_names=np.array(["walk", "trot"]),
    )
    out = quadsim("plot", str(two), "--kind", "phase-contacts", "--out", str(tmp_path / "b.png"))
    assert out.returncode == 2 and "walk, trot" in out.stderr and "Traceback" not in out.stderr
    out = quadsim(
        "plot",
        str(two),
        "--kind",
        "phase-contacts",
        "--out",
        str(tmp_path / "c.png"),
        "--end",
        "2.4",
    )
    assert out.returncode == 0, out.stderr


def test_the_video_camera_is_chosen_on_the_command_line(tmp_path: Path) -> None:
    import imageio.v3 as iio

    aspect = {}
    for camera in ("side", "front"):
        video = tmp_path / f"{camera}.mp4"
        out = quadsim(
            "stand", "--duration", "0.5", "--quiet", "--record", str(video), "--camera", camera
        )
        assert out.returncode == 0, out.stderr
        frames = iio.imread(video)
        tan, black = coat(frames[len(frames) // 2])
        assert tan.mean() > 0.01 and black.mean() > 0.005
        aspect[camera] = bbox_aspect(tan | black)
    assert aspect["side"] > 1.4 > 0.9 > aspect["front"], aspect
    bad = quadsim("run", "--duration", "1", "--camera", "sideways")
    assert bad.returncode == 2
    last = bad.stderr.strip().splitlines()[-1]
    assert "'side', 'three-quarter', 'front', 'top'" in last and "Traceback" not in bad.stderr
