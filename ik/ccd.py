"""Cyclic coordinate descent for chains of hinge and ball joints, with joint limits.

Each sweep visits the joints from the effector back to the root; each joint turns so
the end effector points at the target as seen from that joint (hinges: in their plane),
then the joint is projected onto its limits. A joint update that would increase the
distance to the target is skipped, so the error never grows from one sweep to the next.
"""

from __future__ import annotations

import numpy as np

from ._rot import axis_angle, log_so3
from ._validate import as_points
from .chain import Tree
from .errors import IKError, ShapeError
from .result import IKResult

__all__ = ["ccd"]


def _pack(chain: Tree, loc: list) -> np.ndarray:
    q = np.zeros(chain.dof)
    for v in range(1, chain.n_nodes):
        s = chain.q_slice(v - 1)
        q[s] = loc[v] if chain.joints[v].kind == "hinge" else log_so3(loc[v])
    return q


def ccd(
    chain: Tree,
    target: np.ndarray,
    tol: float | None = None,
    max_iter: int = 200,
    *,
    eps: float | None = None,
    init: np.ndarray | None = None,
) -> IKResult:
    """Solve a chain with cyclic coordinate descent.

    Args:
        chain: an :class:`ik.Chain` (joint limits honoured).
        target: end-effector target ``(dim,)`` [length, world].
        tol: converged when the effector is within ``tol`` [length]; default
            ``1e-5 * chain.reach``.
        max_iter: maximum number of sweeps.
        eps: "stalled" when a sweep reduces the error by less than ``eps`` [length];
            default ``1e-12 * chain.reach``.
        init: starting joint coordinates ``(dof,)``; default zeros (rest pose).

    Returns:
        IKResult with ``angles`` (the solved ``q``), ``history`` the error after each sweep
        (non-increasing).
    """
    if not isinstance(chain, Tree) or not chain.is_chain:
        raise IKError("ccd solves single chains (ik.Chain); use fabrik or jacobian_ik for trees")
    dim = chain.dim
    t = as_points(target, dim, "target")
    if t.shape != (dim,):
        raise ShapeError(f"target must have shape ({dim},), got {t.shape}")
    t3 = np.zeros(3)
    t3[:dim] = t
    reach = chain.reach
    tol = 1e-5 * reach if tol is None else float(tol)
    eps = 1e-12 * reach if eps is None else float(eps)
    q0 = np.zeros(chain.dof) if init is None else chain.clamp(init)
    f, p = chain.frames(q0)
    n = chain.n_nodes
    joints = chain.joints
    # local rotations (ball) / angles (hinge)
    loc: list = [None]
    for v in range(1, n):
        s = chain.q_slice(v - 1)
        if joints[v].kind == "hinge":
            loc.append(float(q0[s][0]))
        else:
            loc.append(np.swapaxes(f[v - 1], 0, 1) @ f[v])
    err = float(np.linalg.norm(p[-1] - t3))
    history: list[float] = []
    reason = "max_iter"
    it = 0
    if err <= tol:
        reason = "converged"
    else:
        while it < max_iter:
            it += 1
            before = err
            for v in range(n - 1, 0, -1):
                pa = v - 1
                pj = p[pa]
                a = p[-1] - pj
                b = t3 - pj
                j = joints[v]
                if j.kind == "hinge":
                    w = f[pa] @ np.asarray(j.axis)
                    ap = a - (a @ w) * w
                    bp = b - (b @ w) * w
                    ang = float(np.arctan2(w @ np.cross(ap, bp), ap @ bp))
                    th = loc[v] + ang
                    if j.limits is not None:
                        th = min(max(th, j.limits[0]), j.limits[1])
                    delta = th - loc[v]
                    if delta == 0.0:
                        continue
                    rot_w = axis_angle(w, delta)
                    new_loc = th
                else:
                    c = np.cross(a, b)
                    sn = float(np.linalg.norm(c))
                    if sn <= 1e-300:
                        continue
                    rm = axis_angle(c / sn, np.arctan2(sn, a @ b))
                    r_new = np.swapaxes(f[pa], 0, 1) @ rm @ f[v]
                    r_new = chain._clamp_rot(v, r_new)
                    rot_w = f[pa] @ r_new @ np.swapaxes(f[v], 0, 1)
                    new_loc = r_new
                e_new = pj + rot_w @ (p[-1] - pj)
                d_new = float(np.linalg.norm(e_new - t3))
                if d_new > err:
                    continue  # safeguard: a clamped step may not help; skip it
                p[v:] = pj + (p[v:] - pj) @ rot_w.T
                f[v:] = rot_w @ f[v:]
                loc[v] = new_loc
                err = float(np.linalg.norm(p[-1] - t3))
            # re-synchronise frames with the joint coordinates (no drift between sweeps)
            f, p = chain.frames(_pack(chain, loc))
            for v in range(1, n):
                if joints[v].kind != "hinge":
                    loc[v] = np.swapaxes(f[v - 1], 0, 1) @ f[v]
            err = float(np.linalg.norm(p[-1] - t3))
            history.append(err)
            if err <= tol:
                reason = "converged"
                break
            if before - err < eps:
                reason = "stalled"
                break
    q = _pack(chain, loc)
    pos = chain.forward(q)
    err = float(np.linalg.norm(pos[-1] - t))
    return IKResult(
        positions=pos,
        angles=q,
        error=err,
        iterations=it,
        converged=err <= tol,
        reason=reason,
        history=tuple(history),
    )
