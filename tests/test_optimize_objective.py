"""Objective terms on run-log arrays: known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quadsim.controller.kinematics import yaw_of
from quadsim.mocap.footfalls import analyze_footfalls
from quadsim.mocap.motion import FEET
from quadsim.optimize.errors import ObjectiveError
from quadsim.optimize.objective import (
    Objective,
    Weights,
    evaluate_log,
    f_d,
    f_h,
    f_r,
    f_v,
    fall_penalty,
    marker_distance,
    marker_split,
    match_markers,
)
from quadsim.optimize.reference import extract_strides, synthetic_reference

SWING = {"LH": (0.0, 0.4), "LF": (0.25, 0.65), "RH": (0.5, 0.9), "RF": (0.75, 0.15)}


def _yaw_quat(yaw_rad: np.ndarray) -> np.ndarray:
    q = np.zeros((len(yaw_rad), 4))
    q[:, 2] = np.sin(yaw_rad / 2)
    q[:, 3] = np.cos(yaw_rad / 2)
    return q


def _log_from_motion(m, contact: np.ndarray) -> dict:
    pelvis = m.marker("pelvis")
    return {
        "t": m.t,
        "base_pos": pelvis.copy(),
        "base_quat": _yaw_quat(np.zeros(m.n_frames)),
        "base_vel": np.gradient(pelvis, m.t, axis=0),
        "foot_pos": np.stack([m.marker(f"{f}_toe") for f in FEET], axis=1),
        "foot_contact": contact,
        "markers": m.markers.copy(),
        "marker_names": np.array(m.marker_names),
    }


@pytest.fixture(scope="module")
def walk():
    m = synthetic_reference(0.6, SWING, 0.5, 1.0, n_strides=5)
    stats = analyze_footfalls(m, contact_height_m=0.005, contact_speed_mps=100.0)
    ref = extract_strides(m, n_phase=40, stats=stats)
    return m, stats, ref


def test_marker_distance_known_answers() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((20, 5, 3))
    assert marker_distance(a, a) == 0.0
    d = np.array([0.03, -0.04, 0.0])  # |d| = 0.05
    assert marker_distance(a + d, a) == pytest.approx(0.05**2)
    # weights: only marker 2 shifted by 0.1; weight 3 of total 3 + 4 * 1
    b = a.copy()
    b[:, 2, 0] += 0.1
    w = np.array([1, 1, 3, 1, 1.0])
    assert marker_distance(b, a, w) == pytest.approx(3 * 0.01 / 7)
    with pytest.raises(ObjectiveError):
        marker_distance(a, a[:, :4])


def test_marker_split_parts_sum_to_the_distance_and_tell_offset_from_motion() -> None:
    rng = np.random.default_rng(1)
    ref = rng.standard_normal((30, 4, 3))
    w = np.array([1.0, 2.0, 0.5, 1.5])
    names = ["a", "b", "c", "d"]
    # a rigid offset is all pose: the distance of the shift, no motion
    shifted = marker_split(ref + [0.03, -0.04, 0.0], ref, names, w)
    assert shifted.pose == pytest.approx(0.05**2) and shifted.motion == pytest.approx(
        0.0, abs=1e-15
    )
    assert shifted.offset == pytest.approx(np.tile([0.03, -0.04, 0.0], (4, 1)))
    # a wobble about the reference's own means is all motion
    wobble = rng.standard_normal((30, 4, 3)) * 0.01
    wobble -= wobble.mean(axis=0)
    moving = marker_split(ref + wobble, ref, names, w)
    assert moving.pose == pytest.approx(0.0, abs=1e-15)
    assert moving.motion == pytest.approx(marker_distance(ref + wobble, ref, w))
    # both: the parts sum to the weighted distance, marker by marker as well
    both = marker_split(ref + wobble + [0.0, 0.0, 0.02], ref, names, w)
    assert both.pose + both.motion == pytest.approx(
        marker_distance(ref + wobble + [0, 0, 0.02], ref, w)
    )
    per_marker = np.mean(np.sum(wobble**2, axis=2), axis=0) + 0.02**2
    assert both.marker_pose + both.marker_motion == pytest.approx(per_marker)


def test_match_markers_by_name() -> None:
    si, ri, w = match_markers(["head", "x", "pelvis"], ["pelvis", "head", "y"], {"head": 2.0})
    assert list(si) == [0, 2] and list(ri) == [1, 0] and list(w) == [2.0, 1.0]
    with pytest.raises(ObjectiveError, match="no marker names in common"):
        match_markers(["a"], ["b"])


def test_f_d_of_a_run_against_itself_is_zero(walk) -> None:
    m, stats, ref = walk
    log = _log_from_motion(m, stats.stance)
    assert f_d(log, ref) == pytest.approx(0.0, abs=1e-12)


def test_f_d_vertical_shift_scores_its_square_horizontal_shift_is_free(walk) -> None:
    m, stats, ref = walk
    log = _log_from_motion(m, stats.stance)
    up = dict(log, markers=log["markers"] + np.array([0.0, 0.0, 0.02]))
    # keep the leg length of the reference (the shift would change the measured one)
    assert f_d(up, ref, leg_length_m=ref.leg_length_m) == pytest.approx(0.02**2, rel=1e-9)
    side = dict(log, markers=log["markers"] + np.array([0.7, -0.3, 0.0]))
    assert f_d(side, ref) == pytest.approx(0.0, abs=1e-12)


def test_f_d_scales_reference_to_the_leg_length(walk) -> None:
    m, stats, ref = walk
    big = synthetic_reference(0.6 * math.sqrt(2), SWING, 1.0, math.sqrt(2), n_strides=5)
    bstats = analyze_footfalls(big, contact_height_m=0.01, contact_speed_mps=100.0)
    log = _log_from_motion(big, bstats.stance)
    # a dog twice the size doing the Froude-similar gait matches the small reference
    # (up to touchdowns quantized to 60 Hz frames: ~2 cm RMS at swing-toe speeds)
    assert f_d(log, ref) < 1e-3
    assert f_d(log, ref, leg_length_m=ref.leg_length_m) > 100 * f_d(log, ref)


def test_f_d_best_alignment_finds_a_phase_shift(walk) -> None:
    m, stats, ref = walk
    log = _log_from_motion(m, np.roll(stats.stance, 6, axis=0))
    assert f_d(log, ref) > 1e-3
    assert f_d(log, ref, align="best") < 0.2 * f_d(log, ref)


def test_f_v_sagittal_and_coronal_error() -> None:
    t = np.linspace(0, 4, 401)
    pos = np.stack([1.0 * t, 0.2 * t, np.full_like(t, 0.5)], axis=1)
    assert f_v(t, pos, (1.0, 0.0)) == pytest.approx(0.2)
    assert f_v(t, pos, (1.0, 0.2)) == pytest.approx(0.0, abs=1e-12)
    assert f_v(t, pos, (1.5, 0.2), bounds=[(0, 100), (100, 250)]) == pytest.approx(0.5)
    # commanded heading 90 deg: the motion is all coronal (to the right)
    assert f_v(t, pos, (0.2, -1.0), heading_cmd_rad=math.pi / 2) == pytest.approx(0.0, abs=1e-12)


def test_f_h_constant_velocity_and_sinusoid() -> None:
    t = np.linspace(0, 10, 10001)
    line = np.stack([2 * t, 0 * t, 0.5 + 0 * t], axis=1)
    assert f_h(t, line) == pytest.approx(0.0, abs=1e-9)
    A, w = 0.02, 2 * math.pi * 2.0
    bob = line.copy()
    bob[:, 2] += A * np.sin(w * t)
    # mean |a| = A w^2 * mean|sin| = A w^2 * 2 / pi
    assert f_h(t, bob) == pytest.approx(A * w**2 * 2 / math.pi, rel=1e-3)


def test_f_r_heading_error_in_degrees() -> None:
    yaw = np.full(50, math.radians(10.0))
    assert f_r(_yaw_quat(yaw)) == pytest.approx(10.0)
    assert f_r(_yaw_quat(np.full(50, math.radians(350.0)))) == pytest.approx(10.0)
    assert f_r(_yaw_quat(yaw), heading_cmd_deg=10.0) == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(yaw_of(_yaw_quat(yaw)), yaw)


def test_fall_penalty_is_large_finite_and_ranks_survival() -> None:
    p = [fall_penalty(s, 20.0) for s in (0.0, 5.0, 19.0, 20.0)]
    assert p[0] == 2e4 and p[-1] == 1e4
    assert p == sorted(p, reverse=True)
    assert all(math.isfinite(v) for v in p)


def test_evaluate_log_total_and_fall(walk) -> None:
    m, stats, ref = walk
    log = _log_from_motion(m, stats.stance)
    o = evaluate_log(log, reference=ref, v_cmd=(0.8, 0.0))
    assert isinstance(o, Objective) and not o.fell
    assert o.f_v == pytest.approx(0.2, abs=1e-6)
    assert o.f_d == pytest.approx(0.0, abs=1e-12)
    assert o.f_h == pytest.approx(0.0, abs=1e-6)  # the synthetic head moves uniformly
    assert o.total == pytest.approx(100 * o.f_d + 5 * o.f_v + 0.5 * o.f_h + 5 * o.f_r)
    o2 = evaluate_log(log, reference=ref, v_cmd=(0.8, 0.0), weights=Weights(v=1.0))
    assert o2.total == pytest.approx(0.2, abs=1e-6)
    assert float(o2) == o2.total and set(o2.terms()) == {"f_d", "f_v", "f_h", "f_r"}
    early = evaluate_log(log, fell=True, fall_time_s=1.0, duration_s=20.0)
    late = evaluate_log(log, fell=True, fall_time_s=15.0, duration_s=20.0)
    assert early.fell and 1e4 < late.total < early.total <= 2e4
    nan_log = dict(log, base_pos=log["base_pos"] * np.nan)
    assert evaluate_log(nan_log, v_cmd=(1.0, 0.0)).fell
