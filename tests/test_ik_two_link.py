"""Analytic two-link IK: exactness, both branches, clamping, batching, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsim.ik import Chain, IKError, two_link
from quadsim.ik.errors import BoneLengthError, NonFiniteTargetError, ShapeError
from quadsim.ik.two_link import solve_2d, solve_3d

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)
lengths = st.floats(0.05, 5.0)
angles = st.floats(-np.pi, np.pi)


def fk2(l1, l2, th1, th2):
    mid = l1 * np.stack([np.cos(th1), np.sin(th1)], -1)
    a = th1 + th2
    return mid, mid + l2 * np.stack([np.cos(a), np.sin(a)], -1)


@SETTINGS
@given(lengths, lengths, angles, st.floats(0.02, np.pi - 0.02), st.sampled_from([1.0, -1.0]))
def test_solve_2d_exact_both_branches(l1, l2, th1, th2, sgn):
    _, target = fk2(l1, l2, th1, sgn * th2)
    scale = l1 + l2
    for bend in (1.0, -1.0):
        a1, a2, ok = solve_2d(l1, l2, target, bend=bend)
        assert ok
        assert np.sign(a2) == bend
        _, end = fk2(l1, l2, a1, a2)
        assert np.linalg.norm(end - target) <= 1e-12 * scale
    # the branch with the generating sign recovers the generating angles
    a1, a2, _ = solve_2d(l1, l2, target, bend=sgn)
    assert abs(a2 - sgn * th2) < 1e-6
    assert abs(np.angle(np.exp(1j * (a1 - th1)))) < 1e-6


@SETTINGS
@given(lengths, lengths, angles, st.floats(1.0001, 3.0), st.floats(0.3, 1.0))
def test_solve_2d_unreachable_clamps_toward_target(l1, l2, phi, factor, max_reach):
    reach = max_reach * (l1 + l2)
    if reach < abs(l1 - l2):
        return
    target = factor * reach * np.array([np.cos(phi), np.sin(phi)])
    a1, a2, ok = solve_2d(l1, l2, target, max_reach=max_reach)
    assert not ok
    _, end = fk2(l1, l2, a1, a2)
    assert np.linalg.norm(end) == pytest.approx(reach, rel=1e-9, abs=1e-12)
    # points at the target
    cross = end[0] * target[1] - end[1] * target[0]
    assert cross == pytest.approx(0.0, abs=1e-9 * reach * np.linalg.norm(target))
    assert end @ target > 0


def test_solve_2d_inside_min_reach_clamps():
    a1, a2, ok = solve_2d(1.0, 0.4, np.array([0.1, 0.2]))
    assert not ok and abs(abs(a2) - np.pi) < 1e-12
    _, end = fk2(1.0, 0.4, a1, a2)
    assert np.linalg.norm(end) == pytest.approx(0.6)
    assert end @ np.array([0.1, 0.2]) > 0


def test_solve_2d_straight_and_batched_shapes():
    a1, a2, ok = solve_2d(1.0, 1.0, np.array([0.0, 2.0]))
    assert ok and a2 == 0.0 and a1 == pytest.approx(np.pi / 2)
    rng = np.random.default_rng(0)
    t = rng.uniform(-1, 1, size=(4, 5, 2))
    bend = np.where(rng.uniform(size=(4, 5)) < 0.5, -1.0, 1.0)
    a1, a2, ok = solve_2d(1.0, 0.8, t, bend=bend)
    assert a1.shape == a2.shape == ok.shape == (4, 5)
    assert np.all(np.sign(a2[ok]) == bend[ok])
    _, end = fk2(1.0, 0.8, a1, a2)
    assert np.max(np.abs(end - t)[ok]) < 1e-12
    # same answer one at a time
    b1, b2, _ = solve_2d(1.0, 0.8, t[2, 3], bend=bend[2, 3])
    assert b1 == a1[2, 3] and b2 == a2[2, 3]


def test_solve_2d_does_not_modify_inputs_and_accepts_readonly():
    t = np.array([[0.3, 0.4], [2.0, 0.1]])
    t.setflags(write=False)
    keep = t.copy()
    solve_2d(1.0, 1.0, t)
    np.testing.assert_array_equal(t, keep)


@pytest.mark.parametrize(
    ("args", "exc", "words"),
    [
        ((1.0, 1.0, np.array([np.nan, 0.0])), NonFiniteTargetError, "NaN"),
        ((0.0, 1.0, np.array([1.0, 0.0])), BoneLengthError, "l1"),
        ((1.0, -2.0, np.array([1.0, 0.0])), BoneLengthError, "l2"),
        ((1.0, 1.0, np.array([1.0, 0.0, 0.0])), ShapeError, "shape"),
    ],
)
def test_solve_2d_errors(args, exc, words):
    with pytest.raises(exc, match=words) as info:
        solve_2d(*args)
    assert isinstance(info.value, IKError) and isinstance(info.value, ValueError)
    with pytest.raises(IKError, match="bend"):
        solve_2d(1.0, 1.0, np.array([1.0, 0.0]), bend=0.0)
    with pytest.raises(IKError, match="max_reach"):
        solve_2d(1.0, 1.0, np.array([1.0, 0.0]), max_reach=1.5)


vec3 = st.tuples(st.floats(-2, 2), st.floats(-2, 2), st.floats(-2, 2)).map(np.array)


@SETTINGS
@given(vec3, vec3, vec3, lengths, lengths, st.sampled_from([1.0, -1.0]), st.floats(0.05, 0.99))
def test_solve_3d_properties(root, direction, normal, l1, l2, bend, frac):
    if np.linalg.norm(direction) < 1e-3 or np.linalg.norm(normal) < 1e-3:
        return
    lo, hi = abs(l1 - l2), l1 + l2
    dist = lo + frac * (hi - lo)
    if dist < 1e-6:
        return
    target = root + dist * direction / np.linalg.norm(direction)
    mid, end, ok = solve_3d(root, target, l1, l2, normal, bend=bend, return_reached=True)
    scale = hi + np.linalg.norm(root)
    assert ok
    assert np.linalg.norm(end - target) <= 1e-12 * scale
    assert np.linalg.norm(mid - root) == pytest.approx(l1, rel=1e-9)
    assert np.linalg.norm(end - mid) == pytest.approx(l2, rel=1e-9)
    u = (target - root) / dist
    n = normal - (normal @ u) * u
    if np.linalg.norm(n) > 1e-6:
        n /= np.linalg.norm(n)
        assert abs((mid - root) @ n) < 1e-9 * scale  # bend plane is perpendicular to normal
        turn = np.cross(mid - root, end - mid) @ n
        if abs(turn) > 1e-9 * scale**2:
            assert np.sign(turn) == bend  # bend > 0: counter-clockwise about the normal


def test_solve_3d_batched_unreachable_and_two_value_return():
    root = np.zeros((3, 3))
    target = np.array([[3.0, 0, 0], [0.5, 0.5, 0], [0, 0, 0.1]])
    mid, end = solve_3d(root, target, 1.0, 1.0, np.array([0.0, 0.0, 1.0]))
    assert mid.shape == end.shape == (3, 3)
    np.testing.assert_allclose(end[0], [2.0, 0, 0])
    np.testing.assert_allclose(end[1], target[1], atol=1e-15)
    _, _, ok = solve_3d(root, target, 1.0, 1.0, [0.0, 0.0, 1.0], return_reached=True)
    assert ok.tolist() == [False, True, True]


def test_two_link_uniform_solver_2d_and_3d():
    for dim in (2, 3):
        chain = Chain.from_lengths([1.0, 0.7], dim=dim)
        target = np.array([0.9, 0.8, 0.3][:dim])
        res = two_link(chain, target)
        assert res.converged and res.reason == "converged" and res.iterations == 1
        np.testing.assert_allclose(res.positions[-1], target, atol=1e-12)
        np.testing.assert_allclose(chain.forward(res.angles), res.positions, atol=1e-12)
        far = two_link(chain, 10 * target)
        assert not far.converged and far.reason == "unreachable"
        assert np.linalg.norm(far.positions[-1]) == pytest.approx(1.7)
    with pytest.raises(ShapeError, match="2 bones"):
        two_link(Chain.from_lengths([1, 1, 1]), np.zeros(3))
