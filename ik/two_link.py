"""Analytic two-link IK (law of cosines), in 2-D and in 3-D, batched.

Frames: 2-D targets are relative to the first joint, in the plane of the chain; angles
are in radians, ``atan2`` convention (counter-clockwise from +x). 3-D inputs are in any
common (e.g. world) frame; lengths in any consistent unit.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_points, bone_length
from .errors import IKError, ShapeError
from .result import IKResult

__all__ = [
    "PlanarTwoLink",
    "solve_2d",
    "solve_2d_unchecked",
    "solve_3d",
    "two_link",
]

_EPS = 8.0 * np.finfo(float).eps


def _check_reach(l1: float, l2: float, max_reach: float) -> tuple[float, float]:
    mr = float(max_reach)
    if not np.isfinite(mr) or mr <= 0.0 or mr > 1.0:
        raise IKError(f"max_reach must be a fraction in (0, 1], got {max_reach!r}")
    rmax = mr * (l1 + l2)
    rmin = abs(l1 - l2)
    if rmax < rmin:
        raise IKError(
            f"max_reach={mr} gives a maximum reach {rmax} below the minimum reach "
            f"|l1 - l2| = {rmin}"
        )
    return rmin, rmax


def _bend_sign(bend: object) -> np.ndarray:
    b = np.asarray(bend, dtype=float)
    if not np.all(np.isfinite(b)) or np.any(b == 0.0):
        raise IKError(
            f"bend must be a nonzero finite number (its sign picks the branch), got {bend!r}"
        )
    return np.where(b < 0.0, -1.0, 1.0)


def _planar(l1: float, l2: float, d: np.ndarray, sgn: np.ndarray, rmin: float, rmax: float):
    """Joint angles for a target at distance ``d`` on the +x axis. Returns (a1, theta2, dc)."""
    dc = np.asarray(d).clip(rmin, rmax)
    a1, theta2 = _clamped_angles(l1, l2, l1 + l2, dc, sgn, rmin)
    return a1, theta2, dc


def _clamped_angles(l1, l2, full, dc, sgn, rmin):
    """(a1, theta2) for a target at the clamped distance ``dc``; ``full`` = l1 + l2."""
    # tan^2(theta2 / 2) = ((L - d)(L + d)) / ((d - m)(d + m)): accurate at both ends.
    num = np.sqrt(np.maximum((full - dc) * (full + dc), 0.0))
    den = np.sqrt(np.maximum((dc - rmin) * (dc + rmin), 0.0))
    theta2 = sgn * (2.0 * np.arctan2(num, den))
    a1 = -np.arctan2(l2 * np.sin(theta2), l1 + l2 * np.cos(theta2))
    return a1, theta2


def solve_2d(
    l1: float,
    l2: float,
    target: np.ndarray,
    bend: float = 1.0,
    max_reach: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Planar two-link IK by the law of cosines, for any batch of targets.

    Args:
        l1, l2: bone lengths [length], positive.
        target: end-effector target(s) relative to the first joint, shape ``(..., 2)``.
        bend: branch selector; ``theta2`` has the sign of ``bend`` (broadcastable).
        max_reach: fraction of ``l1 + l2`` the chain may extend to, in ``(0, 1]``.

    Returns:
        ``(theta1, theta2, reached)``, each of shape ``target.shape[:-1]``:
        ``theta1`` [rad] angle of bone 1 from +x, in ``[-pi, pi)``; ``theta2`` [rad] angle
        of bone 2 relative to bone 1 (0 when straight, sign of ``bend``); ``reached``
        False where the target lies beyond ``max_reach * (l1 + l2)`` or inside
        ``|l1 - l2|``: then the pose is the clamped one pointing at the target.

    Raises:
        IKError: on non-positive lengths, NaN targets, a zero bend or a bad shape.
    """
    l1 = bone_length(l1, "l1")
    l2 = bone_length(l2, "l2")
    _check_reach(l1, l2, max_reach)
    t = as_points(target, 2, "target")
    return solve_2d_unchecked(l1, l2, t, _bend_sign(bend), max_reach)


