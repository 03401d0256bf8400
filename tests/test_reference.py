"""Reference motion: loader, footfalls, strides, scaling, synthetic gait graphs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quadsim.mocap.errors import ReferenceFormatError
from quadsim.mocap.footfalls import analyze_footfalls
from quadsim.mocap.motion import (
    FEET,
    MARKER_NAMES,
    MOCAP_ATTRIBUTION,
    froude_number,
    froude_speed,
    leg_length,
    load_reference,
    scale_motion,
)
from quadsim.optimize.reference import extract_strides, stats_from_swing, synthetic_reference

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"
WALK00 = DATA / "dog_walk00_joint_pos.txt"
WALK03 = DATA / "dog_walk03_joint_pos.txt"
TROT = DATA / "dog_trot_joint_pos.txt"


def _need(p: Path) -> Path:
    if not p.is_file():
        pytest.skip(f"mocap data not available: {p}")
    return p


def _circ(a: float, b: float) -> float:
    return abs((a - b + 0.5) % 1.0 - 0.5)


WALK_SWING = {"LH": (0.0, 0.4), "LF": (0.25, 0.65), "RH": (0.5, 0.9), "RF": (0.75, 0.15)}
TROT_SWING = {"LH": (0.0, 0.6), "RF": (0.0, 0.6), "RH": (0.5, 0.1), "LF": (0.5, 0.1)}


# --------------------------------------------------------------------------- real clips


@pytest.mark.parametrize("path", [WALK00, WALK03, TROT], ids=lambda p: p.name)
def test_mocap_loads_into_world_frame(path: Path) -> None:
    m = load_reference(_need(path))
    assert m.marker_names == MARKER_NAMES
    assert m.markers.shape[1:] == (len(MARKER_NAMES), 3)
    assert m.fps == 60.0 and m.attribution == MOCAP_ATTRIBUTION
    # z up: toes near the ground, pelvis well above it
    assert np.median(m.marker("pelvis")[:, 2]) > 0.3
    assert abs(np.median(m.marker("LH_toe")[:, 2])) < 0.06
    # heading aligned: travels along +x, head ahead of pelvis, left legs at +y
    p = m.marker("pelvis")
    assert p[-1, 0] - p[0, 0] > 0.5
    assert abs(p[-1, 1] - p[0, 1]) < 0.05 * (p[-1, 0] - p[0, 0])
    assert np.median(m.marker("head")[:, 0] - p[:, 0]) > 0.3
    assert np.median(m.marker("LF_toe")[:, 1] - m.marker("RF_toe")[:, 1]) > 0
    assert np.median(m.marker("LH_hip")[:, 1] - m.marker("RH_hip")[:, 1]) > 0


def test_walk_clips_footfall_statistics() -> None:
    for path in (WALK00, WALK03):
        s = analyze_footfalls(load_reference(_need(path)))
        duty = np.array([s.duty_factor[f] for f in FEET])
        assert 0.5 <= duty.mean() <= 0.65, (path.name, s.duty_factor)
        assert np.all((duty > 0.45) & (duty < 0.67)), (path.name, s.duty_factor)
        assert 0.5 <= s.stride_period_s <= 0.7
        assert len(s.strides) >= 8
        # lateral-sequence walk: LH, LF, RH, RF with the hinds half a cycle apart
        assert s.touchdown_order == ("LH", "LF", "RH", "RF")
        assert _circ(s.phase_offset["RH"], 0.5) < 0.1


def test_walk00_speed_near_readme() -> None:
    s = analyze_footfalls(load_reference(_need(WALK00)))
    assert 0.8 <= s.speed_mps <= 1.3


def test_trot_clip_footfall_statistics() -> None:
    s = analyze_footfalls(load_reference(_need(TROT)))
    assert s.periodic  # 33 frames: one stride cycle
    for f in FEET:
        assert 0.25 <= s.duty_factor[f] <= 0.5, s.duty_factor
    # diagonal pairs touch down close in phase, the two pairs half a cycle apart
    # (the fore foot of a diagonal lands ~4 frames of 33 before the hind one)
    assert _circ(s.phase_offset["LH"], s.phase_offset["RF"]) < 0.15
    assert _circ(s.phase_offset["RH"], s.phase_offset["LF"]) < 0.15
    assert _circ(s.phase_offset["RH"], 0.5) < 0.12
    # and much closer than the lateral pairs
    assert _circ(s.phase_offset["LH"], s.phase_offset["LF"]) > 0.3
    assert 1.5 <= s.speed_mps <= 2.2
    assert 0.4 <= s.stride_period_s <= 0.7


def test_walk03_trot_segment_has_trot_footfalls() -> None:
    m = load_reference(_need(WALK03))
    s = analyze_footfalls(m.slice(440, 490))
    assert _circ(s.phase_offset["LH"], s.phase_offset["RF"]) < 0.15
    assert s.speed_mps > 1.4


def test_stride_extraction_on_real_walk() -> None:
    m = load_reference(_need(WALK00))
    c = extract_strides(m, n_phase=40)
    assert c.markers.shape == (40, len(MARKER_NAMES), 3)
    assert c.cycles.shape[0] >= 8
    # body frame: pelvis at the origin horizontally, ahead is +x
    pi = MARKER_NAMES.index("pelvis")
    np.testing.assert_allclose(c.markers[:, pi, :2], 0.0, atol=1e-9)
    assert np.all(c.markers[:, MARKER_NAMES.index("neck_base"), 0] > 0.2)
    # LH touches down at phase 0: its toe is near the ground and ahead of the hip
    lh = c.markers[0, MARKER_NAMES.index("LH_toe")]
    assert lh[2] < 0.05
    assert 0.25 < c.leg_length_m < 0.5


# --------------------------------------------------------------------------- synthetic


@pytest.mark.parametrize("swing", [WALK_SWING, TROT_SWING], ids=["walk", "trot"])
def test_synthetic_reference_reproduces_its_gait_graph(swing) -> None:
    period, L, v = 0.6, 0.5, 1.2
    m = synthetic_reference(period, swing, L, v, n_strides=4)
    s = analyze_footfalls(m, contact_height_m=0.005)
    want = stats_from_swing(swing)
    for f in FEET:
        assert s.duty_factor[f] == pytest.approx(want["duty_factor"][f], abs=0.03)
        assert _circ(s.phase_offset[f], want["phase_offset"][f]) < 0.03
    assert s.stride_period_s == pytest.approx(period, abs=1.5 / 60)
    assert s.speed_mps == pytest.approx(v, rel=1e-6)


def test_synthetic_stance_feet_do_not_slide() -> None:
    m = synthetic_reference(0.5, WALK_SWING, 0.4, 1.0, n_strides=3)
    s = analyze_footfalls(m, contact_height_m=0.005)
    for j, f in enumerate(FEET):
        toe = m.marker(f"{f}_toe")
        st = s.stance[:, j]
        # frames in stance whose neighbour is also in stance: no horizontal motion
        both = st[1:] & st[:-1]
        assert both.any()
        assert np.abs(np.diff(toe[:, 0])[both]).max() < 1e-9
        assert np.abs(toe[st, 2]).max() < 1e-9


def test_synthetic_rejects_missing_legs() -> None:
    with pytest.raises(ValueError, match="RF"):
        synthetic_reference(0.5, {"LF": (0, 0.4), "LH": (0, 0.4), "RH": (0, 0.4)}, 0.4, 1.0)


# --------------------------------------------------------------------------- scaling


def test_froude_scaling_keeps_froude_number_and_footfalls() -> None:
    m = synthetic_reference(0.6, TROT_SWING, 0.5, 1.5, n_strides=4)
    big = scale_motion(m, 2.0)
    s0 = analyze_footfalls(m, contact_height_m=0.005)
    s1 = analyze_footfalls(big, contact_height_m=0.01)
    assert leg_length(big) == pytest.approx(2 * leg_length(m))
    assert s1.speed_mps == pytest.approx(s0.speed_mps * np.sqrt(2.0), rel=1e-6)
    assert froude_number(s1.speed_mps, 1.0) == pytest.approx(froude_number(s0.speed_mps, 0.5))
    assert s1.stride_period_s == pytest.approx(s0.stride_period_s * np.sqrt(2), rel=0.05)
    for f in FEET:
        assert s1.duty_factor[f] == pytest.approx(s0.duty_factor[f], abs=0.03)
    assert froude_speed(1.0, 0.25, 1.0) == pytest.approx(2.0)


def test_stride_cycle_scaled_is_geometric() -> None:
    m = synthetic_reference(0.6, WALK_SWING, 0.5, 1.0, n_strides=4)
    c = extract_strides(m, n_phase=30, stats=analyze_footfalls(m, contact_height_m=0.005))
    c2 = c.scaled(2 * c.leg_length_m)
    np.testing.assert_allclose(c2.markers, 2 * c.markers)
    assert c2.speed_mps == pytest.approx(np.sqrt(2) * c.speed_mps)


# --------------------------------------------------------------------------- files and errors


def test_csv_round_trip(tmp_path: Path) -> None:
    m = synthetic_reference(0.5, WALK_SWING, 0.4, 1.0, n_strides=2)
    p = tmp_path / "ref.csv"
    lines = ["t,marker,x,y,z"]
    for i, t in enumerate(m.t):
        for j, n in enumerate(m.marker_names):
            x, y, z = m.markers[i, j]
            lines.append(f"{float(t)!r},{n},{float(x)!r},{float(y)!r},{float(z)!r}")
    p.write_text("\n".join(lines) + "\n")
    r = load_reference(p)
    assert r.marker_names == m.marker_names
    np.testing.assert_allclose(r.markers, m.markers)
    assert r.fps == pytest.approx(60.0)
    # header optional
    p2 = tmp_path / "nohead.csv"
    p2.write_text("\n".join(lines[1:]) + "\n")
    np.testing.assert_allclose(load_reference(p2).markers, m.markers)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.txt"
    with pytest.raises(ReferenceFormatError, match="nope.txt.*not found"):
        load_reference(p)
    assert issubclass(ReferenceFormatError, ValueError)


def test_wrong_column_count_names_file_and_line(tmp_path: Path) -> None:
    good = ",".join(["0.1"] * 81)
    p = tmp_path / "bad_joint_pos.txt"
    p.write_text(f"{good}\n{good}\n{','.join(['0.1'] * 80)}\n")
    with pytest.raises(ReferenceFormatError, match=r"bad_joint_pos.txt:3: expected 81 .* got 80"):
        load_reference(p)


def test_bad_number_and_bad_csv(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_text(",".join(["0.1"] * 80 + ["abc"]) + "\n")
    with pytest.raises(ReferenceFormatError, match=r"x.txt:1: not a number: 'abc'"):
        load_reference(p)
    q = tmp_path / "y.csv"
    q.write_text("t,marker,x,y,z\n0,head,0,0,1\n0,pelvis,0,0,1\n0.1,head,0,0,1\n")
    with pytest.raises(ReferenceFormatError, match=r"y.csv:4: .*missing \['pelvis'\]"):
        load_reference(q)
    r = tmp_path / "z.csv"
    r.write_text("t,marker,x,y,z\n0,head,0,0\n")
    with pytest.raises(ReferenceFormatError, match=r"z.csv:2: "):
        load_reference(r)
