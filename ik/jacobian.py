"""Jacobian IK: transpose, pseudo-inverse and damped least squares (DLS).

A pure kernel (:func:`dls_step`) under a small driver (:func:`jacobian_ik`). The Jacobian
is :meth:`ik.Tree.jacobian` (tangent coordinates, see :meth:`ik.Tree.integrate`). Each
iteration clamps the task-space error (``max_step`` [length]) and the joint step
(``max_dq`` [rad]), integrates, projects onto the joint limits and backtracks (halves
the step, or raises the damping for adaptive DLS) until the weighted residual does not
grow, so the residual never increases from one iteration to the next.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from ._rot import log_so3
from .chain import Tree, targets_for
from .errors import IKError, ShapeError
from .result import IKResult

__all__ = ["jacobian_ik", "dls_step"]

METHODS = ("transpose", "pinv", "dls")


def dls_step(jac: np.ndarray, err: np.ndarray, damping: float) -> np.ndarray:
    """Damped least-squares step ``J^T (J J^T + damping^2 I)^-1 err`` (pure)."""
    m = jac.shape[0]
    a = jac @ jac.T + (damping * damping) * np.eye(m)
    return jac.T @ np.linalg.solve(a, err)


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
) -> IKResult:
    """Solve with a Jacobian method.

    Args:
        tree: chain or tree (limits honoured by projection after each step).
        target: ``(dim,)`` [length, world] for a single effector, or ``{effector: point}``.
        tol: converged when every effector is within ``tol`` [length] (and the
            orientation error below ``tol / reach`` [rad]); default ``1e-5 * reach``.
        max_iter: iteration cap.
        method: ``"transpose"`` (step length of Buss & Kim), ``"pinv"`` or ``"dls"``.
        damping: DLS damping [length] or ``"adaptive"`` (Levenberg-Marquardt style:
            halved after a successful step, doubled after a rejected one).
        orientation: optional world orientation target of the (single) effector's bone
            frame: a 3x3 rotation matrix in 3-D, an angle [rad] in 2-D.
        orientation_weight: weight [length/rad] of the orientation error; default ``reach``.
        max_step: clamp of each effector's error vector [length]; default ``0.2 * reach``.
        max_dq: clamp of each joint-coordinate step [rad].
        eps: "stalled" when an iteration improves the residual by less than ``eps``.
        init: initial ``q (dof,)``; default zeros (rest pose).

    Returns:
        IKResult with ``angles = q``; ``history`` the weighted residual norm per iteration
        (non-increasing).
    """
    if method not in METHODS:
        raise IKError(f"unknown method {method!r}; valid: {', '.join(METHODS)}")
    if not isinstance(tree, Tree):
        raise IKError(f"expected an ik.Chain or ik.Tree, got {type(tree).__name__}")
    if target is not None and targets is not None:
        raise IKError("give either target or targets, not both")
    effs, t = targets_for(tree, targets if targets is not None else target)
    dim = tree.dim
    if t.shape != (len(effs), dim):
        raise ShapeError(f"target must have shape ({dim},) per effector, got {t.shape}")
    adaptive = isinstance(damping, str)
    if adaptive and damping != "adaptive":
        raise IKError(f"damping must be a number or 'adaptive', got {damping!r}")
    reach = tree.reach
    lam = 0.1 * reach if adaptive else float(damping)
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
    q = np.zeros(tree.dof) if init is None else tree.clamp(init)

    def residual(qq: np.ndarray):
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

    res, dist, rot_err = residual(q)
    merit = float(np.linalg.norm(res))
    history: list[float] = []
    reason = "max_iter"
    it = 0

    def done(d: float, r: float) -> bool:
        return d <= tol and (r_target is None or r <= tol / reach)

    if done(dist, rot_err):
        reason = "converged"
    while reason == "max_iter" and it < max_iter:
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
            history.append(merit)
            reason = "stalled"
            break
        if adaptive:
            lam = max(lam * 0.5, 1e-6 * reach)
        improvement = merit - m_new
        q, res, dist, rot_err, merit = q_new, res_new, d_new, r_new, m_new
        history.append(merit)
        if done(dist, rot_err):
            reason = "converged"
        elif improvement < eps:
            reason = "stalled"
    return IKResult(
        positions=tree.forward(q),
        angles=q,
        error=dist,
        iterations=it,
        converged=done(dist, rot_err),
        reason=reason,
        history=tuple(history),
    )
