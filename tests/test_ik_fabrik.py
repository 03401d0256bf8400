"""FABRIK: reaching, bone lengths, unreachable targets, stopping rules, moving root,
trees, constraints, orientation, angle recovery, batching, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsim.ik import Chain, IKError, Tree, fabrik, fabrik_batch
from quadsim.ik._fabrik_plan import plan_for
from quadsim.ik.errors import NonFiniteTargetError, ShapeError
from quadsim.ik.testing import hand_tree, random_chain, reachable_targets

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
seeds = st.integers(0, 2**32 - 1)


def bone_lengths(tree: Tree, pos: np.ndarray) -> np.ndarray:
    return np.linalg.norm(pos[1:] - pos[tree.parents[1:]], axis=-1)


@SETTINGS
@given(seeds, st.integers(1, 8), st.sampled_from([2, 3]))
def test_reaches_reachable_targets_and_keeps_lengths(seed, n, dim):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, hinges=False)
    _, pos = reachable_targets(chain, rng, 1, scale=2.0)
    target = pos[0, -1]
    if n > 1 and np.linalg.norm(target - chain.root) > 0.98 * chain.reach:
        target = chain.root + 0.98 * chain.reach * (target - chain.root) / np.linalg.norm(
            target - chain.root
        )
    tol = 1e-6 * chain.reach
    res = fabrik(chain, target, tol=tol, max_iter=3000)
    assert res.converged, res
    assert res.reason == "converged"
    # forward kinematics of the recovered angles lands on the target
    fk = chain.forward(res.angles)
    assert np.linalg.norm(fk[-1] - target) <= tol * (1 + 1e-6)
    np.testing.assert_allclose(fk, res.positions, atol=1e-9 * chain.reach)
    np.testing.assert_allclose(bone_lengths(chain, res.positions), chain.lengths, rtol=1e-9)
    np.testing.assert_array_equal(res.positions[0], chain.root)


@SETTINGS
@given(seeds, st.integers(1, 8), st.sampled_from([2, 3]), st.floats(1.0001, 5.0), st.booleans())
def test_unreachable_target_straight_in_one_iteration(seed, n, dim, factor, constrained):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, constrained=constrained, hinges=False)
    d = rng.normal(size=dim)
    target = chain.root + factor * chain.reach * d / np.linalg.norm(d)
    res = fabrik(chain, target)
    assert res.iterations == 1 and res.reason == "unreachable" and not res.converged
    np.testing.assert_allclose(bone_lengths(chain, res.positions), chain.lengths, rtol=1e-9)
    assert chain.position_violation(res.positions) <= 1e-9
    if not constrained:  # the straight chain toward the target
        u = (target - chain.root) / np.linalg.norm(target - chain.root)
        np.testing.assert_allclose(
            res.positions[-1], chain.root + chain.reach * u, atol=1e-9 * chain.reach
        )
        assert res.error == pytest.approx((factor - 1) * chain.reach, rel=1e-9)


@SETTINGS
@given(seeds, st.integers(2, 8), st.sampled_from([2, 3]))
def test_constraints_never_violated(seed, n, dim):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, n, dim, constrained=True)
    _, pos = reachable_targets(chain, rng, 1, scale=2.0)
    for target in (pos[0, -1], rng.uniform(-1, 1, dim) * chain.reach):
        res = fabrik(chain, target, max_iter=50)
        assert chain.violation(res.angles) <= 1e-9
        np.testing.assert_allclose(bone_lengths(chain, res.positions), chain.lengths, rtol=1e-9)
        np.testing.assert_allclose(
            chain.forward(res.angles), res.positions, atol=1e-9 * chain.reach
        )


def test_constrained_chains_mostly_reach_reachable_targets():
    rng = np.random.default_rng(7)
    ok = 0
    for _ in range(60):
        chain = random_chain(rng, 6, 3, constrained=True, hinges=False)
        _, pos = reachable_targets(chain, rng, 1, scale=1.0)
        ok += fabrik(chain, pos[0, -1], tol=1e-4 * chain.reach, max_iter=300).converged
    assert ok >= 50


def test_hinge_chain_stays_in_plane_and_arm_with_elbow_converges():
    chain = (
        Chain.from_lengths([1.0, 1.0, 0.3]).with_hinge(1, [0, 0, 1], (0.0, 2.5)).with_cone(2, 0.8)
    )
    rng = np.random.default_rng(2)
    _, pos = reachable_targets(chain, rng, 40, scale=1.2)
    conv = 0
    for p in pos:
        res = fabrik(chain, p[-1], tol=1e-4 * chain.reach, max_iter=200)
        conv += res.converged
        assert chain.violation(res.angles) <= 1e-9
    assert conv >= 36


def test_stopping_reasons():
    chain = Chain.from_lengths([1.0] * 6)
    target = np.array([2.0, 2.5, 1.0])
    capped = fabrik(chain, target, tol=1e-14, max_iter=3)
    assert capped.reason == "max_iter" and capped.iterations == 3 and not capped.converged
    assert len(capped.history) == 3
    stalled = fabrik(chain, target, tol=0.0, eps=1e-3, max_iter=10_000)
    assert stalled.reason == "stalled" and stalled.iterations < 10_000
    done = fabrik(chain, target, tol=1e-8)
    assert done.reason == "converged" and done.error <= 1e-8
    assert done.iterations == len(done.history)
    # already there: zero iterations
    at_rest = fabrik(chain, chain.rest_positions()[-1])
    assert at_rest.iterations == 0 and at_rest.converged


def test_error_decreases_over_iterations_for_free_chains():
    rng = np.random.default_rng(11)
    for _ in range(20):
        chain = random_chain(rng, 8, 3, hinges=False)
        _, pos = reachable_targets(chain, rng, 1, 1.5)
        h = np.array(fabrik(chain, pos[0, -1], tol=1e-8 * chain.reach).history)
        assert h[-1] < h[0] or len(h) == 1


def test_moving_root():
    chain = Chain.from_lengths([1.0, 1.0, 1.0])
    root_target = np.array([0.5, -0.2, 0.1])
    target = np.array([1.5, 1.0, 0.5])
    res = fabrik(chain, target, root_target=root_target, tol=1e-9)
    assert res.converged
    np.testing.assert_array_equal(res.positions[0], root_target)
    np.testing.assert_allclose(res.positions[-1], target, atol=1e-9)
    # unreachable measured from the moved root
    far = fabrik(chain, root_target + [4.0, 0, 0], root_target=root_target)
    assert far.reason == "unreachable" and far.iterations == 1


def test_tree_five_effectors_reaches_targets_and_keeps_lengths():
    tree = hand_tree()
    rng = np.random.default_rng(5)
    _, pos = reachable_targets(tree, rng, 25, scale=0.6)
    conv = 0
    for p in pos:
        targets = {f"f{k}_3": p[tree.node_index(f"f{k}_3")] for k in range(5)}
        res = fabrik(tree, targets=targets, tol=1e-4 * tree.reach, max_iter=300)
        conv += res.converged
        np.testing.assert_allclose(bone_lengths(tree, res.positions), tree.lengths, rtol=1e-9)
        np.testing.assert_allclose(tree.forward(res.angles), res.positions, atol=1e-9)
        if res.converged:
            for name, t in targets.items():
                assert np.linalg.norm(res.positions[tree.node_index(name)] - t) <= 1e-4 * 2.4
    assert conv >= 23


def test_tree_subbase_is_centroid_moved_into_branch_reach():
    """One iteration on a Y-shaped tree matches the hand-computed sub-base rule: the
    centroid of the branch proposals, moved (three sweeps) into each branch's reach
    annulus -- here a sphere of radius sqrt(2) about each target (one-bone branches)."""
    pts = np.array([[0, 0, 0], [1, 0, 0], [2, 1, 0], [2, -1, 0.0]])
    tree = Tree.from_points(pts, [-1, 0, 1, 1])
    t2, t3 = np.array([1.5, 1.5, 0.5]), np.array([2.2, -0.5, -0.3])
    res = fabrik(tree, targets={2: t2, 3: t3}, max_iter=1, tol=0.0)
    ln = np.sqrt(2.0)
    prop2 = t2 + ln * (pts[1] - t2) / np.linalg.norm(pts[1] - t2)
    prop3 = t3 + ln * (pts[1] - t3) / np.linalg.norm(pts[1] - t3)
    sub = (prop2 + prop3) / 2
    for _ in range(3):
        for t in (t2, t3):
            sub = t + ln * (sub - t) / np.linalg.norm(sub - t)
    assert abs(np.linalg.norm(sub - t3) - ln) < 1e-12  # both nearly at bone length
    assert abs(np.linalg.norm(sub - t2) - ln) < 1e-3
    p1 = pts[0] + (sub - pts[0]) / np.linalg.norm(sub - pts[0])
    np.testing.assert_allclose(res.positions[1], p1, atol=1e-12)
    p2 = p1 + ln * (t2 - p1) / np.linalg.norm(t2 - p1)
    np.testing.assert_allclose(res.positions[2], p2, atol=1e-12)


def test_untargeted_branch_follows_rigidly():
    tree = hand_tree()
    t = tree.rest_positions()[tree.node_index("f2_3")] + [-0.6, 0.2, 0.3]
    res = fabrik(tree, targets={"f2_3": t}, tol=1e-6)
    assert res.converged
    np.testing.assert_allclose(bone_lengths(tree, res.positions), tree.lengths, rtol=1e-9)


def test_end_effector_direction():
    chain = Chain.from_lengths([1.0, 1.0, 1.0, 0.5])
    rng = np.random.default_rng(1)
    _, pos = reachable_targets(chain, rng, 20, scale=0.8)
    for p in pos:
        d = p[-1] - p[-2]
        res = fabrik(chain, p[-1], directions={4: d}, tol=1e-6, max_iter=500)
        assert res.converged
        last = res.positions[-1] - res.positions[-2]
        cos = last @ d / (np.linalg.norm(last) * np.linalg.norm(d))
        assert cos > 1 - 1e-4


def _numpy_only(tree: Tree, effs=None, dirs=()):
    """Make fabrik_batch run every pose through numpy (no scalar tail) for this tree."""
    plan_for(tree, tuple(effs or tree.effectors), dirs).scalar_tail = 0


@SETTINGS
@given(seeds, st.sampled_from([2, 3]), st.booleans())
def test_batch_matches_single_solves(seed, dim, constrained):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, 5, dim, constrained=constrained)
    _numpy_only(chain)
    _, pos = reachable_targets(chain, rng, 6, scale=1.5)
    near = chain.root + 0.99 * (pos[0, -1] - chain.root) * chain.reach / np.linalg.norm(
        pos[0, -1] - chain.root
    )  # near full reach: the straightening (arc) path
    targets = np.concatenate([pos[:, -1], [near, 3 * chain.reach * np.eye(dim)[0]]])
    batch = fabrik_batch(chain, targets, max_iter=40, angles=True)
    assert batch.positions.shape == (8, chain.n_nodes, dim)
    for k, t in enumerate(targets):
        one = fabrik(chain, t, max_iter=40)
        np.testing.assert_allclose(batch.positions[k], one.positions, atol=1e-9)
        np.testing.assert_allclose(
            chain.forward(batch.angles[k]), batch.positions[k], atol=1e-9 * chain.reach
        )
        assert batch.iterations[k] == one.iterations
        assert batch.reason[k] == one.reason
        assert batch.converged[k] == one.converged
        assert batch.restarts[k] == one.restarts
    assert batch.reason[-1] == "unreachable" and batch.iterations[-1] == 1
    assert np.all(chain.violation(batch.angles) <= 1e-9)


@pytest.mark.parametrize("max_iter", [30, 60])
def test_batch_running_restarts_ahead_matches_single(monkeypatch, max_iter):
    """The 7-DOF arm near its base restarts up to 9 times. Run every later restart
    attempt ahead as extra rows (a few at a time, so more are started as attempts end);
    merged in order, and re-run where max_iter cuts one short, the batch still equals
    the scalar solver pose by pose."""
    import quadsim.ik._fabrik_batch as batch

    chain = (
        Chain.from_lengths([0.32, 0.30, 0.08])
        .with_cone(0, 1.4)
        .with_hinge(1, [0, 0, 1], (0.0, 2.6))
        .with_cone(2, 1.0)
        .with_twist(2, -1.0, 1.0)
    )
    rng = np.random.default_rng(5)
    q = chain.clamp(rng.uniform(-1.0, 1.0, (3000, chain.dof)) * rng.uniform(0, np.pi, (3000, 1)))
    tips = chain.forward(q)[:, -1]
    tips = tips[np.linalg.norm(tips, axis=1) < 0.3 * chain.reach]
    tol = 1e-4 * chain.reach
    _numpy_only(chain)
    monkeypatch.setattr(batch, "AHEAD_ROWS", 10**6)
    monkeypatch.setattr(batch, "AHEAD_DEPTH", 3)
    res = fabrik_batch(chain, tips, tol=tol, max_iter=max_iter, angles=True)
    restarts = []
    for k, t in enumerate(tips):
        one = fabrik(chain, t, tol=tol, max_iter=max_iter)
        np.testing.assert_allclose(res.positions[k], one.positions, atol=1e-9)
        assert res.iterations[k] == one.iterations and res.reason[k] == one.reason
        assert res.restarts[k] == one.restarts
        restarts.append(one.restarts)
    assert max(restarts) >= 5 and "max_iter" in set(res.reason)
    assert np.all(chain.violation(res.angles) <= 1e-9)


def test_batch_matches_single_on_constrained_tree():
    """A hand whose fingers have hinges and cones: numpy batch == scalar, pose by pose."""
    tree = hand_tree()
    for f in range(5):
        tree = tree.with_cone(f"f{f}_1", 0.9).with_hinge(f"f{f}_2", [0, 0, 1], (-1.6, 0.2))
    rng = np.random.default_rng(4)
    _, pos = reachable_targets(tree, rng, 12, scale=0.8)
    names = [f"f{k}_3" for k in range(5)]
    idx = [tree.node_index(n) for n in names]
    _numpy_only(tree, idx)
    batch = fabrik_batch(
        tree,
        {n: pos[:, i] for n, i in zip(names, idx, strict=True)},
        tol=1e-4 * tree.reach,
        angles=True,
    )
    conv = 0
    for k in range(len(pos)):
        one = fabrik(
            tree,
            targets={n: pos[k, i] for n, i in zip(names, idx, strict=True)},
            tol=1e-4 * tree.reach,
        )
        np.testing.assert_allclose(batch.positions[k], one.positions, atol=1e-9)
        assert batch.iterations[k] == one.iterations and batch.reason[k] == one.reason
        assert tree.violation(one.angles) <= 1e-9
        np.testing.assert_allclose(bone_lengths(tree, one.positions), tree.lengths, rtol=1e-9)
        np.testing.assert_allclose(tree.forward(one.angles), one.positions, atol=1e-9)
        conv += one.converged
    assert conv >= 11


def test_near_full_reach_is_straightened_quickly():
    """Free chains with targets within 1e-3 of full reach: textbook FABRIK crawls there
    (76 % within 100 iterations before); the arc step lands them in a few iterations."""
    chain = Chain.from_lengths([1.0] * 10, dim=2)
    rng = np.random.default_rng(3)
    ang = rng.uniform(-np.pi, np.pi, 40)
    frac = 1.0 - rng.uniform(1e-6, 1e-3, 40)
    targets = 10.0 * frac[:, None] * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    tol = 1e-4 * chain.reach
    arcs = 0
    for t in targets:
        res = fabrik(chain, t, tol=tol)
        assert res.converged and res.iterations <= 20
        arcs += res.restarts
        np.testing.assert_allclose(bone_lengths(chain, res.positions), chain.lengths, rtol=1e-9)
    assert arcs >= 10


def test_benchmark_like_cone_chain_interior_targets():
    """10 bones with elliptical cones on 9 joints: interior targets (0.3..0.85 of the
    reach, made by forward kinematics of in-limit angles) converge, limits hold."""
    chain = Chain.from_lengths([1.0] * 10)
    for j in range(1, 10):
        chain = chain.with_cone(j, (0.5, 0.7, 0.6, 0.8))
    rng = np.random.default_rng(0)
    q = chain.clamp(rng.uniform(-1.0, 1.0, (400, chain.dof)) * rng.uniform(0, np.pi, (400, 1)))
    tips = chain.forward(q)[:, -1]
    d = np.linalg.norm(tips, axis=1) / chain.reach
    tips = tips[(d > 0.3) & (d < 0.85)][:60]
    res = fabrik_batch(chain, tips, tol=1e-4 * chain.reach, angles=True)
    assert res.converged.mean() >= 0.98 and res.iterations.mean() <= 10
    assert np.all(chain.violation(res.angles) <= 1e-9)
    err = np.linalg.norm(chain.forward(res.angles)[:, -1] - tips, axis=-1)
    assert np.all(err[res.converged] <= 1e-4 * chain.reach * (1 + 1e-9))


def test_deterministic_and_restart_count_reported():
    chain = (
        Chain.from_lengths([0.32, 0.30, 0.08])
        .with_cone(0, 1.4)
        .with_hinge(1, [0, 0, 1], (0.0, 2.6))
        .with_cone(2, 1.0)
        .with_twist(2, -1.0, 1.0)
    )
    rng = np.random.default_rng(9)
    _, pos = reachable_targets(chain, rng, 30, scale=3.0)
    runs = [[fabrik(chain, p[-1], tol=1e-4 * chain.reach) for p in pos] for _ in range(2)]
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a.positions, b.positions)
        np.testing.assert_array_equal(a.angles, b.angles)
        assert a.iterations == b.iterations and a.restarts == b.restarts
    assert any(r.restarts > 0 for r in runs[0])  # some of these need a restart
    assert all(chain.violation(r.angles) <= 1e-9 for r in runs[0])
    with pytest.raises(IKError, match="restarts"):
        fabrik(chain, pos[0, -1], restarts=-1)


def test_inputs_not_modified():
    chain = Chain.from_lengths([1.0, 1.0, 1.0])
    target = np.array([1.0, 1.0, 0.5])
    init = chain.rest_positions()
    keep_t, keep_i = target.copy(), init.copy()
    fabrik(chain, target, init=init)
    fabrik_batch(chain, target[None], init=init)
    np.testing.assert_array_equal(target, keep_t)
    np.testing.assert_array_equal(init, keep_i)


def test_validation_errors():
    chain = Chain.from_lengths([1.0, 1.0, 1.0])
    with pytest.raises(NonFiniteTargetError, match="NaN"):
        fabrik(chain, np.array([np.nan, 0, 0]))
    with pytest.raises(ShapeError, match="shape"):
        fabrik(chain, np.array([1.0, 0.0]))
    with pytest.raises(ShapeError, match="unknown node"):
        fabrik(hand_tree(), targets={"thumb": np.zeros(3)})
    with pytest.raises(ShapeError, match="init"):
        fabrik(chain, np.ones(3), init=np.zeros((3, 3)))
    with pytest.raises(IKError, match="no target"):
        fabrik(chain)
    with pytest.raises(ShapeError, match="batched"):
        fabrik_batch(chain, np.ones(3))
