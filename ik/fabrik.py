"""FABRIK (Aristidou & Lasenby 2011) on joint positions: chains, trees, constraints.

Every solve works on node positions (world frame, length units of the tree). One
*iteration* is a backward pass (effectors to root) and a forward pass (root to leaves);
before the first iteration one forward pass projects the starting pose onto the joint
constraints (not counted). On top of textbook FABRIK:

* **Constraints in both passes.** The forward pass projects every bone onto its joint's
  constraint in the parent bone frame (hinge plane and limits; elliptical cone; twist
  range). The backward pass, placing bone ``v`` behind its already placed children,
  turns ``v`` so that each constrained child is within its joint's limits relative to
  ``v`` (an estimate of ``v``'s frame: the last forward pass's frame, turned onto the
  new bone direction).
* **Twist selection.** A ball joint's twist about its bone does not move the bone but
  rotates the frames its children are constrained in (the plane of a child hinge, the
  quadrants of a child's elliptical cone). In the forward pass each ball joint keeps its
  frame from the last iteration (turned minimally onto the new bone direction), clips
  its twist to the twist range, and if a constrained child would then violate its
  limits, turns the twist to the candidate of least violation (ties: the smallest turn):
  the twists that put the child's direction into a hinge plane or onto a cone's axis
  planes, and the range ends. Angles are read from the solver's own frames, so the
  returned ``q`` honours every limit.
* **Sub-bases.** A node with several targeted branches goes to the centroid of their
  proposals, then is moved into the reach annulus ``[min, max]`` of every branch (max =
  path length to the effector, min = ``2 * longest bone - path length``).
* **Acceleration.** When the error falls geometrically with ratio ``rho`` the backward
  pass aims at a virtual target ``t + beta (t - e)``, ``beta = min(rho / (1 - rho), 3)``,
  kept within reach.
* **Straightening and restarts.** Each attempt's progress is checked every 4 iterations
  (every 2 for a chain whose target is beyond 0.8 of its reach); if its best error fell
  by less than 30 %, a chain target near full reach gets the chain laid on a circular
  arc through root and target (exact for free chains; at most twice), otherwise the pose
  restarts from the next pose of a fixed table of in-limit random poses (at most
  ``restarts`` times). A stall (effectors moved less than ``eps``) also restarts. Every
  iteration of every attempt counts in ``iterations``; the best pose seen is returned.

Unreachable chain targets (beyond full reach) take exactly one iteration: the straight
chain toward the target (projected onto the constraints).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from . import _fabrik_scalar as S
from ._fabrik_plan import plan_for
from ._validate import as_points
from .chain import Tree, targets_for
from .errors import IKError, ShapeError
from .result import IKResult

__all__ = ["fabrik", "fabrik_batch"]

DEFAULT_RESTARTS = 10


def _prepare(tree, target, targets, root_target, directions, init, batch):
    if not isinstance(tree, Tree):
        raise IKError(f"expected an ik.Chain or ik.Tree, got {type(tree).__name__}")
    if target is not None and targets is not None:
        raise IKError("give either target or targets, not both")
    tg = targets if targets is not None else target
    if tg is None:
        raise IKError("no target given")
    effs, t = targets_for(tree, tg)
    dim = tree.dim
    want = (len(effs), dim)
    if batch:
        if t.ndim != 3 or t.shape[1:] != want:
            raise ShapeError(
                f"batched targets must have shape (B, {dim}) per effector, got {t.shape}"
            )
    elif t.shape != want:
        got = t.shape[-1:] if len(effs) == 1 else t.shape
        raise ShapeError(f"target must have shape ({dim},) per effector, got {got}")
    t = t.reshape(-1, len(effs), dim)
    bsz = t.shape[0]
    t3 = np.zeros((bsz, len(effs), 3))
    t3[..., :dim] = t
    root3 = np.zeros((bsz, 3))
    if root_target is None:
        root3[:, :dim] = tree.root
    else:
        r = as_points(root_target, dim, "root_target")
        try:
            root3[:, :dim] = np.broadcast_to(r, (bsz, dim))
        except ValueError:
            raise ShapeError(f"root_target shape {r.shape} does not match the targets") from None
    if init is None:
        p0 = tree.rest_positions()
    else:
        p0 = as_points(init, dim, "init")
    if p0.shape[-2:] != (tree.n_nodes, dim):
        raise ShapeError(f"init must have shape (..., {tree.n_nodes}, {dim}), got {p0.shape}")
    init3 = np.zeros((bsz, tree.n_nodes, 3))
    init3[..., :dim] = np.broadcast_to(p0, (bsz, tree.n_nodes, dim))
    dirv = None
    dir_effs: tuple[int, ...] = ()
    if directions:
        dir_effs = tuple(tree.node_index(k) for k in directions)
        dirv = np.zeros((bsz, len(dir_effs), 3))
        for k, (key, dv) in enumerate(directions.items()):
            d = as_points(dv, dim, f"directions[{key!r}]")
            nd = np.linalg.norm(d, axis=-1, keepdims=True)
            if np.any(nd == 0):
                raise IKError(f"direction for {key!r} must be nonzero")
            dirv[:, k, :dim] = np.broadcast_to(d / nd, (bsz, dim))
        for e in dir_effs:
            if e not in effs:
                raise IKError(f"a direction is given for node {e} which has no target")
    return effs, t3, root3, init3, dirv, dir_effs


def _defaults(tree, tol, eps, max_iter, restarts):
    reach = tree.reach
    tol = 1e-5 * reach if tol is None else float(tol)
    eps = 1e-9 * reach if eps is None else float(eps)
    if max_iter < 1:
        raise IKError(f"max_iter must be >= 1, got {max_iter}")
    if restarts < 0:
        raise IKError(f"restarts must be >= 0, got {restarts}")
    return tol, eps, int(max_iter), int(restarts)


def _tuples(a: np.ndarray):
    return [tuple(x) for x in a.tolist()]


def solve_one(pl, t, init, root, dirv, tol, eps, max_iter, restarts, track):
    """Scalar solve of one pose; returns the final :class:`_fabrik_scalar.State`."""
    st = S.start(pl, init, root, t)
    if st.err > tol and pl.chain and not pl.dir_effs and S.math.dist(t[0], root) >= pl.reach:
        q, f = S.unreachable_chain(pl, root, t[0])
        st = S.State(q, f, S._max_err(pl, q, t))
        st.it = 1
        st.hist = [st.err]
        st.reason = "converged" if st.err <= tol else "unreachable"
        return st
    return S.run(pl, st, t, root, dirv, tol, eps, max_iter, restarts, track)


def fabrik(
    tree: Tree,
    target: np.ndarray | Mapping[Hashable, np.ndarray] | None = None,
    tol: float | None = None,
    max_iter: int = 100,
    *,
    targets: Mapping[Hashable, np.ndarray] | None = None,
    eps: float | None = None,
    root_target: np.ndarray | None = None,
    directions: Mapping[Hashable, np.ndarray] | None = None,
    init: np.ndarray | None = None,
    angles: bool = True,
    restarts: int = DEFAULT_RESTARTS,
) -> IKResult:
    """Solve one pose with FABRIK (see the module docstring for the algorithm).

    Args:
        tree: an :class:`ik.Chain` or :class:`ik.Tree` (its joint constraints are honoured).
        target: end-effector target ``(dim,)`` [length, world] for a chain, or a mapping
            ``{effector: point}``; same as ``targets=``.
        tol: stop when every targeted effector is within ``tol`` [length] of its target;
            default ``1e-5 * tree.reach``.
        max_iter: iteration cap (all attempts together).
        eps: "stalled" when no effector moved more than ``eps`` [length] in an iteration
            (and no restart is left); default ``1e-9 * tree.reach``.
        root_target: if given, the root moves there (else the root stays fixed).
        directions: ``{effector: direction}``: the last bone of that effector should point
            along ``direction`` (end-effector orientation; used in the backward pass).
        init: starting node positions ``(N, dim)``; default the rest pose. A previous
            solution makes a good start for a nearby target.
        angles: also return joint coordinates (read from the solver's frames).
        restarts: how many times a slow or stalled solve may restart from another pose
            (0: plain FABRIK with the other improvements).

    Returns:
        IKResult for the best pose seen (``error`` is its error, ``iterations`` all
        iterations run); an unreachable chain target (beyond full reach from the root)
        gives the straight chain toward it after exactly one iteration, reason
        ``"unreachable"``.
    """
    effs, t3, root3, init3, dirv, dir_effs = _prepare(
        tree, target, targets, root_target, directions, init, batch=False
    )
    tol, eps, max_iter, restarts = _defaults(tree, tol, eps, max_iter, restarts)
    pl = plan_for(tree, effs, dir_effs)
    st = solve_one(
        pl,
        _tuples(t3[0]),
        _tuples(init3[0]),
        tuple(root3[0].tolist()),
        None if dirv is None else _tuples(dirv[0]),
        tol,
        eps,
        max_iter,
        restarts,
        True,
    )
    positions = np.array(st.best_p)[:, : tree.dim]
    q = None
    if angles:
        f, p = st.best_f, st.best_p
        if f is None:  # free tree: frames of the final pose (minimal rotations)
            p = list(p)
            f = S.forward(pl, p, p[0], None, frames=True)
        q = np.array(S.angles(pl, f, p))
    return IKResult(
        positions=positions,
        angles=q,
        error=float(st.best_err),
        iterations=int(st.it),
        converged=st.reason == "converged",
        reason=st.reason,
        history=tuple(st.hist),
        restarts=int(st.nrest + st.narc),
    )


def fabrik_batch(
    tree: Tree,
    targets: np.ndarray | Mapping[Hashable, np.ndarray],
    tol: float | None = None,
    max_iter: int = 100,
    *,
    eps: float | None = None,
    root_target: np.ndarray | None = None,
    directions: Mapping[Hashable, np.ndarray] | None = None,
    init: np.ndarray | None = None,
    angles: bool = False,
    restarts: int = DEFAULT_RESTARTS,
) -> IKResult:
    """Solve ``B`` independent poses at once (vectorised over the batch).

    Same algorithm, stopping rules and results as :func:`fabrik` applied per pose; poses
    leave the working set as they finish, slow poses run their later restart attempts
    side by side (merged in order, so the results do not change), and the last few
    unfinished ones are completed one at a time.

    Args:
        targets: ``(B, dim)`` for a chain, or ``{effector: (B, dim)}``.
        root_target, directions: as in :func:`fabrik`, broadcast to ``(B, dim)``.
        init: ``(N, dim)`` or ``(B, N, dim)`` starting positions.
        angles: also return joint coordinates (``(B, dof)``).
        restarts: as in :func:`fabrik`.

    Returns:
        IKResult with a leading batch axis on every field (``history`` is empty).
    """
    effs, t3, root3, init3, dirv, dir_effs = _prepare(
        tree, targets, None, root_target, directions, init, batch=True
    )
    tol, eps, max_iter, restarts = _defaults(tree, tol, eps, max_iter, restarts)
    pl = plan_for(tree, effs, dir_effs)
    from ._fabrik_batch import solve_batch

    pos, frames, err, iters, reason, nrest = solve_batch(
        pl, t3, init3, root3, dirv, tol, eps, max_iter, restarts
    )
    positions = pos[..., : tree.dim]
    q = None
    if angles:
        q = _angles_batch(tree, pl, frames, pos)
    return IKResult(
        positions=positions,
        angles=q,
        error=err,
        iterations=iters,
        converged=reason == "converged",
        reason=reason,
        restarts=nrest,
    )


def _angles_batch(tree, pl, frames, pos3):
    """Joint coordinates ``(B, dof)`` from the solver's frames ``(N, 3, 3, B)`` (batch
    axis last, as the batched solver keeps them), or for a free tree (None) from the
    minimal-rotation frames of the poses ``pos3 (B, N, 3)``."""
    from ._fabrik_batch import frames_of
    from ._rot import log_so3

    if frames is None:
        frames = frames_of(pl, pos3)
    bsz = frames.shape[-1]
    q = np.zeros((bsz, tree.dof))
    # every joint's rotation relative to its parent frame at once
    rot = np.einsum("vjib,vjkb->vikb", frames[pl.par[1:]], frames[1:])
    hinge = np.array(pl.hinge[1:])
    qoff = np.array(pl.qoff[1:-1])
    if hinge.any():
        hv = np.nonzero(hinge)[0]
        r = np.array([pl.r[v + 1] for v in hv])
        ar = np.array([pl.ar[v + 1] for v in hv])
        lc = np.einsum("vijb,vj->vib", rot[hv], r)
        q[:, qoff[hv]] = np.arctan2(np.einsum("vib,vi->bv", lc, ar), np.einsum("vib,vi->bv", lc, r))
    if not hinge.all():
        bv = np.nonzero(~hinge)[0]
        cols = (qoff[bv][:, None] + np.arange(3)).reshape(-1)
        q[:, cols] = log_so3(rot[bv].transpose(3, 0, 1, 2)).reshape(bsz, -1)
    return q
