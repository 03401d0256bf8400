"""`quadsim retarget`: fit the dog skeleton to the real mocap clip (skipped without the data)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quadsim.mocap.motion import MOCAP_ATTRIBUTION
from quadsim.models import build_skeleton, preset
from quadsim.scripts.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dog_mocap"
WALK03 = DATA / "dog_walk03_joint_pos.txt"


def _clip() -> Path:
    if not WALK03.is_file():
        pytest.skip(f"dog motion capture not found at {DATA}")
    return WALK03


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    clip = _clip()
    out = tmp_path_factory.mktemp("retarget")
    ref, fig = out / "ref.npz", out / "fit.png"
    rc = main(
        [
            "retarget",
            str(clip),
            "--out",
            str(ref),
            "--plot",
            str(fig),
            "--frames",
            "30",
            "--start",
            "100",
            "--quiet",
        ]
    )
    assert rc == 0
    return dict(np.load(ref)), fig


def test_retarget_fits_the_toes_and_targets(fitted):
    d, fig = fitted
    assert d["joint_angles"].shape == (30, len(d["joint_names"]))
    assert d["toe_error"].shape == (30, 4)
    # each leg is solved in the dog's own kinematics for its toe: within 1 cm
    assert float(np.mean(d["toe_error"])) < 0.01
    assert float(np.max(d["toe_error"])) < 0.03
    # toes, head, tail tip and pelvis together (torso proportions differ from the mocap dog)
    assert float(np.mean(d["fit_error"])) < 0.03
    assert fig.is_file() and fig.stat().st_size > 10_000
    assert str(d["attribution"]) == MOCAP_ATTRIBUTION


def test_retarget_keeps_the_dog_model_and_its_limits(fitted):
    d, _ = fitted
    sk = build_skeleton(preset("shepherd"))
    assert tuple(d["joint_names"]) == sk.joint_names
    lo, hi, _ = sk.limits()
    q = d["joint_angles"]
    assert np.all(q >= lo - 1e-12) and np.all(q <= hi + 1e-12)
    # the fitted markers come from the dog's forward kinematics: its segment lengths hold
    names = list(d["marker_names"])
    mk = d["markers_fit"]
    for leg, lm in sk.legs.items():
        joints = ("shoulder", "elbow", "wrist") if leg[1] == "F" else ("hip", "knee", "hock")
        for (a, b), length in zip(
            zip(joints, joints[1:], strict=False), lm.lengths[:2], strict=True
        ):
            dist = np.linalg.norm(
                mk[:, names.index(f"{leg}_{a}")] - mk[:, names.index(f"{leg}_{b}")], axis=-1
            )
            np.testing.assert_allclose(dist, length, rtol=1e-9)
    # the FABRIK fit keeps the ik tree's bone lengths
    pos = d["ik_positions"]
    nodes = list(d["ik_node_names"])
    spine = [nodes.index(n) for n in ("pelvis", "spine1", "spine2", "spine3", "chest")]
    seg = np.linalg.norm(np.diff(pos[:, spine], axis=1), axis=-1)
    np.testing.assert_allclose(seg, np.broadcast_to(seg[0], seg.shape), rtol=1e-9)


def test_retarget_is_deterministic(tmp_path):
    clip = _clip()
    outs = []
    for k in range(2):
        ref = tmp_path / f"ref{k}.npz"
        assert main(["retarget", str(clip), "--out", str(ref), "--frames", "8", "--quiet"]) == 0
        outs.append(np.load(ref))
    for key in ("joint_angles", "markers_fit", "ik_positions", "base_quat"):
        np.testing.assert_array_equal(outs[0][key], outs[1][key])


def test_retarget_bad_inputs_give_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("1,2,3,4,5,6,7\n1,2,3,4,5,6,7\n")
    short = tmp_path / "short.txt"  # a mocap file whose second frame lacks a column
    short.write_text(",".join(["0.1"] * 81) + "\n" + ",".join(["0.1"] * 80) + "\n")
    cases = [
        ["retarget", str(short), "--out", str(tmp_path / "a.npz")],
        ["retarget", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "a.npz")],
        ["retarget", str(bad), "--out", str(tmp_path / "a.npz")],
        ["retarget", str(bad), "--out", str(tmp_path / "no" / "dir" / "a.npz")],
        ["retarget", str(bad), "--out", str(tmp_path / "a.csv")],
    ]
    words = ["expected 81", "not found", "cannot tell the format", "does not exist", ".npz"]
    for argv, word in zip(cases, words, strict=True):
        assert main(argv + ["--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and word in err, err
