"""`quadsim compare run.npz --reference CLIP`: a run's footfalls and objective terms against
a real dog's, and the side-by-side figure."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from quadsim.controller.simulate import simulate
from quadsim.mocap.footfalls import analyze_footfalls
from quadsim.mocap.motion import FEET, load_reference
from quadsim.optimize.compare import compare_log
from quadsim.optimize.objective import OBJECTIVES
from quadsim.runlog import save_log
from quadsim.scripts.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"
TROT = DATA / "dog_trot_joint_pos.txt"
pytestmark = pytest.mark.skipif(not TROT.is_file(), reason="dog mocap not in ../shared/data")


@pytest.fixture(scope="module")
def trot_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    # 14 s: the summary counts the start from standing, which compare leaves out
    result, summary = simulate("trot", 2.1, 14.0, seed=3)
    path = tmp_path_factory.mktemp("cmp") / "trot.npz"
    save_log(path, result.log)
    return path, summary


def test_compare_measures_the_run_and_the_clip(trot_log) -> None:
    path, summary = trot_log
    with np.load(path) as data:
        log = {k: data[k] for k in data.files}
    c = compare_log(log, TROT)
    # the run as its own summary measures it (after the start: within a sample or two)
    assert c["run"]["stride_period_s"] == pytest.approx(summary["stride_period_s"], abs=0.02)
    for f in FEET:
        assert c["run"]["duty_factor"][f] == pytest.approx(summary["duty_factor"][f], abs=0.05)
    # the clip as `quadsim reference` measures it, its period scaled by the Froude rule
    stats = analyze_footfalls(load_reference(TROT))
    assert c["clip"]["duty_factor"] == pytest.approx(stats.duty_factor)
    assert c["clip"]["stride_period_s"] > stats.stride_period_s  # a larger dog, slower strides
    assert c["clip"]["stride_period_s"] == pytest.approx(0.66, abs=0.01)
    assert c["speed_cmd_mps"] == pytest.approx(2.1)
    terms = c["terms"]
    assert set(terms) == {"f_d", "f_v", "f_h", "f_r", "f_T", "f_df", "f_ph", "f_ld"}
    assert terms["f_T"] == pytest.approx(
        abs(c["run"]["stride_period_s"] - 0.66) / c["clip"]["stride_period_s"], abs=0.02
    )
    assert 0.005 < terms["f_d"] < 0.1  # markers a few cm apart, not identical, not a fall
    w = OBJECTIVES["paper"]
    paper = w.d * terms["f_d"] + w.v * terms["f_v"] + w.h * terms["f_h"] + w.r * terms["f_r"]
    assert c["objective"]["paper"] == pytest.approx(paper)
    assert c["objective"]["both"] > c["objective"]["paper"] and not c["fell"]
    # f_d split into the markers' stride-mean pose and their motion about it: the sum
    split = c["f_d_split"]
    assert split["pose"] + split["motion"] == pytest.approx(terms["f_d"], rel=1e-9)
    assert split["pose"] > 0.0 and split["motion"] > 0.0
    farthest = [m["pose"] + m["motion"] for m in split["markers"]]
    assert len(farthest) == 3 and farthest == sorted(farthest, reverse=True)
    # the farthest marker alone is at least the mean over all of them
    assert farthest[0] >= terms["f_d"]


def test_compare_prints_the_table_and_draws_the_figure(trot_log, tmp_path: Path, capsys) -> None:
    import matplotlib.image as mpimg

    path, _ = trot_log
    fig = tmp_path / "cmp.png"
    assert main(["compare", str(path), "--reference", str(TROT), "--plot", str(fig)]) == 0
    out = capsys.readouterr().out
    labels = ("stride period [s]", "duty factor RH", "touchdown phase LF", "f_d", "f_ph")
    for label in (*labels, "pose: stride-mean offsets", "motion about the pose"):
        assert label in out
    assert "paper" in out and f"figure: {fig}" in out
    image = mpimg.imread(fig)
    assert image.shape[0] > 500 and image.shape[1] > 1000
    assert image[..., :3].std() > 0.1  # drawn, not blank
    assert main(["compare", str(path), "--reference", str(TROT), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) >= {"run", "clip", "terms", "objective", "f_d_split"}


def test_compare_refuses_bad_input_in_one_line(trot_log, tmp_path: Path, capsys) -> None:
    path, _ = trot_log
    short = tmp_path / "short.npz"
    with np.load(path) as data:
        log = {k: data[k] for k in data.files}
    keep = log["t"] < 2.5
    save_log(short, {k: (v[keep] if v.shape[:1] == keep.shape else v) for k, v in log.items()})
    for argv, named in (
        ([str(tmp_path / "none.npz"), "--reference", str(TROT)], "none.npz"),
        ([str(path), "--reference", str(tmp_path / "nope.txt")], "nope.txt"),
        ([str(short), "--reference", str(TROT)], "compare needs more than 3 s"),
    ):
        assert main(["compare", *argv]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and named in err
