"""CCD: reaches reachable targets, error never grows between sweeps, limits hold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsim.ik import Chain, IKError, ccd
from quadsim.ik.errors import NonFiniteTargetError, ShapeError
from quadsim.ik.testing import hand_tree, random_chain, reachable_targets

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
seeds = st.integers(0, 2**32 - 1)


@SETTINGS
@given(seeds, st.integers(1, 6), st.sampled_from([2, 3]))
def test_reaches_reachable_targets(seed, n, dim):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, hinges=False)
    _, pos = reachable_targets(chain, rng, 1, scale=1.5)
    target = pos[0, -1]
    dist = np.linalg.norm(target - chain.root)
    if n > 1 and dist > 0.97 * chain.reach:  # CCD crawls near full extension
        target = chain.root + (0.97 * chain.reach / dist) * (target - chain.root)
    tol = 1e-4 * chain.reach
    res = ccd(chain, target, tol=tol, max_iter=2000)
    assert res.converged, res.reason
    fk = chain.forward(res.angles)
    np.testing.assert_allclose(fk, res.positions, atol=1e-12 * chain.reach)
    assert np.linalg.norm(fk[-1] - target) <= tol


@SETTINGS
@given(seeds, st.integers(1, 6), st.sampled_from([2, 3]))
def test_error_never_grows_and_limits_hold(seed, n, dim):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, constrained=True)
    _, pos = reachable_targets(chain, rng, 1, scale=1.5)
    for target in (pos[0, -1], rng.uniform(-1.2, 1.2, dim) * chain.reach):
        res = ccd(chain, target, max_iter=60)
        h = np.array(res.history)
        start = np.linalg.norm(chain.rest_positions()[-1] - target)
        assert np.all(np.diff(np.r_[start, h]) <= 1e-12 * chain.reach)
        assert chain.violation(res.angles) <= 1e-9
        lens = np.linalg.norm(np.diff(res.positions, axis=0), axis=1)
        np.testing.assert_allclose(lens, chain.lengths, rtol=1e-12)


def test_limited_hinge_chain_2d_success_rate():
    rng = np.random.default_rng(4)
    ok = 0
    for _ in range(30):
        chain = random_chain(rng, 5, 2, constrained=True)
        _, pos = reachable_targets(chain, rng, 1, scale=1.0)
        ok += ccd(chain, pos[0, -1], tol=1e-4 * chain.reach, max_iter=500).converged
    assert ok >= 24


def test_init_and_inputs_not_modified():
    chain = Chain.from_lengths([1.0, 1.0, 1.0])
    q0 = np.full(chain.dof, 0.1)
    t = np.array([1.0, 1.5, 0.2])
    keep_q, keep_t = q0.copy(), t.copy()
    res = ccd(chain, t, init=q0, tol=1e-8)
    assert res.converged
    np.testing.assert_array_equal(q0, keep_q)
    np.testing.assert_array_equal(t, keep_t)


def test_validation():
    chain = Chain.from_lengths([1.0, 1.0])
    with pytest.raises(NonFiniteTargetError):
        ccd(chain, np.array([np.inf, 0, 0]))
    with pytest.raises(ShapeError):
        ccd(chain, np.zeros(2))
    with pytest.raises(IKError, match="chains"):
        ccd(hand_tree(), np.zeros(3))