def solve_2d_unchecked(
    l1: float | np.ndarray,
    l2: float | np.ndarray,
    target: np.ndarray,
    bend_sign: np.ndarray | float,
    max_reach: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`solve_2d` without the input checks, for a caller that validated its inputs once
    (a controller calling it thousands of times a second). `bend_sign` must be +-1; the
    lengths may be arrays that broadcast against the targets' batch shape."""
    chain = PlanarTwoLink(l1, l2, max_reach)
    x = target[..., 0]
    y = target[..., 1]
    d = np.hypot(x, y)
    slack = _EPS * chain.full
    reached = (d <= chain.rmax + slack) & (d >= chain.rmin - slack)
    theta1, theta2 = chain.angles(x, y, bend_sign)
    return theta1, theta2, reached


class PlanarTwoLink:
    """`solve_2d_unchecked` for chains whose lengths never change (a controller's legs, solved
    thousands of times a second): the terms of the lengths alone are worked out once, and
    only the angles are returned (no `reached` mask). The same floats as the function."""

    def __init__(
        self, l1: float | np.ndarray, l2: float | np.ndarray, max_reach: float = 1.0
    ) -> None:
        self.l1, self.l2 = l1, l2
        self.full = l1 + l2
        self.rmin = abs(l1 - l2)
        self.rmax = max_reach * (l1 + l2)

    def angles(
        self, x: np.ndarray, y: np.ndarray, bend_sign: np.ndarray | float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(theta1, theta2) [rad] for targets (x, y) relative to the first joint; `bend_sign`
        +-1. Targets out of reach get the clamped pose pointing at them."""
        # minimum(maximum()) is clip without ndarray.clip's Python-level wrapper
        dc = np.minimum(np.maximum(np.hypot(x, y), self.rmin), self.rmax)
        a1, theta2 = _clamped_angles(self.l1, self.l2, self.full, dc, bend_sign, self.rmin)
        theta1 = np.arctan2(y, x) + a1
        theta1 = np.remainder(theta1 + np.pi, 2.0 * np.pi) - np.pi
        return theta1, theta2


def _perpendicular(u: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to each unit vector ``u`` (..., 3), deterministic."""
    ax = np.abs(u)
    # cross with the coordinate axis least aligned with u
    k = np.argmin(ax, axis=-1)
    e = np.zeros_like(u)
    np.put_along_axis(e, k[..., None], 1.0, axis=-1)
    p = np.cross(u, e)
    return p / np.linalg.norm(p, axis=-1, keepdims=True)


def solve_3d(
    root: np.ndarray,
    target: np.ndarray,
    l1: float,
    l2: float,
    normal: np.ndarray,
    bend: float = 1.0,
    max_reach: float = 1.0,
    return_reached: bool = False,
):
    """Two-link IK in 3-D, with the bend plane given by ``normal``, batched.

    The chain lies in the plane through ``root`` and ``target`` perpendicular to
    ``normal`` (after removing the component of ``normal`` along the root-target line).
    With ``bend > 0`` bone 2 turns counter-clockwise about ``normal`` relative to bone 1
    (the same convention as :func:`solve_2d` with ``normal = +z``).

    Args:
        root: first joint position(s), shape ``(..., 3)`` [length, any common frame].
        target: end-effector target(s), shape ``(..., 3)``, same frame.
        l1, l2: bone lengths [length].
        normal: bend-plane normal(s), shape ``(..., 3)`` (need not be unit). If parallel
            to the root-target line an arbitrary deterministic perpendicular is used.
        bend: branch selector (sign), broadcastable.
        max_reach: fraction of ``l1 + l2`` the chain may extend to, in ``(0, 1]``.
        return_reached: also return the ``reached`` mask.

    Returns:
        ``(mid, end)`` (plus ``reached`` if asked): middle-joint and end positions, shape
        of the broadcast inputs ``(..., 3)``. ``end == target`` when reachable, else the
        clamped point on the root-target line.
    """
    l1 = bone_length(l1, "l1")
    l2 = bone_length(l2, "l2")
    rmin, rmax = _check_reach(l1, l2, max_reach)
    r = as_points(root, 3, "root")
    t = as_points(target, 3, "target")
    n = as_points(normal, 3, "normal")
    sgn = _bend_sign(bend)
    try:
        r, t, n = np.broadcast_arrays(r, t, n)
    except ValueError:
        raise ShapeError(
            f"root {r.shape}, target {t.shape} and normal {n.shape} do not broadcast"
        ) from None
    if np.any(np.linalg.norm(n, axis=-1) == 0.0):
        raise IKError("normal must be a nonzero vector")
    v = t - r
    d = np.linalg.norm(v, axis=-1)
    tiny = d <= 1e-300
    nu = n / np.linalg.norm(n, axis=-1, keepdims=True)
    u = np.where(tiny[..., None], _perpendicular(nu), v / np.where(tiny, 1.0, d)[..., None])
    nperp = nu - np.sum(nu * u, axis=-1, keepdims=True) * u
    nn = np.linalg.norm(nperp, axis=-1, keepdims=True)
    bad = nn[..., 0] < 1e-9
    if np.any(bad):
        fallback = _perpendicular(u)
        nperp = np.where(bad[..., None], fallback, nperp / np.where(bad[..., None], 1.0, nn))
    else:
        nperp = nperp / nn
    w = np.cross(nperp, u)
    slack = _EPS * (l1 + l2)
    reached = (d <= rmax + slack) & (d >= rmin - slack)
    a1, _, dc = _planar(l1, l2, d, sgn, rmin, rmax)
    mid = r + l1 * (np.cos(a1)[..., None] * u + np.sin(a1)[..., None] * w)
    end = np.where(reached[..., None], t, r + dc[..., None] * u)
    if return_reached:
        return mid, end, reached
    return mid, end


def two_link(
    chain,
    target: np.ndarray,
    bend: float = 1.0,
    normal: np.ndarray | None = None,
    max_reach: float = 1.0,
    tol: float | None = None,
    max_iter: int | None = None,
) -> IKResult:
    """Uniform-interface analytic solver for a two-bone :class:`ik.Chain`.

    Args:
        chain: a chain with exactly 2 bones (2-D or 3-D).
        target: end-effector target, shape ``(dim,)``, in the chain's root frame (world).
        bend: branch (sign of the relative angle of bone 2 about ``normal``).
        normal: 3-D only: bend-plane normal; default the hinge axis of joint 1 if it is a
            hinge, else +z.
        max_reach: fraction of full reach allowed.
        tol: distance counted as converged [length]; default ``1e-9 * reach``.
        max_iter: ignored (analytic; accepted for a uniform signature).

    Returns:
        IKResult with ``iterations == 1``, ``reason`` ``"converged"`` or ``"unreachable"``
        and ``angles`` recovered from the positions (joint limits are *not* enforced).
    """
    del max_iter
    if chain.n_bones != 2 or not chain.is_chain:
        raise ShapeError(f"two_link needs a chain of exactly 2 bones, got {chain.n_bones}")
    dim = chain.dim
    t = as_points(target, dim, "target")
    if t.shape != (dim,):
        raise ShapeError(f"target must have shape ({dim},), got {t.shape}")
    l1, l2 = (float(v) for v in chain.lengths)
    root = chain.root
    tol = 1e-9 * chain.reach if tol is None else float(tol)
    if dim == 2:
        th1, th2, reached = solve_2d(l1, l2, t - root, bend=bend, max_reach=max_reach)
        mid = root + l1 * np.array([np.cos(th1), np.sin(th1)])
        a = th1 + th2
        end = mid + l2 * np.array([np.cos(a), np.sin(a)])
    else:
        if normal is None:
            j = chain.joints[2]
            normal = j.axis if j.kind == "hinge" else np.array([0.0, 0.0, 1.0])
        mid, end, reached = solve_3d(
            root, t, l1, l2, normal, bend=bend, max_reach=max_reach, return_reached=True
        )
    pos = np.stack([np.array(root, dtype=float), mid, end])
    err = float(np.linalg.norm(pos[-1] - t))
    ok = bool(reached) and err <= tol
    return IKResult(
        positions=pos,
        angles=chain.angles_from_positions(pos),
        error=err,
        iterations=1,
        converged=ok,
        reason="converged" if ok else "unreachable",
        history=(err,),
    )
