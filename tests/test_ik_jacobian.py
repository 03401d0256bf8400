"""Jacobian IK (transpose, pinv, DLS): reaching, monotone residual, limits,
orientation targets, trees, restarts, and the pure DLS kernel."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsim.ik import Chain, IKError, jacobian_ik
from quadsim.ik._rot import exp_so3
from quadsim.ik.jacobian import DEFAULT_RESTARTS, dls_step, restart_poses
from quadsim.ik.testing import hand_tree, random_chain, reachable_targets

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
seeds = st.integers(0, 2**32 - 1)


@SETTINGS
@given(seeds, st.integers(1, 6), st.sampled_from([2, 3]), st.sampled_from(["dls", "pinv"]))
def test_reaches_reachable_targets(seed, n, dim, method):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim)
    _, pos = reachable_targets(chain, rng, 1, scale=1.5)
    tol = 1e-4 * chain.reach
    res = jacobian_ik(chain, pos[0, -1], tol=tol, method=method, max_iter=500)
    assert res.converged, res.reason
    fk = chain.forward(res.angles)
    assert np.linalg.norm(fk[-1] - pos[0, -1]) <= tol
    h = np.array(res.history)
    assert np.all(np.diff(h) <= 1e-12)


@SETTINGS
@given(
    seeds, st.integers(2, 6), st.sampled_from([2, 3]), st.sampled_from(["dls", "pinv", "transpose"])
)
def test_residual_never_grows_and_limits_hold(seed, n, dim, method):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, constrained=True)
    target = rng.uniform(-1.2, 1.2, dim) * chain.reach
    res = jacobian_ik(chain, target, method=method, max_iter=40)
    start = np.linalg.norm(chain.rest_positions()[-1] - target)
    h = np.r_[start, res.history]
    assert np.all(np.diff(h) <= 1e-12 * chain.reach)
    assert chain.violation(res.angles) <= 1e-9


def test_transpose_converges_on_easy_targets():
    chain = Chain.from_lengths([1.0, 1.0, 1.0], dim=2)
    res = jacobian_ik(chain, np.array([1.5, 1.5]), method="transpose", tol=1e-4, max_iter=2000)
    assert res.converged


def test_orientation_target_seven_dof_arm():
    arm = Chain.from_lengths([0.3, 0.3, 0.1]).with_hinge(1, [0, 0, 1], (0.0, 2.6))
    assert arm.dof == 7
    rng = np.random.default_rng(9)
    q, pos = reachable_targets(arm, rng, 10, scale=1.0)
    for qk, pk in zip(q, pos, strict=True):
        r_goal = arm.frames(qk)[0][-1]
        res = jacobian_ik(arm, pk[-1], orientation=r_goal, tol=1e-6, max_iter=300)
        assert res.converged, res.reason
        r_got = arm.frames(res.angles)[0][-1]
        assert np.linalg.norm(r_got - r_goal) < 1e-4
        assert arm.violation(res.angles) <= 1e-9


def test_orientation_2d():
    chain = Chain.from_lengths([1.0, 1.0, 0.5], dim=2)
    q = np.array([0.3, 0.8, -0.4])
    pos = chain.forward(q)
    res = jacobian_ik(chain, pos[-1], orientation=float(q.sum()), tol=1e-8)
    assert res.converged
    np.testing.assert_allclose(res.angles.sum(), q.sum(), atol=1e-6)


def test_tree_several_effectors():
    tree = hand_tree()
    rng = np.random.default_rng(2)
    _, pos = reachable_targets(tree, rng, 3, scale=0.5)
    for p in pos:
        targets = {e: p[e] for e in tree.effectors}
        res = jacobian_ik(tree, targets=targets, tol=1e-4, max_iter=200)
        assert res.converged
        for e, t in targets.items():
            assert np.linalg.norm(tree.forward(res.angles)[e] - t) <= 1e-4


def test_dls_kernel():
    rng = np.random.default_rng(0)
    jac = rng.normal(size=(3, 7))
    err = rng.normal(size=3)
    # zero damping on a full-row-rank Jacobian = pseudo-inverse
    np.testing.assert_allclose(dls_step(jac, err, 0.0), np.linalg.pinv(jac) @ err, atol=1e-12)
    lam = 0.3
    closed = np.linalg.solve(jac.T @ jac + lam**2 * np.eye(7), jac.T @ err)
    np.testing.assert_allclose(dls_step(jac, err, lam), closed, atol=1e-12)


def test_fixed_damping_and_step_clamps():
    chain = Chain.from_lengths([1.0] * 4)
    res = jacobian_ik(
        chain,
        np.array([1.0, 2.0, 0.5]),
        damping=0.05,
        max_dq=0.1,
        max_step=0.1,
        tol=1e-6,
        max_iter=500,
    )
    assert res.converged


def test_validation():
    chain = Chain.from_lengths([1.0, 1.0])
    with pytest.raises(IKError, match="transpose, pinv, dls"):
        jacobian_ik(chain, np.ones(3), method="newton")
    with pytest.raises(IKError, match="NaN"):
        jacobian_ik(chain, np.array([np.nan, 0, 0]))
    with pytest.raises(IKError, match="orientation"):
        jacobian_ik(chain, np.ones(3), orientation=np.eye(2))
    with pytest.raises(IKError, match="damping"):
        jacobian_ik(chain, np.ones(3), damping="auto")
    q = np.zeros(chain.dof)
    jacobian_ik(chain, np.ones(3), init=q)
    assert np.all(q == 0)
    assert exp_so3(np.zeros(3)).shape == (3, 3)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("method", ["dls", "pinv", "transpose"])
def test_restarts_escape_a_stall(dim, method):
    # straight chain along +x, target behind the root: the Jacobian's x row is exactly
    # zero, so every method's step is zero and a single attempt stalls (no rounding)
    chain = Chain.from_lengths([1.0, 1.0], dim=dim)
    target = np.zeros(dim)
    target[0] = -0.5
    plain = jacobian_ik(chain, target, tol=1e-8, method=method, restarts=0)
    assert not plain.converged
    assert plain.reason == "stalled"
    assert plain.restarts == 0
    res = jacobian_ik(chain, target, tol=1e-8, method=method, max_iter=200)
    assert res.converged, res.reason
    assert res.reason == "converged"
    assert 1 <= res.restarts <= DEFAULT_RESTARTS
    assert np.linalg.norm(chain.forward(res.angles)[-1] - target) <= 1e-8
    assert res.iterations <= 200
    h = np.array(res.history)
    assert len(h) == res.iterations
    assert np.all(np.diff(h) <= 0.0)
    assert h[-1] < plain.history[-1]


def test_restarts_deterministic_and_keep_limits():
    arm = Chain.from_lengths([0.3, 0.3, 0.1]).with_hinge(1, [0, 0, 1], (0.0, 2.6))
    rng = np.random.default_rng(9)
    q, pos = reachable_targets(arm, rng, 10, scale=1.0)
    for qk, pk in zip(q, pos, strict=True):
        r_goal = arm.frames(qk)[0][-1]
        kw = dict(orientation=r_goal, tol=1e-6, max_iter=300)
        a = jacobian_ik(arm, pk[-1], **kw)
        b = jacobian_ik(arm, pk[-1], **kw)
        assert a.converged, a.reason
        assert np.array_equal(a.angles, b.angles)
        assert np.array_equal(a.positions, b.positions)
        assert a.history == b.history
        assert (a.iterations, a.restarts, a.reason, a.error) == (
            b.iterations,
            b.restarts,
            b.reason,
            b.error,
        )
        assert np.all(np.diff(a.history) <= 0.0)
        assert arm.violation(a.angles) <= 1e-9
    # the restart table: in the limits, and row k does not depend on the table size
    table = restart_poses(arm, 5)
    assert table.shape == (5, arm.dof)
    assert np.max(arm.violation(table)) <= 1e-9
    np.testing.assert_array_equal(table, restart_poses(arm, 12)[:5])


def test_no_restarts_for_unreachable_targets():
    chain = Chain.from_lengths([1.0, 1.0])
    res = jacobian_ik(chain, np.array([3.0, 0.5, 0.0]), max_iter=50)
    assert not res.converged
    assert res.restarts == 0


def test_restarts_validation():
    chain = Chain.from_lengths([1.0, 1.0])
    with pytest.raises(IKError, match="restarts must be >= 0"):
        jacobian_ik(chain, np.ones(3), restarts=-1)
    with pytest.raises(IKError, match="restarts must be an integer"):
        jacobian_ik(chain, np.ones(3), restarts=1.5)
    with pytest.raises(IKError, match="restarts must be an integer"):
        jacobian_ik(chain, np.ones(3), restarts=True)
