"""Jacobian IK: transpose, pseudo-inverse and damped least squares (DLS).

A pure kernel (:func:`dls_step`) under a small driver (:func:`jacobian_ik`). The Jacobian
is :meth:`ik.Tree.jacobian` (tangent coordinates, see :meth:`ik.Tree.integrate`). Each
iteration clamps the task-space error (``max_step`` [length]) and the joint step
(``max_dq`` [rad]), integrates, projects onto the joint limits and backtracks (halves
the step, or raises the damping for adaptive DLS) until the weighted residual does not
grow, so within one attempt the residual never increases from one iteration to the next.

**Restarts.** A local method can stall in a local minimum (typically against joint
limits). When an attempt stalls and every target is within its effector's path length
from the root (a necessary condition for reachability), the solve restarts from the next
pose of a fixed table of in-limit poses (:func:`restart_poses`: drawn from a generator
with a fixed seed, never the global random state, so a solve is deterministic), at most
``restarts`` times and within the common ``max_iter`` budget. The best attempt is
returned.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from ._rot import log_so3
from .chain import Tree, targets_for
from .errors import IKError, ShapeError
from .result import IKResult

__all__ = ["jacobian_ik", "dls_step", "restart_poses", "DEFAULT_RESTARTS"]

METHODS = ("transpose", "pinv", "dls")
DEFAULT_RESTARTS = 10  # restarts a stalled solve may make (as for FABRIK)
RESTART_SEED = 20240611  # the restart table is drawn from this seed: deterministic
RESTART_SCALE = 1.5  # restart poses: joint coordinates uniform in +-1.5 rad, clamped


def dls_step(jac: np.ndarray, err: np.ndarray, damping: float) -> np.ndarray:
    """Damped least-squares step ``J^T (J J^T + damping^2 I)^-1 err`` (pure)."""
    m = jac.shape[0]
    a = jac @ jac.T + (damping * damping) * np.eye(m)
    return jac.T @ np.linalg.solve(a, err)


def restart_poses(tree: Tree, n: int) -> np.ndarray:
    """The first ``n`` poses ``(n, dof)`` of the fixed restart table of ``tree``.

    Joint coordinates uniform in ``+-RESTART_SCALE`` [rad] from a generator seeded with
    ``RESTART_SEED`` (its own, not the global random state), projected onto the joint
    limits. Row ``k`` does not depend on ``n``, so restart ``k`` always starts from the
    same pose.
    """
    rng = np.random.Generator(np.random.PCG64(RESTART_SEED))
    return tree.clamp(rng.uniform(-RESTART_SCALE, RESTART_SCALE, (n, tree.dof)))


def _effector_reach(tree: Tree, effs: tuple[int, ...]) -> np.ndarray:
    """Root-to-effector path lengths [length] of the effectors ``effs``."""
    acc = np.zeros(tree.n_nodes)
    lens = tree.lengths
    par = tree.parents
    for v in range(1, tree.n_nodes):
        acc[v] = acc[par[v]] + lens[v - 1]
    return acc[list(effs)]


def _step(method: str, jac: np.ndarray, err: np.ndarray, damping: float) -> np.ndarray:
    if method == "transpose":
        g = jac.T @ err
        jg = jac @ g
        den = float(jg @ jg)
        alpha = float(err @ jg) / den if den > 0.0 else 0.0
        return alpha * g
    if method == "pinv":
        return np.linalg.pinv(jac, rcond=1e-10) @ err
    return dls_step(jac, err, damping)


def jacobian_ik(
    tree: Tree,
    target: np.ndarray | Mapping[Hashable, np.ndarray] | None = None,
    tol: float | None = None,
    max_iter: int = 200,
    *,
    targets: Mapping[Hashable, np.ndarray] | None = None,
    method: str = "dls",
    damping: float | str = "adaptive",
    orientation: np.ndarray | float | None = None,
    orientation_weight: float | None = None,
    max_step: float | None = None,
    max_dq: float = 0.5,
    eps: float | None = None,
    init: np.ndarray | None = None,
    restarts: int = DEFAULT_RESTARTS,
) -> IKResult:
    """Solve with a Jacobian method (see the module docstring for the algorithm).

    Args:
        tree: chain or tree (limits honoured by projection after each step).
        target: ``(dim,)`` [length, world] for a single effector, or ``{effector: point}``.
        tol: converged when every effector is within ``tol`` [length] (and the
            orientation error below ``tol / reach`` [rad]); default ``1e-5 * reach``.
        max_iter: iteration cap (all attempts together).
        method: ``"transpose"`` (step length of Buss & Kim), ``"pinv"`` or ``"dls"``.
        damping: DLS damping [length] or ``"adaptive"`` (Levenberg-Marquardt style:
            halved after a successful step, doubled after a rejected one; every attempt
            starts from ``0.1 * reach``).
        orientation: optional world orientation target of the (single) effector's bone
            frame: a 3x3 rotation matrix in 3-D, an angle [rad] in 2-D.
        orientation_weight: weight [length/rad] of the orientation error; default ``reach``.
        max_step: clamp of each effector's error vector [length]; default ``0.2 * reach``.
        max_dq: clamp of each joint-coordinate step [rad].
        eps: an attempt has "stalled" when an iteration improves the residual by less
            than ``eps``, or no step (after backtracking) keeps it from growing.
        init: initial ``q (dof,)``; default zeros (rest pose). Not modified.
        restarts: how many times a stalled attempt may restart from the next pose of the
            fixed restart table (:func:`restart_poses`); only when every target is within
            its effector's path length from the root. 0: a single attempt.

    Returns:
        IKResult for the best attempt (the first converged one, else the one of least
        weighted residual): ``angles = q``; ``iterations`` counts every iteration of
        every attempt; ``restarts`` the restarts made; ``reason`` is ``"converged"``, or
        why the last attempt stopped (``"stalled"`` or ``"max_iter"``). ``history``
        holds, after each iteration, the least weighted residual norm reached so far by
        any attempt: non-increasing, and without restarts exactly the residual of each
        iterate.

    Raises:
        IKError: unknown method or damping, both ``target`` and ``targets``, an
            orientation with several effectors, or ``restarts`` not an integer >= 0.
        ShapeError: targets or orientation of the wrong shape.
    """
    if method not in METHODS:
        raise IKError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    if not isinstance(tree, Tree):
        raise IKError(f"expected an ik.Chain or ik.Tree, got {type(tree).__name__}")
    if target is not None and targets is not None:
        raise IKError("give either target or targets, not both")
    if isinstance(restarts, bool) or not isinstance(restarts, (int, np.integer)):
        raise IKError(f"restarts must be an integer >= 0, got {restarts!r}")
    if restarts < 0:
        raise IKError(f"restarts must be >= 0, got {restarts}")
    effs, t = targets_for(tree, targets if targets is not None else target)
    dim = tree.dim
    if t.shape != (len(effs), dim):
        raise ShapeError(f"target must have shape ({dim},) per effector, got {t.shape}")
    adaptive = isinstance(damping, str)
    if adaptive and damping != "adaptive":
        raise IKError(f"damping must be a number or 'adaptive', got {damping!r}")
    reach = tree.reach
    lam0 = 0.1 * reach if adaptive else float(damping)
    tol = 1e-5 * reach if tol is None else float(tol)
    eps = 1e-14 * reach if eps is None else float(eps)
    max_step = 0.2 * reach if max_step is None else float(max_step)
    w_rot = reach if orientation_weight is None else float(orientation_weight)
    r_target = None
    if orientation is not None:
        if len(effs) != 1:
            raise IKError("an orientation target needs a single effector")
        r_target = np.array(orientation, dtype=float)
        want = () if dim == 2 else (3, 3)
        if r_target.shape != want or not np.all(np.isfinite(r_target)):
            raise ShapeError(f"orientation must be finite with shape {want}")
    q0 = np.zeros(tree.dof) if init is None else tree.clamp(init)

    def residual(qq: np.ndarray) -> tuple[np.ndarray, float, float]:
        f, p = tree.frames(qq)
        pos = p[list(effs), :dim]
        e = t - pos
        dist = float(np.max(np.linalg.norm(e, axis=-1)))
        parts = [e.reshape(-1)]
        rot_err = 0.0
        if r_target is not None:
            fe = f[effs[0]]
            if dim == 2:
                cur = np.arctan2(fe[1, 0], fe[0, 0])
                d = np.remainder(r_target - cur + np.pi, 2 * np.pi) - np.pi
                w = np.array([d])
            else:
                w = log_so3(r_target @ fe.T)
            rot_err = float(np.linalg.norm(w))
            parts.append(w_rot * w)
        full = np.concatenate(parts)
        return full, dist, rot_err

    def clamp_err(full: np.ndarray) -> np.ndarray:
        out = full.copy()
        npos = len(effs) * dim
        ep = out[:npos].reshape(len(effs), dim)
        nrm = np.linalg.norm(ep, axis=-1, keepdims=True)
        out[:npos] = (ep * np.minimum(1.0, max_step / np.maximum(nrm, 1e-300))).reshape(-1)
        return out

    def done(d: float, r: float) -> bool:
        return d <= tol and (r_target is None or r <= tol / reach)

    def attempt(
        q: np.ndarray, budget: int
    ) -> tuple[np.ndarray, float, float, float, int, str, list[float]]:
        """One solve from ``q`` of at most ``budget`` iterations: ``(q, dist, rot_err,
        merit, iterations, reason, residual per iteration)``; the residual never grows."""
        res, dist, rot_err = residual(q)
        merit = float(np.linalg.norm(res))
        lam = lam0
        hist: list[float] = []
        reason = "converged" if done(dist, rot_err) else "max_iter"
        it = 0
        while reason == "max_iter" and it < budget:
            it += 1
            jac = tree.jacobian(q, effs, orientation=r_target is not None)
            if r_target is not None:
                jac = jac.copy()
                jac[len(effs) * dim :] *= w_rot
            e = clamp_err(res)
            accepted = False
            scale = 1.0
            for _ in range(12):
                dq = _step(method, jac, e, lam) * scale
                big = np.max(np.abs(dq)) if dq.size else 0.0
                if big > max_dq:
                    dq = dq * (max_dq / big)
                q_new = tree.clamp(tree.integrate(q, dq))
                res_new, d_new, r_new = residual(q_new)
                m_new = float(np.linalg.norm(res_new))
                if m_new <= merit:
                    accepted = True
                    break
                if adaptive and method == "dls":
                    lam *= 2.0
                else:
                    scale *= 0.5
            if not accepted:
                hist.append(merit)
                reason = "stalled"
                break
            if adaptive:
                lam = max(lam * 0.5, 1e-6 * reach)
            improvement = merit - m_new
            q, res, dist, rot_err, merit = q_new, res_new, d_new, r_new, m_new
            hist.append(merit)
            if done(dist, rot_err):
                reason = "converged"
            elif improvement < eps:
                reason = "stalled"
        return q, dist, rot_err, merit, it, reason, hist

    # restarts only help when the targets may be reachable
    t_rel = t - tree.root[:dim]
    may_reach = bool(np.all(np.linalg.norm(t_rel, axis=-1) <= _effector_reach(tree, effs) + tol))
    table: np.ndarray | None = None
    history: list[float] = []
    iterations = 0
    n_rest = 0
    best: tuple[np.ndarray, float, float, float] | None = None
    best_key = (True, np.inf)  # (not converged, merit): the smaller the better
    q = q0
    while True:
        q, dist, rot_err, merit, it, reason, hist = attempt(q, max_iter - iterations)
        iterations += it
        low = history[-1] if history else np.inf
        for h in hist:
            low = min(low, h)
            history.append(low)
        key = (not done(dist, rot_err), merit)
        if best is None or key < best_key:
            best, best_key = (q, dist, rot_err, merit), key
        if reason != "stalled" or not may_reach or n_rest >= restarts or iterations >= max_iter:
            break
        if table is None:
            table = restart_poses(tree, min(restarts, max(max_iter - iterations, 1)))
        if n_rest >= len(table):
            break
        q = table[n_rest]
        n_rest += 1
    q, dist, rot_err, _ = best
    return IKResult(
        positions=tree.forward(q),
        angles=q,
        error=dist,
        iterations=iterations,
        converged=done(dist, rot_err),
        reason="converged" if done(dist, rot_err) else reason,
        history=tuple(history),
        restarts=n_rest,
    )
