"""Chain/Tree model: forward kinematics, Jacobians vs finite differences, angle
recovery, constraint projection, builders and validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsim.ik import Chain, Tree
from quadsim.ik._rot import exp_so3, log_so3
from quadsim.ik.errors import BoneLengthError, ConstraintError, IKError, ShapeError
from quadsim.ik.testing import hand_tree, random_chain, random_q

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
seeds = st.integers(0, 2**32 - 1)


def test_from_lengths_rest_pose_along_x():
    c = Chain.from_lengths([1.0, 2.0, 0.5], root=[0.0, 1.0, 0.0])
    np.testing.assert_allclose(c.rest_positions(), [[0, 1, 0], [1, 1, 0], [3, 1, 0], [3.5, 1, 0]])
    assert c.dof == 9 and c.reach == 3.5 and c.effectors == (3,)
    c2 = Chain.from_lengths([1.0, 1.0], dim=2)
    assert c2.dof == 2
    np.testing.assert_allclose(
        c2.forward([np.pi / 2, -np.pi / 2]), [[0, 0], [0, 1], [1, 1]], atol=1e-15
    )


@SETTINGS
@given(seeds, st.integers(1, 7), st.sampled_from([2, 3]), st.booleans())
def test_jacobian_matches_finite_differences(seed, n, dim, orient):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, constrained=False)
    q = random_q(chain, rng, 1.5)
    jac = chain.jacobian(q, orientation=orient)
    h = 1e-6
    cols = []
    for k in range(chain.dof):
        dq = np.zeros(chain.dof)
        dq[k] = h
        fp, pp = chain.frames(chain.integrate(q, dq))
        fm, pm = chain.frames(chain.integrate(q, -dq))
        col = [(pp[-1, :dim] - pm[-1, :dim]) / (2 * h)]
        if orient:
            w = log_so3(fp[-1] @ fm[-1].T) / (2 * h)
            col.append(w[2:] if dim == 2 else w)
        cols.append(np.concatenate(col))
    num = np.stack(cols, axis=1)
    np.testing.assert_allclose(jac, num, atol=1e-6 * (1 + chain.reach))


def test_tree_jacobian_matches_finite_differences():
    tree = hand_tree()
    rng = np.random.default_rng(3)
    q = random_q(tree, rng, 0.5)
    jac = tree.jacobian(q, effectors=["f1_3", "f4_3"])
    idx = [tree.node_index("f1_3"), tree.node_index("f4_3")]
    h = 1e-6
    num = np.zeros_like(jac)
    for k in range(tree.dof):
        dq = np.zeros(tree.dof)
        dq[k] = h
        d = tree.forward(tree.integrate(q, dq))[idx] - tree.forward(tree.integrate(q, -dq))[idx]
        num[:, k] = d.reshape(-1) / (2 * h)
    np.testing.assert_allclose(jac, num, atol=1e-6)


@SETTINGS
@given(seeds, st.integers(1, 7), st.sampled_from([2, 3]))
def test_angles_from_positions_round_trip(seed, n, dim):
    """Ball-joint (and 2-D hinge) chains: positions -> angles -> positions is exact."""
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, constrained=False, hinges=False)
    pos = chain.forward(random_q(chain, rng, 2.0))
    q = chain.angles_from_positions(pos)
    np.testing.assert_allclose(chain.forward(q), pos, atol=1e-12 * (1 + chain.reach))


@SETTINGS
@given(seeds, st.integers(1, 7), st.sampled_from([2, 3]))
def test_clamp_satisfies_limits_and_is_idempotent(seed, n, dim):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, constrained=True)
    q = rng.uniform(-3, 3, chain.dof)
    qc = chain.clamp(q)
    assert chain.violation(qc) <= 1e-9
    np.testing.assert_allclose(chain.forward(chain.clamp(qc)), chain.forward(qc), atol=1e-9)
    if chain.violation(q) == 0.0:
        np.testing.assert_allclose(chain.forward(qc), chain.forward(q), atol=1e-9)


def test_elliptical_cone_bound_per_quadrant():
    c = Chain.from_lengths([1.0, 1.0]).with_cone(1, [0.2, 0.4, 0.6, 0.8])
    for axis, half in (([0, 0, 1], 0.2), ([0, -1, 0], 0.4), ([0, 0, -1], 0.6), ([0, 1, 0], 0.8)):
        # rotating about +z by +a swings the bone toward +y (e1), about -y toward +z (e2)
        inside = np.r_[0, 0, 0, np.array(axis) * (half - 1e-3)]
        outside = np.r_[0, 0, 0, np.array(axis) * (half + 1e-2)]
        assert c.violation(inside) == 0.0
        assert c.violation(outside) == pytest.approx(1e-2, rel=1e-6)


def test_twist_limit_decomposition():
    c = Chain.from_lengths([1.0, 1.0]).with_twist(1, -0.1, 0.2)
    assert c.violation(np.r_[0, 0, 0, 0.15, 0, 0]) == 0.0
    assert c.violation(np.r_[0, 0, 0, 0.3, 0, 0]) == pytest.approx(0.1)
    assert c.violation(np.r_[0, 0, 0, -0.3, 0, 0]) == pytest.approx(0.2)


def test_builders_return_new_objects():
    c = Chain.from_lengths([1.0, 1.0, 1.0])
    h = c.with_hinge(1, [0, 0, 1], (-1, 1))
    assert c.joints[2].kind == "ball" and h.joints[2].kind == "hinge"
    assert h.dof == 7 and c.dof == 9
    r = c.with_root([1, 2, 3])
    np.testing.assert_array_equal(c.root, 0.0)
    np.testing.assert_array_equal(r.rest_positions()[0], [1, 2, 3])


@pytest.mark.parametrize(
    ("make", "exc", "words"),
    [
        (lambda: Chain.from_lengths([1.0, 0.0]), BoneLengthError, "positive"),
        (lambda: Chain.from_lengths([1.0, np.nan]), BoneLengthError, "finite"),
        (lambda: Chain.from_lengths([1.0], dim=4), ShapeError, "dim"),
        (
            lambda: Chain.from_lengths([1.0, 1.0]).with_hinge(1, [1, 0, 0]),
            ConstraintError,
            "perpendicular",
        ),
        (
            lambda: Chain.from_lengths([1.0, 1.0]).with_cone(1, [0.1, -1, 1, 1]),
            ConstraintError,
            "half-angles",
        ),
        (lambda: Chain.from_lengths([1.0, 1.0]).with_cone(5, 0.5), ConstraintError, "valid"),
        (
            lambda: Chain.from_lengths([1.0, 1.0]).with_twist(1, 0.5, -0.5),
            ConstraintError,
            "lo <= hi",
        ),
        (lambda: Chain.from_lengths([1.0, 1.0], dim=2).with_cone(1, 0.5), ConstraintError, "2-D"),
        (
            lambda: Tree([-1, 0, 0], np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0.0]])),
            BoneLengthError,
            "zero-length",
        ),
        (lambda: Tree([-1, 1], np.ones((2, 3))), ShapeError, "parents"),
        (lambda: Chain.from_lengths([1.0]).forward(np.zeros(4)), ShapeError, "q must"),
    ],
)
def test_validation_errors(make, exc, words):
    with pytest.raises(exc, match=words) as info:
        make()
    assert isinstance(info.value, IKError) and isinstance(info.value, ValueError)


def test_so3_helpers_round_trip_near_pi():
    rng = np.random.default_rng(0)
    rv = rng.normal(size=(500, 3))
    rv *= (np.pi - rng.uniform(0, 1e-6, (500, 1))) / np.linalg.norm(rv, axis=1, keepdims=True)
    r = exp_so3(rv)
    np.testing.assert_allclose(exp_so3(log_so3(r)), r, atol=1e-9)


def test_log_so3_near_pi_among_others():
    """Rotations near pi mixed with others, any batch shape: the near-pi branch (taken
    only for those) still inverts exp_so3."""
    rng = np.random.default_rng(1)
    rv = rng.normal(size=(40, 7, 3))
    rv /= np.linalg.norm(rv, axis=-1, keepdims=True)
    rv *= np.where(rng.uniform(size=(40, 7, 1)) < 0.3, np.pi - 1e-7, rng.uniform(0, 3, (40, 7, 1)))
    r = exp_so3(rv)
    np.testing.assert_allclose(exp_so3(log_so3(r)), r, atol=1e-9)
    np.testing.assert_allclose(exp_so3(log_so3(r[3, 2])), r[3, 2], atol=1e-9)
