"""Batched rotation helpers (3x3 matrices act on column vectors; ``v' = R @ v``)."""

from __future__ import annotations

import numpy as np


def skew(v: np.ndarray) -> np.ndarray:
    """Cross-product matrices of vectors ``(..., 3)`` -> ``(..., 3, 3)``."""
    z = np.zeros(v.shape[:-1])
    x, y, w = v[..., 0], v[..., 1], v[..., 2]
    return np.stack(
        [np.stack([z, -w, y], -1), np.stack([w, z, -x], -1), np.stack([-y, x, z], -1)], -2
    )


def axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation matrices about unit ``axis (..., 3)`` by ``angle (...)`` [rad]."""
    angle = np.asarray(angle, dtype=float)
    c = np.cos(angle)[..., None, None]
    s = np.sin(angle)[..., None, None]
    k = skew(axis)
    outer = axis[..., :, None] * axis[..., None, :]
    eye = np.eye(3)
    return c * eye + s * k + (1.0 - c) * outer


def exp_so3(rv: np.ndarray) -> np.ndarray:
    """Rotation matrices from rotation vectors ``(..., 3)`` [rad]."""
    th = np.linalg.norm(rv, axis=-1)
    small = th < 1e-12
    axis = rv / np.where(small, 1.0, th)[..., None]
    axis = np.where(small[..., None], np.array([1.0, 0.0, 0.0]), axis)
    r = axis_angle(axis, th)
    # first-order term for tiny angles keeps exp(d) accurate for finite differences
    return np.where(small[..., None, None], np.eye(3) + skew(rv), r)


def log_so3(r: np.ndarray) -> np.ndarray:
    """Rotation vectors ``(..., 3)`` [rad] of rotation matrices ``(..., 3, 3)``; robust near pi."""
    tr = r[..., 0, 0] + r[..., 1, 1] + r[..., 2, 2]
    cos = np.clip((tr - 1.0) * 0.5, -1.0, 1.0)
    w = np.stack(
        [r[..., 2, 1] - r[..., 1, 2], r[..., 0, 2] - r[..., 2, 0], r[..., 1, 0] - r[..., 0, 1]],
        -1,
    )
    sin = 0.5 * np.linalg.norm(w, axis=-1)
    th = np.arctan2(sin, cos)
    # generic branch
    fac = np.where(sin > 1e-12, th / np.where(sin > 1e-12, 2.0 * sin, 1.0), 0.5)
    out = fac[..., None] * w
    near_pi = cos < -0.99
    if np.any(near_pi):
        # only those rotations (the same numbers as over all of them, at a fraction of
        # the cost): the axis from the symmetric part, R + I = 2 a a^T (1 - cos) + ...;
        # use its largest column
        rn, cosn, wn = r[near_pi], cos[near_pi], w[near_pi]
        b = (rn + np.swapaxes(rn, -1, -2)) * 0.5 - cosn[..., None, None] * np.eye(3)
        diag = np.stack([b[..., 0, 0], b[..., 1, 1], b[..., 2, 2]], -1)
        k = np.argmax(diag, axis=-1)
        col = np.take_along_axis(b, np.broadcast_to(k[..., None, None], b.shape[:-1] + (1,)), -1)[
            ..., 0
        ]
        cn = np.linalg.norm(col, axis=-1, keepdims=True)
        a = col / np.where(cn > 0.0, cn, 1.0)
        sgn = np.where(np.sum(a * wn, axis=-1) < 0.0, -1.0, 1.0)
        out[near_pi] = (sgn * th[near_pi])[..., None] * a
    return out


def normalize(v: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    """Unit vectors along ``v (..., d)``; zero vectors become ``fallback`` (default +x)."""
    n = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
    zero = n <= 1e-300
    if fallback is None:
        fallback = np.zeros(v.shape[-1])
        fallback[0] = 1.0
    return np.where(zero, fallback, v / np.where(zero, 1.0, n))
