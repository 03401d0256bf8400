"""`quadsim optimize` and `quadsim reference` command paths (cheap objective, real clips)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from quadsim.optimize.cmaes import load_checkpoint
from quadsim.optimize.errors import OptimizeError, ReferenceFormatError, RunDirError
from quadsim.scripts import optimize_cmd, reference_cmd

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="quadsim")
    sp = p.add_subparsers(required=True)
    optimize_cmd.add_parser(sp)
    reference_cmd.add_parser(sp)
    return p.parse_args(argv)


def _opt(out: Path, *extra: str) -> argparse.Namespace:
    return _parse(
        [
            "optimize",
            "--gait",
            "sphere",
            "--objective",
            "sphere",
            "--dim",
            "4",
            "--executor",
            "serial",
            "--out",
            str(out),
            "--quiet",
            *extra,
        ]
    )


def test_optimize_sphere_run_and_resume(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    a = _opt(out, "--evals", "40", "--seed", "3")
    assert a.func(a) == 0
    assert load_checkpoint(out)["evals"] >= 40
    a = _opt(out, "--evals", "80", "--seed", "3", "--resume")
    assert a.func(a) == 0
    assert load_checkpoint(out)["evals"] >= 80
    assert "best f =" in capsys.readouterr().out
    assert (out / "best.txt").exists() and (out / "history.csv").exists()
    with pytest.raises(RunDirError, match="gait 'sphere' vs requested 'trot'"):
        b = _parse(
            [
                "optimize",
                "--gait",
                "trot",
                "--objective",
                "sphere",
                "--dim",
                "4",
                "--executor",
                "serial",
                "--out",
                str(out),
                "--resume",
                "--quiet",
            ]
        )
        b.func(b)


def test_optimize_bad_executor_is_a_value_error(tmp_path: Path) -> None:
    a = _opt(tmp_path / "x", "--executor", "threads")
    with pytest.raises(ValueError, match="valid: serial, local"):
        a.func(a)
    a = _opt(tmp_path / "y", "--evals", "0")
    with pytest.raises(OptimizeError):
        a.func(a)


def test_reference_json_and_plot(tmp_path: Path, capsys) -> None:
    clip = DATA / "dog_trot_joint_pos.txt"
    if not clip.is_file():
        pytest.skip("mocap data not available")
    fig = tmp_path / "ff.png"
    a = _parse(["reference", str(clip), "--json", "--plot", str(fig)])
    assert a.func(a) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["duty_factor"]) == {"LF", "RF", "LH", "RH"}
    assert d["periodic"] is True and "CC BY-NC 4.0" in d["attribution"]
    assert fig.stat().st_size > 5000


def test_reference_text_output_and_bad_file(tmp_path: Path, capsys) -> None:
    from quadsim.optimize.reference import synthetic_reference

    m = synthetic_reference(
        0.5,
        {"LH": (0, 0.4), "LF": (0.25, 0.65), "RH": (0.5, 0.9), "RF": (0.75, 0.15)},
        0.4,
        1.0,
        n_strides=3,
    )
    p = tmp_path / "syn.csv"
    p.write_text(
        "".join(
            f"{float(t)!r},{n},{x!r},{y!r},{z!r}\n"
            for i, t in enumerate(m.t)
            for n, (x, y, z) in zip(m.marker_names, m.markers[i].tolist(), strict=True)
        )
    )
    a = _parse(["reference", str(p)])
    assert a.func(a) == 0
    out = capsys.readouterr().out
    assert "touchdown order: LH -> LF -> RH -> RF" in out
    bad = _parse(["reference", str(tmp_path / "missing.txt")])
    with pytest.raises(ReferenceFormatError, match="missing.txt"):
        bad.func(bad)


@pytest.mark.slow
def test_real_gait_run_writes_the_best_gait_and_its_video(tmp_path: Path, capsys) -> None:
    import imageio.v2 as imageio

    from quadsim.gaits.params import GaitParams

    out = tmp_path / "run"
    argv = [
        "optimize",
        "--gait",
        "trot",
        "--free",
        "period_s,swing_height_m",
        "--popsize",
        "2",
        "--executor",
        "serial",
        "--out",
        str(out),
        "--quiet",
        "--speed",
        "1.8",
    ]
    a = _parse([*argv, "--evals", "2", "--episode-s", "3", "--video"])
    assert a.func(a) == 0
    best = GaitParams.load(out / "best_trot.toml")
    assert best.provenance["source"] == "optimizer" and best.provenance["evaluations"] == 2
    assert load_checkpoint(out)["config"]["meta"]["episode_s"] == 3.0
    # a resumed run scores its candidates as before, or not at all
    for changed in (["--episode-s", "4"], ["--speed", "2.0"], []):
        a = _parse([*argv[:-2], *changed, "--evals", "4", "--resume"])
        with pytest.raises(OptimizeError, match="resume with the same"):
            a.func(a)
    a = _parse([*argv[:-2], "--speed", "9", "--out", str(tmp_path / "fast")])
    with pytest.raises(OptimizeError, match="outside the trot band 1-2.5 m/s"):
        a.func(a)
    with imageio.get_reader(out / "best_trot.mp4") as video:
        frames = sum(1 for _ in video)
    assert frames >= 0.95 * optimize_cmd.VIDEO_S * 30
    assert "video of the best gait" in capsys.readouterr().out
