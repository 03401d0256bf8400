"""FABRIK (Aristidou & Lasenby 2011) on joint positions: chains, trees, constraints.

Every solve works on node positions (world frame, length units of the tree). One
iteration is a backward pass (effectors to root: each node is put at bone length from
its child's new position; a sub-base with several targeted branches goes to the
centroid of their proposals) and a forward pass (root to leaves along every branch,
projecting each bone onto its joint's constraints in the parent bone frame).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from ._fabrik_scalar import ScalarPlan, solve_chain
from ._validate import as_points
from .chain import Tree, targets_for
from .errors import IKError, ShapeError
from .result import IKResult

__all__ = ["fabrik", "fabrik_batch"]

REASONS = np.array(["converged", "unreachable", "stalled", "max_iter", "running"])
_CONV, _UNREACH, _STALL, _MAXIT, _RUN = range(5)


def _norm(v: np.ndarray) -> np.ndarray:
    n = np.sqrt(np.einsum("...i,...i->...", v, v))[..., None]
    return v / np.where(n > 1e-300, n, 1.0)


class _Plan:
    """Static per-tree data for the passes (which nodes move in the backward pass)."""

    def __init__(self, tree: Tree, effs: tuple[int, ...], dirs: tuple[int, ...]):
        n = tree.n_nodes
        par = tree._parents
        active = np.zeros(n, dtype=bool)
        for e in effs:
            v = e
            while v > 0 and not active[v]:
                active[v] = True
                v = par[v]
        self.active = active
        self.cnt = np.zeros(n)
        for v in range(1, n):
            if active[v]:
                self.cnt[par[v]] += 1.0
        self.eff_slot = {e: k for k, e in enumerate(effs)}
        self.dirs = {e: k for k, e in enumerate(dirs)}
        self.chain = tree.is_chain and effs == (n - 1,) and not dirs
        self.constrained = tree.constrained


def _backward(tree: Tree, plan: _Plan, p: np.ndarray, t: np.ndarray, dirv, q: np.ndarray):
    lens = tree._len
    par = tree._parents
    n = tree.n_nodes
    if plan.chain:
        q[:, n - 1] = t[:, 0]
        for v in range(n - 1, 0, -1):
            q[:, v - 1] = q[:, v] + lens[v] * _norm(p[:, v - 1] - q[:, v])
        return
    acc = np.zeros_like(p)
    for v in range(n - 1, 0, -1):
        if not plan.active[v]:
            continue
        k = plan.eff_slot.get(v)
        x = t[:, k] if k is not None else acc[:, v] / plan.cnt[v]
        q[:, v] = x
        kd = plan.dirs.get(v)
        if kd is not None:
            acc[:, par[v]] += x - lens[v] * dirv[:, kd]
        else:
            acc[:, par[v]] += x + lens[v] * _norm(p[:, par[v]] - x)


def _forward(tree: Tree, plan: _Plan, q: np.ndarray, root: np.ndarray) -> None:
    lens = tree._len
    par = tree._parents
    n = tree.n_nodes
    q[:, 0] = root
    if not plan.constrained:
        for v in range(1, n):
            pa = par[v]
            q[:, v] = q[:, pa] + lens[v] * _norm(q[:, v] - q[:, pa])
        return
    b = q.shape[0]
    f = np.empty((b, n, 3, 3))
    f[:, 0] = np.eye(3)
    for v in range(1, n):
        pa = par[v]
        d = _norm(q[:, v] - q[:, pa])
        fp = f[:, pa]
        loc = np.einsum("bji,bj->bi", fp, d)
        c = tree._hinge_child(v)
        rel = np.einsum("bji,bj->bi", fp, q[:, c] - q[:, pa]) if c else None
        lnew, rot, _ = tree._place(v, loc, True, want_q=False, child_rel=rel)
        f[:, v] = fp @ rot
        q[:, v] = q[:, pa] + lens[v] * np.einsum("bij,bj->bi", fp, lnew)


def _solve(
    tree: Tree,
    effs: tuple[int, ...],
    t: np.ndarray,
    init: np.ndarray,
    root: np.ndarray,
    dirv: np.ndarray | None,
    dir_effs: tuple[int, ...],
    tol: float,
    eps: float,
    max_iter: int,
    track: bool,
):
    """Batched core. ``t (B,E,3)``, ``init (B,N,3)``, ``root (B,3)``. Returns
    positions, iterations, errors, reason codes, history (batch element 0)."""
    plan = _Plan(tree, effs, dir_effs)
    bsz, n = init.shape[:2]
    eff = np.array(effs)
    p = init.copy()
    iters = np.zeros(bsz, dtype=int)
    code = np.full(bsz, _RUN)
    err = np.max(np.linalg.norm(p[:, eff] - t, axis=-1), axis=-1)
    history: list[float] = []
    moved = np.any(p[:, 0] != root, axis=-1)  # a root with its own target must move
    code[(err <= tol) & ~moved] = _CONV
    if plan.chain:
        dist = np.linalg.norm(t[:, 0] - root, axis=-1)
        far = (dist >= tree.reach) & (code == _RUN)
        if np.any(far):
            u = _norm(t[far, 0] - root[far])
            cum = np.concatenate([[0.0], np.cumsum(tree._len[1:])])
            q = root[far, None, :] + cum[None, :, None] * u[:, None, :]
            if plan.constrained:
                _forward(tree, plan, q, root[far])
            p[far] = q
            iters[far] = 1
            err[far] = np.linalg.norm(q[:, -1] - t[far, 0], axis=-1)
            # a target at exactly full reach is reached by the straight chain
            code[far] = np.where(err[far] <= tol, _CONV, _UNREACH)
    idx = np.nonzero(code == _RUN)[0]
    it = 0
    while idx.size and it < max_iter:
        it += 1
        pa = p[idx]
        ta = t[idx]
        q = pa.copy()
        _backward(tree, plan, pa, ta, None if dirv is None else dirv[idx], q)
        _forward(tree, plan, q, root[idx])
        e = np.max(np.linalg.norm(q[:, eff] - ta, axis=-1), axis=-1)
        moved = np.max(np.linalg.norm(q[:, eff] - pa[:, eff], axis=-1), axis=-1)
        p[idx] = q
        err[idx] = e
        iters[idx] = it
        if track and idx[0] == 0:
            history.append(float(e[0]))
        done = np.where(e <= tol, _CONV, np.where(moved < eps, _STALL, _RUN))
        code[idx] = done
        idx = idx[done == _RUN]
    code[idx] = _MAXIT
    return p, iters, err, code, history


def _solve_free_chain(tree: Tree, t: np.ndarray, init: np.ndarray, root: np.ndarray,
                      tol: float, eps: float, max_iter: int):
    """Batched FABRIK for an unconstrained chain, laid out ``(node, axis, batch)`` so that
    every per-bone operation runs on contiguous rows; the working set is compacted as
    poses finish. Same arithmetic and stopping rules as :func:`_solve`."""
    dim = tree.dim
    lens = tree._len
    n = tree.n_nodes
    bsz = t.shape[0]
    tt = np.ascontiguousarray(t[:, 0, :dim].T)  # (dim, B)
    rt = np.ascontiguousarray(root[:, :dim].T)
    p = np.ascontiguousarray(init[:, :, :dim].transpose(1, 2, 0))  # (N, dim, B)
    iters = np.zeros(bsz, dtype=int)
    code = np.full(bsz, _RUN)
    diff = p[n - 1] - tt
    err = np.sqrt(np.einsum("ib,ib->b", diff, diff))
    moved0 = np.any(p[0] != rt, axis=0)
    code[(err <= tol) & ~moved0] = _CONV
    d = tt - rt
    dist = np.sqrt(np.einsum("ib,ib->b", d, d))
    far = (dist >= tree.reach) & (code == _RUN)
    if np.any(far):
        u = d[:, far] / np.where(dist[far] > 1e-300, dist[far], 1.0)
        acc = 0.0
        p[0][:, far] = rt[:, far]
        for v in range(1, n):
            acc += lens[v]
            p[v][:, far] = rt[:, far] + acc * u
        e = p[n - 1][:, far] - tt[:, far]
        err[far] = np.sqrt(np.einsum("ib,ib->b", e, e))
        iters[far] = 1
        code[far] = np.where(err[far] <= tol, _CONV, _UNREACH)
    work = np.nonzero(code == _RUN)[0]
    pw = p[:, :, work]
    tw = tt[:, work]
    rw = rt[:, work]
    live = np.ones(work.size, dtype=bool)
    it = 0
    while work.size and it < max_iter:
        it += 1
        q = np.empty_like(pw)
        q[n - 1] = tw
        for v in range(n - 1, 0, -1):
            dv = pw[v - 1] - q[v]
            nn = np.sqrt(np.einsum("ib,ib->b", dv, dv))
            q[v - 1] = q[v] + dv * (lens[v] / np.maximum(nn, 1e-300))
        q[0] = rw
        for v in range(1, n):
            dv = q[v] - q[v - 1]
            nn = np.sqrt(np.einsum("ib,ib->b", dv, dv))
            q[v] = q[v - 1] + dv * (lens[v] / np.maximum(nn, 1e-300))
        e = q[n - 1] - tw
        ew = np.sqrt(np.einsum("ib,ib->b", e, e))
        m = q[n - 1] - pw[n - 1]
        mv = np.sqrt(np.einsum("ib,ib->b", m, m))
        done = np.where(ew <= tol, _CONV, np.where(mv < eps, _STALL, _MAXIT if it == max_iter
                                                   else _RUN))
        # poses that finished earlier stay frozen; the others take this iteration
        pw = np.where(live, q, pw) if not live.all() else q
        fin = live & (done != _RUN)
        if fin.any():
            g = work[fin]
            err[g] = ew[fin]
            iters[g] = it
            code[g] = done[fin]
            live = live & ~fin
        nlive = int(np.count_nonzero(live))
        if nlive == 0:
            break
        if nlive < 0.5 * live.size:
            p[:, :, work[~live]] = pw[:, :, ~live]
            work, pw, tw, rw = work[live], pw[:, :, live], tw[:, live], rw[:, live]
            live = np.ones(work.size, dtype=bool)
    if work.size:
        p[:, :, work] = pw
    pos = np.zeros((bsz, n, 3))
    pos[:, :, :dim] = p.transpose(2, 0, 1)
    return pos, iters, err, code


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
            raise ShapeError(f"batched targets must have shape (B, {dim}) per effector, "
                             f"got {t.shape}")
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


def _solve_scalar(tree, t, init, init3, root, tol, eps, max_iter, angles) -> IKResult:
    plan = tree.__dict__.get("_scalar_plan")
    if plan is None:
        plan = tree.__dict__["_scalar_plan"] = ScalarPlan(tree)
    start = [tuple(row) for row in init3.tolist()]
    pos, q, iters, err, reason, hist = solve_chain(
        plan, tuple(t.tolist()), start, tuple(root.tolist()), tol, eps, max_iter, angles
    )
    positions = np.array(pos)[:, : tree.dim]
    if angles and q is None:
        q_arr = np.zeros(tree.dof) if init is None else tree.angles_from_positions(positions)
    else:
        q_arr = None if q is None else np.array(q)
    return IKResult(
        positions=positions,
        angles=q_arr,
        error=float(err),
        iterations=int(iters),
        converged=reason == "converged",
        reason=reason,
        history=tuple(hist),
    )


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
) -> IKResult:
    """Solve one pose with FABRIK.

    Args:
        tree: an :class:`ik.Chain` or :class:`ik.Tree` (its joint constraints are honoured).
        target: end-effector target ``(dim,)`` [length, world] for a chain, or a mapping
            ``{effector: point}``; same as ``targets=``.
        tol: stop when every targeted effector is within ``tol`` [length] of its target;
            default ``1e-5 * tree.reach``.
        max_iter: iteration cap.
        eps: stop ("stalled") when no effector moved more than ``eps`` [length] in an
            iteration; default ``1e-9 * tree.reach``.
        root_target: if given, the root moves there (else the root stays fixed).
        directions: ``{effector: direction}``: the last bone of that effector should point
            along ``direction`` (end-effector orientation; used in the backward pass).
        init: starting node positions ``(N, dim)``; default the rest pose.
        angles: also recover joint coordinates from the solved positions.

    Returns:
        IKResult; an unreachable chain target (beyond full reach from the root) gives the
        straight chain toward it after exactly one iteration, reason ``"unreachable"``.
    """
    effs, t3, root3, init3, dirv, dir_effs = _prepare(
        tree, target, targets, root_target, directions, init, batch=False
    )
    reach = tree.reach
    tol = 1e-5 * reach if tol is None else float(tol)
    eps = 1e-9 * reach if eps is None else float(eps)
    if max_iter < 1:
        raise IKError(f"max_iter must be >= 1, got {max_iter}")
    if tree.is_chain and effs == (tree.n_nodes - 1,) and dirv is None:
        return _solve_scalar(tree, t3[0, 0], init, init3[0], root3[0], tol, eps, max_iter,
                             angles)
    p, iters, err, code, hist = _solve(
        tree, effs, t3, init3, root3, dirv, dir_effs, tol, eps, max_iter, track=True
    )
    pos = p[0, :, : tree.dim]
    return IKResult(
        positions=pos,
        angles=tree.angles_from_positions(pos) if angles else None,
        error=float(err[0]),
        iterations=int(iters[0]),
        converged=bool(code[0] == _CONV),
        reason=str(REASONS[code[0]]),
        history=tuple(hist),
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
) -> IKResult:
    """Solve ``B`` independent poses at once (vectorised over the batch).

    Same algorithm and stopping rules as :func:`fabrik`, applied per pose (a pose stops
    iterating once it has converged, stalled or been found unreachable).

    Args:
        targets: ``(B, dim)`` for a chain, or ``{effector: (B, dim)}``.
        root_target, directions: as in :func:`fabrik`, broadcast to ``(B, dim)``.
        init: ``(N, dim)`` or ``(B, N, dim)`` starting positions.
        angles: also recover joint coordinates (``(B, dof)``).

    Returns:
        IKResult with a leading batch axis on every field (``history`` is empty).
    """
    effs, t3, root3, init3, dirv, dir_effs = _prepare(
        tree, targets, None, root_target, directions, init, batch=True
    )
    reach = tree.reach
    tol = 1e-5 * reach if tol is None else float(tol)
    eps = 1e-9 * reach if eps is None else float(eps)
    if tree.is_chain and effs == (tree.n_nodes - 1,) and dirv is None and not (
        tree.constrained
    ):
        p, iters, err, code = _solve_free_chain(tree, t3, init3, root3, tol, eps, max_iter)
    else:
        p, iters, err, code, _ = _solve(
            tree, effs, t3, init3, root3, dirv, dir_effs, tol, eps, max_iter, track=False
        )
    pos = p[..., : tree.dim]
    return IKResult(
        positions=pos,
        angles=tree.angles_from_positions(pos) if angles else None,
        error=err,
        iterations=iters,
        converged=code == _CONV,
        reason=REASONS[code],
    )
