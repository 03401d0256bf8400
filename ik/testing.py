"""Random chains, trees and reachable targets, for tests and benchmarks (seeded)."""

from __future__ import annotations

import numpy as np

from .chain import Chain, Tree

__all__ = ["random_chain", "random_q", "hand_tree", "reachable_targets"]


def random_chain(
    rng: np.random.Generator,
    n_bones: int,
    dim: int = 3,
    constrained: bool = False,
    hinges: bool = True,
) -> Chain:
    """A chain of ``n_bones`` bones of random lengths in [0.3, 1.5]; with
    ``constrained`` each joint is randomly free, a cone (elliptical, random half-angles),
    a cone with twist limits, or (if ``hinges``) a limited hinge."""
    chain = Chain.from_lengths(rng.uniform(0.3, 1.5, n_bones), dim=dim)
    if dim == 2:
        if constrained:
            for j in range(1, n_bones):
                if rng.uniform() < 0.7:
                    lo, hi = -rng.uniform(0.2, 2.5), rng.uniform(0.2, 2.5)
                    chain = chain.with_limits(j, lo, hi)
        return chain
    for j in range(n_bones):
        if hinges and rng.uniform() < 0.3:
            ax = rng.normal(size=3)
            ax[0] = 0.0
            chain = chain.with_hinge(
                j, ax, (-rng.uniform(0.2, 2.5), rng.uniform(0.2, 2.5)) if constrained else None
            )
        elif constrained and j > 0 and rng.uniform() < 0.8:
            chain = chain.with_cone(j, rng.uniform(0.2, 1.5, 4))
            if rng.uniform() < 0.5:
                chain = chain.with_twist(j, -rng.uniform(0.0, 1.0), rng.uniform(0.0, 1.0))
    return chain


def random_q(tree: Tree, rng: np.random.Generator, scale: float = 1.0, n: int | None = None):
    """Random joint coordinates within the limits (``(dof,)`` or ``(n, dof)``)."""
    shape = (tree.dof,) if n is None else (n, tree.dof)
    return tree.clamp(rng.uniform(-scale, scale, size=shape))


def reachable_targets(tree: Tree, rng: np.random.Generator, n: int, scale: float = 1.0):
    """``(q, positions)`` of ``n`` random poses within the limits: their effector
    positions are reachable targets."""
    q = random_q(tree, rng, scale, n)
    return q, tree.forward(q)


def hand_tree(dim: int = 3) -> Tree:
    """A five-effector hand: wrist (root) -> palm -> five 4-bone fingers (21 bones)."""
    pts = [np.zeros(3), np.array([1.0, 0.0, 0.0])]
    parents = [-1, 0]
    names = ["wrist", "palm"]
    for f, (y, ln) in enumerate(
        zip((-0.6, -0.25, 0.05, 0.35, 0.6), (0.7, 1.0, 1.1, 1.0, 0.8), strict=True)
    ):
        base = len(pts)
        start = np.array([1.0 if f else 0.6, y, 0.0])
        pts.append(start)
        parents.append(1)
        names.append(f"f{f}_0")
        d = np.array([1.0, 0.3 * y, 0.0])
        d /= np.linalg.norm(d)
        for k in range(1, 4):
            pts.append(start + d * ln * k / 3 * (1.0 if f else 0.8))
            parents.append(base + k - 1)
            names.append(f"f{f}_{k}")
    p = np.array(pts)[:, :dim]
    return Tree.from_points(p, parents, names)
