"""Batched FABRIK: the algorithm of ``_fabrik_scalar`` on numpy arrays, many poses at once.

Layout: the batch axis is last and contiguous -- positions ``(N, 3, B)``, frames
``(N, 3, 3, B)`` (``F[v][:, j]`` is column ``j``) -- so each per-bone operation is one
numpy call on contiguous rows. A rotation of a frame about one of its own constant axes
(a hinge, a twist, the minimal turn of a bone's rest direction onto a new direction) is
built in the frame's own coordinates as a ``(3, 3, B)`` matrix and applied with one
product, ``F' = F @ M``: the same rotation as the scalar code's column-by-column
formulas, up to rounding. At a few hundred poses and below the cost is the number of
numpy calls, not the arithmetic, so the kernels below are written for few calls.
Finished poses leave the working set (compacted once enough of them have finished);
slow poses run their remaining restarts side by side as extra rows, and once only a few
poses are left they are finished by the scalar solver (see :class:`_Driver`).
"""

from __future__ import annotations

import numpy as np

from . import _fabrik_plan as C
from . import _fabrik_scalar as S
from ._fabrik_plan import Plan

_einsum, _any = np.einsum, np.count_nonzero

_AXES = np.array([0.0, 0.5 * np.pi, np.pi, -0.5 * np.pi])[:, None]  # cone axis azimuths
_EPS = np.zeros((3, 3, 3))  # Levi-Civita symbol: (a x b)_i = eps_ijk a_j b_k
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _EPS[_i, _j, _k], _EPS[_i, _k, _j] = 1.0, -1.0
_EYE = np.eye(3)
# rows of [x]_x + c I (row-major) from (x, c): the linear part of a minimal rotation
_LIN = np.concatenate([-_EPS.reshape(9, 3), _EYE.reshape(9, 1)], axis=1)
_HALF_TURN = -1.0 + 1e-12  # cosines at or below this: the minimal rotation is undefined
# scalar operands as 0-d arrays: the same numbers, but a numpy call converts a Python
# float each time (about as costly as the arithmetic on a few dozen poses)
_ZERO, _ONE, _TINY, _TINY12 = (np.array(x) for x in (0.0, 1.0, 1e-300, 1e-12))
_PI, _TWO_PI, _HALF_PI = (np.array(x) for x in (np.pi, 2.0 * np.pi, 0.5 * np.pi))
_HALF_T, _STAY, _TOK = (np.array(x) for x in (_HALF_TURN, C.TWIST_STAY, C.TWIST_OK))
_RHO_LO, _RHO_HI, _BETA_MAX, _SLOW = (np.array(x) for x in (*C.ACCEL_RHO, C.ACCEL_MAX, C.SLOW))
_BIG = 256  # from this many poses, slicing beats the one-call einsum cross product
COMPACT, COMPACT_MIN = 0.25, 16  # drop finished rows once this share of rows + this many end
AHEAD_ROWS = 64  # run later restart attempts ahead once this few rows are left ...
AHEAD_DEPTH = 100  # ... this many attempts beyond the lead's
# _any(mask) as a truth value: one C call, unlike ndarray.any


# ---------------------------------------------------------------------- vector helpers
def _dot(a, b):
    return _einsum("ib,ib->b", a, b)


def _nrm(v):
    n = np.sqrt(_einsum("ib,ib->b", v, v))
    return v / np.maximum(n, _TINY, out=n)


def _cross(a, b):
    """``a x b`` for ``(3, B)`` arrays (the two products of each component are the only
    nonzero terms of the einsum, so both branches give the same numbers)."""
    if a.shape[-1] < _BIG:
        return _einsum("ijk,jb,kb->ib", _EPS, a, b)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        np.multiply(a[j], b[k], out=out[i])
        out[i] -= a[k] * b[j]
    return out


def _mv(f, v):
    return _einsum("ijb,jb->ib", f, v)


def _mtv(f, v):
    return _einsum("jib,jb->ib", f, v)


def _mm(f, m, out=None):
    """Frames times local rotations: ``(3, 3, B) @ (3, 3, B)``."""
    if out is None:
        return _einsum("ijb,jkb->ikb", f, m)
    return _einsum("ijb,jkb->ikb", f, m, out=out)


def _turn(pst9, c, s):
    """Rotations ``(3, 3, B)`` about a constant unit axis ``k`` with cosines ``c`` and
    sines ``s``: ``I + s K + (1 - c) K^2`` (``pst9 (9, 3)`` holds ``I, K, K^2``,
    ``K = [k]_x``; exactly the identity where ``s = 0, c = 1``)."""
    coef = np.empty((3,) + np.shape(c))
    coef[0] = 1.0
    coef[1] = s
    np.subtract(_ONE, c, out=coef[2])
    return (pst9 @ coef).reshape(3, 3, -1)


def _twist(pst9, t):
    """:func:`_turn` by the angles ``t``."""
    coef = np.empty((3,) + t.shape)
    coef[0] = 1.0
    np.sin(t, out=coef[1])
    np.cos(t, out=coef[2])
    np.subtract(_ONE, coef[2], out=coef[2])
    return (pst9 @ coef).reshape(3, 3, -1)


def _minrot_local(k, v: int, y):
    """Minimal rotations ``(3, 3, B)`` taking joint ``v``'s rest direction ``r`` to the
    unit directions ``y (3, B)`` (all in one frame's coordinates):
    ``c I + [x]_x + x x^T / (1 + c)`` with ``x = r x y``, ``c = r . y``; a half turn
    about ``e2`` where ``y = -r`` (the scalar code's fallback axis)."""
    z = k.rx4[v] @ y  # rows: r x y, r . y
    c = z[3]
    den = _ONE + c
    half = c <= _HALF_T
    if _any(half):
        den[half] = 1.0
    else:
        half = None
    xs = z[:3] / den
    m = xs[:, None, :] * z[None, :3, :]
    m.reshape(9, -1)[...] += _LIN @ z
    if half is not None:
        m = np.where(half, k.flip[v][:, :, None], m)
    return m


def _minrot_vec(v, a, b, fallback):
    """``v`` turned by the minimal rotation taking unit ``a`` to unit ``b``
    (``fallback()``: the axis of the half turn where ``b = -a``)."""
    w = _cross(a, b)
    c = _dot(a, b)
    half = c <= _HALF_T
    if _any(half):
        wv = _dot(w, v) / np.where(half, 1.0, 1.0 + c)
        out = v * c + _cross(w, v) + w * wv
        kk = fallback()
        alt = 2.0 * _dot(kk, v) * kk - v  # half turn about kk
        return np.where(half, alt, out)
    wv = _dot(w, v) / (_ONE + c)
    return v * c + _cross(w, v) + w * wv


def _minrot_r(k, v: int, a, b, fallback):
    """:func:`_minrot_vec` of joint ``v``'s constant rest direction ``r``."""
    w = _cross(a, b)
    c = _dot(a, b)
    half = c <= _HALF_T
    if _any(half):
        return _minrot_vec(np.repeat(k.rc[v], c.shape[0], axis=1), a, b, fallback)
    z = k.rx4[v] @ w  # rows: r x w, r . w
    z[3] /= _ONE + c
    out = w * z[3]
    out -= z[:3]
    out += k.rc[v] * c
    return out  # r c + w x r + w (w . r) / (1 + c)


def _perp(a):
    x = np.stack((np.zeros_like(a[0]), a[2], -a[1]))
    y = np.stack((-a[2], np.zeros_like(a[0]), a[0]))
    return _nrm(np.where(np.abs(a[0]) < 0.9, x, y))


def _pst9(axis):
    kx = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.stack((_EYE, kx, kx @ kx)).reshape(3, 9).T.copy()


class _Consts:
    """numpy versions of the plan's per-node constants."""

    def __init__(self, pl: Plan):
        n = pl.n
        self.r = [np.asarray(pl.r[v]) for v in range(n)]
        self.rc = [np.asarray(pl.r[v])[:, None] for v in range(n)]
        # rows r, e1, e2: c = basisT @ l are the components of l in the joint basis
        self.basisT = [np.array([pl.r[v], pl.e1[v], pl.e2[v]]) for v in range(n)]
        self.basis = [b.T.copy() for b in self.basisT]
        eye = np.eye(3)
        self.bid = [bool(np.array_equal(b, eye)) for b in self.basisT]
        # hinges: rows r, a x r, a (the hinge angle's cosine, sine; the off-plane part)
        self.hrows = [
            None if a is None else np.array([pl.r[v], a, pl.axis[v]]) for v, a in enumerate(pl.ar)
        ]
        self.hplane = [None if h is None else h[:2].T.copy() for h in self.hrows]
        self.hid = [h is not None and bool(np.array_equal(h, eye)) for h in self.hrows]
        self.hlim0 = [None if h is None else (np.array(h[0]), np.array(h[1])) for h in pl.hlim]
        self.tw0 = [None if t is None else (np.array(t[0]), np.array(t[1])) for t in pl.twist]
        self.len0 = [np.array(x) for x in pl.lens]
        self.hlim_cs = [
            None if h is None else (np.array([[h[2]], [h[3]]]), np.array([[h[4]], [h[5]]]))
            for h in pl.hlim
        ]  # (cos, sin) of the hinge limits, (2, 1) each
        # cones: 1 / a^2 of the quadrant half-angles by the signs of (c1, c2); circular
        # cones use their half-angle itself (the same bound, without the arithmetic)
        self.icone = pl.icone
        self.icp = [None if c is None else np.array([[c[0]], [c[1]]]) for c in pl.icone]
        self.icn = [None if c is None else np.array([[c[2]], [c[3]]]) for c in pl.icone]
        self.circ = [
            None
            if c is None or not c[0] == c[1] == c[2] == c[3]
            else (np.array(c[0]), float(np.cos(c[0])), np.array(np.sin(c[0])))
            for c in pl.cone
        ]
        self.half = [
            None if c is None else np.array([c[0], c[1], c[2], c[3]])[:, None] for c in pl.cone
        ]  # quadrant half-angles (4, 1)
        self.rx = [
            np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]]) for r in pl.r
        ]  # r x l = rx @ l
        self.rx4 = [np.vstack([rx, r]) for rx, r in zip(self.rx, self.r, strict=True)]
        self.tw9 = [_pst9(r) for r in pl.r]  # turns about the bone (twists)
        self.hinge9 = [None if a is None else _pst9(a) for a in pl.axis]
        self.flip = [2.0 * np.outer(e2, e2) - eye for e2 in pl.e2]  # half turn about e2
        # a hinge child c of v turned by a twist t about r: the components of
        # Rot(r, -t) l in its hinge rows H are  A cos t + B sin t + C (1 - cos t)  with
        # A = H l, B = -H (r x l), C = (H r)(r . l)
        self.hcand = {}
        for v in range(n):
            for c in pl.cch[v]:
                if pl.hinge[c]:
                    h3 = self.hrows[c]
                    self.hcand[v, c] = (h3, -(h3 @ self.rx[v]), (h3 @ self.r[v])[:, None, None])
        # twist candidates, per plane normal a of a child: the rows (a - (r . a) r) and
        # -(a . r_x) give the in-plane components of l; (r . a) the offset
        self.tw_rows = [[] for _ in range(n)]
        for v in range(n):
            for c in pl.cch[v]:
                for a in pl.tw_normals[c]:
                    a = np.asarray(a)
                    ra = float(self.r[v] @ a)
                    self.tw_rows[v].append(
                        (c, np.array([a - ra * self.r[v], -(a @ self.rx[v])]), ra)
                    )


def _consts(pl: Plan) -> _Consts:
    c = getattr(pl, "_batch_consts", None)
    if c is None:
        c = pl._batch_consts = _Consts(pl)
    return c


# ---------------------------------------------------------------------- constraints
def project(pl: Plan, k: _Consts, v: int, l, want_viol: bool = True):
    """Batched :func:`_fabrik_scalar.project` of unit directions ``l (3, M)``:
    ``(l', violation or None, cos, sin)``; ``violation`` None means all zero."""
    if pl.hinge[v]:
        return _project_hinge(pl, k, v, l, want_viol)
    if k.icone[v] is None:
        return l, None, None, None
    return _project_cone(k, v, l)[:4]


def _project_hinge(pl, k, v, l, want_viol):
    xyz = l if k.hid[v] else k.hrows[v] @ l
    h = np.sqrt(_einsum("ib,ib->b", xyz[:2], xyz[:2]))
    if _any(h <= _TINY):  # a direction along the axis: angle 0, as in the scalar code
        ok = h > _TINY
        cs = np.where(ok, xyz[:2] / np.where(ok, h, 1.0), np.array([[1.0], [0.0]]))
    else:
        cs = xyz[:2] / h
    lim = pl.hlim[v]
    exc = 0.0
    if lim is not None:
        lo, hi = k.hlim0[v]
        th = np.arctan2(cs[1], cs[0])
        dth = th - np.minimum(np.maximum(th, lo), hi)
        if _any(dth):
            exc = np.abs(dth)
            lo_cs, hi_cs = k.hlim_cs[v]
            np.copyto(cs, lo_cs, where=dth < _ZERO)
            np.copyto(cs, hi_cs, where=dth > _ZERO)
    lp = k.hplane[v] @ cs  # c r + s (a x r): products with 0 and 1 are exact
    if not want_viol:
        return lp, None, cs[0], cs[1]
    vio = np.arctan2(np.abs(xyz[2]), h)
    vio += exc
    return lp, vio, cs[0], cs[1]


def _project_cone(k, v, l):
    """Cone projection; also returns the components ``cc`` of ``l`` in the joint basis
    and the swing ``phi`` (for :func:`_axial_twist`)."""
    cc = l if k.bid[v] else k.basisT[v] @ l
    h = np.sqrt(_einsum("ib,ib->b", cc[1:], cc[1:]))
    circ = k.circ[v]
    if circ is not None:
        bound = circ[0]
    else:
        den = _einsum("ib,ib,ib->b", cc[1:], cc[1:], np.where(cc[1:] >= _ZERO, k.icp[v], k.icn[v]))
        bound = h / np.sqrt(np.maximum(den, _TINY, out=den), out=den)
    phi = np.arctan2(h, cc[0])
    ex = phi - bound
    out = ex > _ZERO
    out &= h > _TINY  # on the axis (h == 0): never outside
    if not _any(out):
        return l, None, None, None, cc, phi
    lp = np.empty(cc.shape)
    if circ is not None:
        lp[0] = circ[1]
        np.multiply(cc[1:], circ[2] / h, out=lp[1:])
    else:
        np.cos(bound, out=lp[0])
        np.multiply(cc[1:], np.sin(bound) / h, out=lp[1:])
    if not k.bid[v]:
        lp = k.basis[v] @ lp
    ex *= out
    return np.where(out, lp, l), ex, None, None, cc, phi


def choose_twist(pl: Plan, k: _Consts, v: int, cs, ls, lo, hi, pre=None):
    """Batched :func:`_fabrik_scalar.choose_twist`: ``ls`` unit child directions
    ``(3, B)`` in the current frame; ``lo, hi`` scalars or ``(B,)``. Returns the extra
    twists ``(B,)``, or None when no pose needs one. ``pre`` (if given) receives each
    child's projection at the current twist, for reuse when the twist is kept.
    Every pose is scored (cheaper than selecting the few that need a twist); the
    others get 0."""
    s0 = None
    parts = None
    for c, l in zip(cs, ls, strict=True):
        if pl.hinge[c] or k.icone[c] is None:
            lp, vv, c_, s_ = project(pl, k, c, l)
        else:
            lp, vv, c_, s_, cc, phi = _project_cone(k, c, l)
            parts = (cc, phi)
        if pre is not None:
            pre[c] = (lp, c_, s_)
        if vv is not None:
            s0 = vv if s0 is None else np.maximum(s0, vv)
    if s0 is None:
        return None
    bad = s0 > _TOK
    if not _any(bad):
        return None
    if pre is not None:
        for c in cs:
            pre[c] = None
    if pl.tw_axial[v]:
        return _axial_twist(k, cs[0], parts, s0, bad)
    m = s0.shape[0]
    r = k.rc[v]
    lsd = dict(zip(cs, ls, strict=True))
    rows = k.tw_rows[v]
    ranged = pl.twist[v] is not None  # else lo, hi = -pi, pi: wrapped twists are within
    nc = (2 if ranged else 0) + 2 * len(rows)
    cand = np.empty((nc + 1, m))  # row 0: keep the twist
    cand[0] = 0.0
    j0 = 1
    if ranged:
        cand[1] = lo
        cand[2] = hi
        j0 = 3
    rdl = {c: k.r[v] @ lsd[c] for c in cs}
    for c, ab, ra in rows:
        # twists t with (Rot(r, -t) l) . a = 0: the child direction in that plane
        aa, bb = ab @ lsd[c]
        rho = np.hypot(aa, bb)
        okr = rho > _TINY12
        base = np.arctan2(bb, aa)
        if ra == 0.0:  # a perpendicular to r: arccos(0), as the general formula gives
            delta = _HALF_PI
        else:
            np.maximum(rho, _TINY12, out=rho)  # (where not okr, any finite value will do)
            np.divide(rdl[c] * ra, rho, out=rho)
            np.negative(rho, out=rho)
            np.maximum(rho, -1.0, out=rho)
            np.minimum(rho, 1.0, out=rho)
            delta = np.arccos(rho, out=rho)
        blk = cand[j0 : j0 + 2]
        np.add(base, delta, out=blk[0])
        np.subtract(base, delta, out=blk[1])
        blk += _PI
        np.remainder(blk, _TWO_PI, out=blk)
        blk -= _PI
        if ranged:
            np.maximum(blk, lo, out=blk)
            np.minimum(blk, hi, out=blk)
        blk *= okr  # no solution: same as keeping (t = 0)
        j0 += 2
    tc = cand[1:]
    ct, st = np.cos(tc), np.sin(tc)
    score = np.empty((nc + 1, m))
    score[0] = s0
    sc = score[1:]
    np.abs(tc, out=sc)
    sc *= _STAY
    worst = None
    for c in cs:
        l = lsd[c]
        if pl.hinge[c]:
            # a hinge child: the violation straight from its components at each
            # candidate (those of project: off-plane angle + excess over the limits)
            ha, hb, hr = k.hcand[v, c]
            xyz = (ha @ l)[:, None, :] * ct
            xyz += (hb @ l)[:, None, :] * st
            xyz += hr * (rdl[c] * (_ONE - ct))
            h = np.hypot(xyz[0], xyz[1])
            vv = np.arctan2(np.abs(xyz[2]), h)
            lim = pl.hlim[c]
            if lim is not None:
                th = np.arctan2(xyz[1], xyz[0])
                th -= np.minimum(np.maximum(th, k.hlim0[c][0]), k.hlim0[c][1])
                vv += np.abs(th, out=th)
        else:
            rl = k.rx[v] @ l
            lt = l[:, None, :] * ct
            lt -= rl[:, None, :] * st
            lt += r[:, :, None] * (rdl[c] * (_ONE - ct))
            vv = project(pl, k, c, lt.reshape(3, -1))[1]
            if vv is None:
                continue
            vv = vv.reshape(tc.shape)
        worst = vv if worst is None else np.maximum(worst, vv)
    if worst is not None:
        sc += worst
    score[0][~bad] = -1.0  # poses that need no twist keep theirs
    j = score.argmin(axis=0)  # the first candidate of least score wins
    return cand[j, np.arange(m)]


def _axial_twist(k: _Consts, c: int, parts, s0, bad):
    """Batched :func:`_fabrik_scalar._axial_twist` (every pose; 0 where not ``bad``)."""
    cc, phi = parts
    m = s0.shape[0]
    cand = np.empty((5, m))
    cand[0] = 0.0
    t = cand[1:]
    np.subtract(np.arctan2(cc[2], cc[1]), _AXES, out=t)
    t += _PI
    np.remainder(t, _TWO_PI, out=t)
    t -= _PI
    score = np.empty((5, m))
    score[0] = s0
    sc = score[1:]
    np.subtract(phi, k.half[c], out=sc)
    np.maximum(sc, _ZERO, out=sc)
    sc += _STAY * np.abs(t)
    score[0][~bad] = -1.0  # poses that need no twist keep theirs
    j = score.argmin(axis=0)  # the first candidate of least score wins
    return cand[j, np.arange(m)]


# ---------------------------------------------------------------------- passes
def backward(pl: Plan, k: _Consts, p, f, tv, dirv):
    q = p.copy() if pl.n_inactive else np.empty_like(p)  # the root is set by forward
    acc: list = [None] * pl.n  # sums of the positions proposed for each node
    par = pl.par
    for v in pl.bw_order:
        e = pl.eff_slot[v]
        if e >= 0:
            x = tv[e]
        else:
            m = pl.cnt[v]
            x = acc[v]
            if m > 1:
                x = _annulus(pl.branches[v], x / m, tv)
        q[v] = x
        pa = par[v]
        kd = pl.dir_slot[v]
        if kd >= 0:
            d = dirv[kd]
        else:
            d = _nrm(x - p[pa])
            if f is not None and pl.bw_cch[v]:
                d = _bw_constrain(pl, k, v, x, d, f[v], q)
        y = x - k.len0[v] * d
        a = acc[pa]
        if a is None:
            acc[pa] = y
        else:
            a += y
    return q


def _annulus(branches, x, tv):
    for _ in range(3):
        for e, hi, lo in branches:
            t = tv[e]
            rel = x - t
            dd = np.sqrt(_dot(rel, rel))
            out = (dd > hi) | (dd < lo)
            if _any(out):
                s = np.where(dd > hi, hi, lo) / np.maximum(dd, 1e-300)
                x = np.where(out, t + rel * s, x)
    return x


def _bw_constrain(pl, k, v, x, d, fo, q):
    """Batched :func:`_fabrik_scalar._bw_constrain`."""
    # fe only estimates v's frame (it is not kept): no need to renormalise fo^T d
    fe = _mm(fo, _minrot_local(k, v, _mtv(fo, d)))
    cs = pl.bw_cch[v]
    if len(cs) == 1:  # one child: no bookkeeping; where it is within its limits lp = l,
        # and the turn is the identity up to rounding
        c = cs[0]
        li = _mtv(fe, _nrm(q[c] - x))
        lp, vio, _, _ = project(pl, k, c, li)
        if vio is None or not _any(vio):
            return d
        return _mv(fe, _minrot_r(k, v, lp, li, lambda: _perp(lp)))
    ls = [_mtv(fe, _nrm(q[c] - x)) for c in cs]
    b = None
    turned = None
    for i, c in enumerate(cs):
        li = ls[i]
        lp, vio, _, _ = project(pl, k, c, li)
        if vio is None:
            continue
        bad = vio > 0.0
        if not _any(bad):
            continue
        if b is None:
            b = np.where(bad, _minrot_r(k, v, lp, li, lambda lp=lp: _perp(lp)), k.rc[v])
        else:
            b = np.where(bad, _minrot_vec(b, lp, li, lambda lp=lp: _perp(lp)), b)
        for j in range(i + 1, len(cs)):
            ls[j] = np.where(bad, _minrot_vec(ls[j], li, lp, lambda lp=lp: _perp(lp)), ls[j])
        turned = bad if turned is None else turned | bad
    if turned is None:
        return d
    return np.where(turned, _mv(fe, b), d)  # unit up to rounding


def _zero_twist_e1(k: _Consts, v: int, y):
    """``e1`` turned by the minimal rotation from ``r`` to unit ``y`` (joint basis
    ``r, e1, e2``; ``y`` in the same coordinates): with ``y = c0 r + c1 e1 + c2 e2``
    that is ``-c1 r + (c0 + c2^2 / (1 + c0)) e1 - c1 c2 / (1 + c0) e2``."""
    c0, c1, c2 = y if k.bid[v] else k.basisT[v] @ y
    half = None
    den = _ONE + c0
    if _any(c0 <= _HALF_T):
        half = c0 <= _HALF_T
        den = np.where(half, 1.0, den)
    c2d = c2 / den
    z = np.empty((3,) + c0.shape)
    np.negative(c1, out=z[0])
    np.multiply(c2, c2d, out=z[1])
    z[1] += c0
    np.multiply(c1, c2d, out=z[2])
    np.negative(z[2], out=z[2])
    if half is not None:  # half turn about e2: e1 -> -e1
        z = np.where(half, np.array([[0.0], [-1.0], [0.0]]), z)
    return z if k.bid[v] else k.basis[v] @ z


def forward(pl: Plan, k: _Consts, q, root, f_old, frames: bool | None = None):
    """Batched :func:`_fabrik_scalar.forward` in place on ``q (N, 3, B)``; returns the
    frames ``(N, 3, 3, B)`` or None. The root's frame is the identity: products with
    it are skipped (they are exact)."""
    n = pl.n
    par = pl.par
    lens = pl.lens
    q[0] = root
    if not (pl.frames if frames is None else frames):
        for v in range(1, n):
            a = q[par[v]]
            u = q[v] - a
            nn = np.sqrt(_dot(u, u))
            q[v] = a + u * (lens[v] / np.where(nn > 1e-300, nn, 1.0))
        return None
    bsz = q.shape[2]
    f = np.empty((n, 3, 3, bsz))
    f[0] = _EYE[:, :, None]
    pre: list = [None] * n  # projections computed while choosing the parent's twist
    dirs: list = [None] * n  # unit bone directions computed then (same numbers)
    for v in range(1, n):
        pa = par[v]
        top = pa == 0  # parent frame: the identity
        a = q[pa]
        fp = f[pa]
        if pre[v] is not None:
            lp, cs, sn = pre[v]
        else:
            l = dirs[v]
            if l is None:
                l = _nrm(q[v] - a)
            if not top:
                l = _mtv(fp, l)
            lp, _, cs, sn = project(pl, k, v, l, want_viol=False)
        w = lp if top else _mv(fp, lp)  # unit up to rounding
        xv = q[v]
        np.multiply(w, k.len0[v], out=xv)
        xv += a
        if pl.hinge[v]:
            if top:
                f[v] = _turn(k.hinge9[v], cs, sn)
            else:
                _mm(fp, _turn(k.hinge9[v], cs, sn), out=f[v])
            continue
        # unit directions in, so that rounding errors of the frames do not compound
        if f_old is None and top:
            g = _minrot_local(k, v, _nrm(w))
        else:
            fo = fp if f_old is None else f_old[v]
            g = _mm(fo, _minrot_local(k, v, _nrm(_mtv(fo, w))))
        lo = -np.pi
        hi = np.pi
        tw = pl.twist[v]
        cch = pl.cch[v]
        if tw is not None:
            # twist relative to the parent: from the zero-twist frame's e1 to g's
            z1 = _zero_twist_e1(k, v, lp)
            if not top:
                z1 = _mv(fp, z1)
            # in g's own coordinates: tau = atan2((z1 x g e1) . g r, z1 . g e1)
            zg = _mtv(g, z1)
            if not k.bid[v]:
                zg = k.basisT[v] @ zg
            tau = np.arctan2(np.negative(zg[2]), zg[1])
            tc = np.minimum(np.maximum(tau, k.tw0[v][0]), k.tw0[v][1])
            dt = tc - tau
            if _any(dt):
                if cch:
                    g = _mm(g, _twist(k.tw9[v], dt))
                else:
                    g = _mm(g, _twist(k.tw9[v], dt), out=f[v])
                    continue
            if cch:
                lo, hi = tw[0] - tc, tw[1] - tc
        if cch:
            for c in cch:
                dirs[c] = _nrm(q[c] - xv)
            t = choose_twist(pl, k, v, cch, [_mtv(g, dirs[c]) for c in cch], lo, hi, pre)
            if t is not None:
                _mm(g, _twist(k.tw9[v], t), out=f[v])
                continue
        f[v] = g
    return f


# ---------------------------------------------------------------------- arcs
def arc(pl: Plan, root, t, p):
    """Batched :func:`_fabrik_scalar.arc`: ``root, t (3, J)``, ``p (N, 3, J)``."""
    lens = np.asarray(pl.lens[1:])
    total = float(sum(pl.lens[1:]))
    u = t - root
    d = np.sqrt(_dot(u, u))
    u = u / d
    n = pl.n
    m = (p[1 : n - 1] - root[None]).sum(axis=0)
    w = m - _dot(m, u) * u
    wn = np.sqrt(_dot(w, w))
    small = wn <= 1e-9 * total * (n - 2)
    if small.any():
        alt = _cross(u, np.broadcast_to(np.array([[0.0], [0.0], [1.0]]), u.shape))
        alt2 = _cross(u, np.broadcast_to(np.array([[0.0], [1.0], [0.0]]), u.shape))
        alt = np.where(_dot(alt, alt) < 1e-12, alt2, alt)
        w = np.where(small, alt, w)
        wn = np.sqrt(_dot(w, w))
    w = w / wn
    kap = arc_curvature(lens, total, d)
    straight = kap <= 0.0
    ks = np.where(straight, 1.0, kap)
    rad = 1.0 / ks
    angs = 2.0 * np.arcsin(np.minimum(lens[:, None] * ks * 0.5, 1.0))  # (nb, J)
    big = angs.sum(axis=0)
    c = root + 0.5 * d * u - rad * np.cos(0.5 * big) * w
    phi = -0.5 * big + np.cumsum(angs, axis=0)  # (nb, J)
    out = np.empty_like(p)
    out[0] = root
    out[1:] = (
        c[None]
        + (rad * np.sin(phi))[:, None, :] * u[None]
        + (rad * np.cos(phi))[:, None, :] * w[None]
    )
    if straight.any():
        cum = np.cumsum(lens)
        st = root[None] + cum[:, None, None] * u[None]
        out[1:] = np.where(straight, st, out[1:])
    return out


def arc_curvature(lens, total, d):
    """Batched :func:`_fabrik_scalar.arc_curvature` for distances ``d (J,)``."""
    hi = np.full(d.shape, 2.0 / lens.max())
    lo = np.zeros(d.shape)
    cube = total**3 - float(np.sum(lens**3))
    k = np.sqrt(24.0 * np.maximum(total - d, 0.0) / cube) if cube > 0.0 else 0.5 * hi
    k = np.where((k > 0.0) & (k < hi), k, 0.5 * hi)
    live = d < total
    for _ in range(S.ARC_NEWTON_STEPS):
        x = np.minimum(lens[:, None] * k * 0.5, 1.0)
        big = (2.0 * np.arcsin(x)).sum(axis=0)
        der = (lens[:, None] / np.sqrt(np.maximum(1.0 - x * x, 1e-300))).sum(axis=0)
        wrap = big > 2.0 * np.pi
        chord = 2.0 / k * np.sin(0.5 * big)
        f = chord - d
        live = live & ~(~wrap & (np.abs(f) <= 1e-15 * total))
        up = ~wrap & (f > 0.0)
        lo = np.where(live & up, k, lo)
        hi = np.where(live & ~up, k, hi)
        fp = (-chord + np.cos(0.5 * big) * der) / k
        with np.errstate(divide="ignore", invalid="ignore"):
            kn = np.where(fp < 0.0, k - f / fp, -1.0)
        kn = np.where(wrap | ~((lo <= kn) & (kn <= hi)), 0.5 * (lo + hi), kn)
        k = np.where(live, kn, k)
        if not live.any():
            break
    return np.where(d < total, k, 0.0)


# ---------------------------------------------------------------------- driver
def frames_of(pl: Plan, pos):
    """Frames ``(N, 3, 3, B)`` of free-tree poses ``pos (B, N, 3)`` (minimal rotations)."""
    q = np.ascontiguousarray(pos.transpose(1, 2, 0))
    return forward(pl, _consts(pl), q, q[0].copy(), None, frames=True)


def _take(a, idx):
    """Rows ``idx`` of the batch axis (last), C-contiguous: ``a[..., idx]`` would put
    the batch axis outermost in memory, and every later call on it would run strided."""
    return np.take(a, idx, axis=-1)


def _max_err(pl, q, t):
    e = None
    for j, v in enumerate(pl.effs):
        dv = q[v] - t[j]
        ev = np.sqrt(_dot(dv, dv))
        e = ev if e is None else np.maximum(e, ev)
    return e


class _Out:
    def __init__(self, pl, bsz):
        self.pos = np.zeros((bsz, pl.n, 3))
        self.frames = np.zeros((pl.n, 3, 3, bsz)) if pl.frames else None  # batch axis last
        self.err = np.zeros(bsz)
        self.iters = np.zeros(bsz, dtype=int)
        self.reason = np.empty(bsz, dtype=object)
        self.nrest = np.zeros(bsz, dtype=int)

    def put_rows(self, rows, best_p, best_f, best_err, it, reason, nrest):
        self.pos[rows] = best_p.transpose(2, 0, 1)
        if self.frames is not None:
            self.frames[..., rows] = best_f
        self.err[rows] = best_err
        self.iters[rows] = it
        self.reason[rows] = reason
        self.nrest[rows] = nrest

    def put_state(self, row, st):
        self.pos[row] = st.best_p
        if self.frames is not None:
            self.frames[..., row] = np.array(st.best_f).transpose(0, 2, 1)
        self.err[row] = st.best_err
        self.iters[row] = st.it
        self.reason[row] = st.reason
        self.nrest[row] = st.nrest + st.narc


def solve_batch(pl: Plan, t3, init3, root3, dirv, tol, eps, max_iter, restarts):
    """Solve ``B`` poses. ``t3 (B, E, 3)``, ``init3 (B, N, 3)``, ``root3 (B, 3)``,
    ``dirv (B, D, 3)`` or None. Returns positions ``(B, N, 3)``, frames ``(N, 3, 3, B)``
    or None, errors, iterations, reasons, restart counts."""
    k = _consts(pl)
    bsz = t3.shape[0]
    out = _Out(pl, bsz)
    t_all = np.ascontiguousarray(t3.transpose(1, 2, 0))  # (E, 3, B)
    r_all = np.ascontiguousarray(root3.T)  # (3, B)
    d_all = None if dirv is None else np.ascontiguousarray(dirv.transpose(1, 2, 0))
    p = np.ascontiguousarray(init3.transpose(1, 2, 0))  # (N, 3, B)
    f = forward(pl, k, p, r_all, None)
    err = _max_err(pl, p, t_all)
    done = err <= tol
    if done.any():
        rows = np.nonzero(done)[0]
        out.put_rows(
            rows, p[:, :, rows], None if f is None else f[..., rows], err[rows], 0, "converged", 0
        )
    reach_e = np.asarray(pl.reach_e)
    dist0 = np.sqrt(_dot(t_all[0] - r_all, t_all[0] - r_all))
    if pl.chain and not pl.dir_effs:
        far = ~done & (dist0 >= pl.reach)
        if far.any():
            rows = np.nonzero(far)[0]
            u = (t_all[0][:, rows] - r_all[:, rows]) / np.maximum(dist0[rows], 1e-300)
            cum = np.concatenate([[0.0], np.cumsum(pl.lens[1:])])
            qf = r_all[:, rows][None] + cum[:, None, None] * u[None]
            ff = forward(pl, k, qf, r_all[:, rows], None)
            ef = _max_err(pl, qf, t_all[:, :, rows])
            out.put_rows(rows, qf, ff, ef, 1, np.where(ef <= tol, "converged", "unreachable"), 0)
            done |= far
    work = np.nonzero(~done)[0]
    if work.size:
        rows = _Rows.start(
            pl,
            work,
            _take(p, work),
            None if f is None else _take(f, work),
            err[work],
            _take(t_all, work),
            _take(r_all, work),
            None if d_all is None else _take(d_all, work),
            dist0[work],
            reach_e,
            restarts,
        )
        _Driver(pl, k, out, rows, tol, eps, max_iter, restarts).run()
    return out.pos, out.frames, out.err, out.iters, out.reason.astype(str), out.nrest


_REASONS = np.array(["", "converged", "stalled", "max_iter"], dtype=object)
_RUN, _CONV, _STALL, _CAP, _GONE = 0, 1, 2, 3, 4  # row endings (_GONE: nothing to output)


class _Rows:
    """The working set, batch axis last: one row per unfinished pose (its *lead* row,
    the attempt that counts now) plus, for slow poses, one row per later attempt run
    ahead of time (see :class:`_Driver`). Finished rows stay (``alive`` False, their
    state frozen) until enough of them are worth a copy; their results are written out
    then."""

    FIELDS = (
        "rows",
        "p",
        "f",
        "err",
        "prev",
        "best_err",
        "best_p",
        "best_f",
        "since",
        "att_best",
        "anchor",
        "nrest",
        "narc",
        "t",
        "root",
        "dirv",
        "can_restart",
        "arc_far",
        "alive",
        "it",
        "lead",
        "ahead",
        "why",
        "win",
        "check",
    )

    @classmethod
    def start(cls, pl, rows, p, f, err, t, root, dirv, dist0, reach_e, restarts):
        s = cls()
        m = rows.size
        s.rows = rows  # output row (the pose) of each row
        s.p, s.f, s.err = p, f, err
        s.prev = np.full(m, np.inf)
        s.best_err = err.copy()
        s.best_p = p.copy()
        s.best_f = None if f is None else f.copy()
        s.since = np.zeros(m, dtype=int)
        s.att_best = np.full(m, np.inf)
        s.anchor = np.full(m, np.inf)
        s.nrest = np.zeros(m, dtype=int)  # restarts before this row's attempt
        s.narc = np.zeros(m, dtype=int)
        s.t, s.root, s.dirv = t, root, dirv
        rel = t - root[None]
        s.can_restart = (restarts > 0) & np.all(
            np.sqrt(_einsum("eib,eib->eb", rel, rel)) <= reach_e[:, None], axis=0
        )
        s.arc_far = (dist0 >= C.ARC_FRACTION * pl.reach) if pl.arc_ok else np.zeros(m, dtype=bool)
        s.alive = np.ones(m, dtype=bool)
        s.it = np.zeros(m, dtype=int)  # iterations: of the pose (lead), of the attempt (ahead)
        s.lead = np.ones(m, dtype=bool)
        s.ahead = np.zeros(m, dtype=bool)  # the pose has later attempts running ahead
        s.why = np.zeros(m, dtype=np.int8)
        # progress window of the attempt, and the value of ``since`` at its next check
        s.win = np.where(s.arc_far, C.WINDOW_ARC, C.WINDOW)
        s.check = s.win + 1
        s.n_alive = m
        return s

    @property
    def m(self) -> int:
        return self.rows.size

    def keep(self, idx):
        for name in self.FIELDS:
            a = getattr(self, name)
            if a is not None:
                setattr(self, name, _take(a, idx))

    def flush(self, out):
        """Write out the rows that ended with a result (and forget that they did)."""
        js = np.nonzero((self.why > _RUN) & (self.why < _GONE))[0]
        if js.size:
            out.put_rows(
                self.rows[js],
                self.best_p[:, :, js],
                None if self.best_f is None else self.best_f[..., js],
                self.best_err[js],
                self.it[js],
                _REASONS[self.why[js]],
                self.nrest[js] + self.narc[js],
            )
            self.why[js] = _GONE

    def compact(self, out):
        self.flush(out)
        self.keep(self.alive.nonzero()[0])

    def append(self, o: _Rows):
        for name in self.FIELDS:
            a = getattr(self, name)
            if a is not None:
                setattr(self, name, np.concatenate([a, getattr(o, name)], axis=-1))
        self.n_alive += o.n_alive

    def fresh(self, pl, src, nrest):
        """New rows starting restart attempts: attempt ``nrest[i]`` (after that many
        restarts) of the pose of row ``src[i]``, from its table pose."""
        o = _Rows()
        m = len(src)
        tp, tf = pl.restart_table()
        kk = pl.restart_indices(np.asarray(nrest) - 1)
        o.rows = self.rows[src]
        o.t, o.root = _take(self.t, src), _take(self.root, src)
        o.dirv = None if self.dirv is None else _take(self.dirv, src)
        o.p = np.ascontiguousarray(tp[kk].transpose(1, 2, 0)) + o.root[None]
        o.f = None if self.f is None else np.ascontiguousarray(tf[kk].transpose(1, 2, 3, 0))
        o.err = np.full(m, np.inf)
        o.prev = np.full(m, np.inf)
        o.best_err = np.full(m, np.inf)
        o.best_p = o.p.copy()
        o.best_f = None if o.f is None else o.f.copy()
        o.since = np.zeros(m, dtype=int)
        o.att_best = np.full(m, np.inf)
        o.anchor = np.full(m, np.inf)
        o.nrest = np.asarray(nrest, dtype=int)
        o.narc = self.narc[src]
        o.can_restart = self.can_restart[src]
        o.arc_far = self.arc_far[src]
        o.alive = np.ones(m, dtype=bool)
        o.it = np.zeros(m, dtype=int)
        o.lead = np.zeros(m, dtype=bool)
        o.ahead = np.ones(m, dtype=bool)
        o.why = np.zeros(m, dtype=np.int8)
        o.win = self.win[src]
        o.check = o.win + 1
        o.n_alive = m
        return o


class _Done:
    """An attempt that ran ahead and ended: its iterations, how it ended (``conv``,
    ``trig``: slow or stalled, so the next restart follows, ``stall``: the last attempt
    stalled), and its best pose."""

    __slots__ = ("n", "kind", "err", "p", "f")

    def __init__(self, n, kind, err, p, f):
        self.n, self.kind, self.err, self.p, self.f = n, kind, err, p, f


class _Driver:
    """Iterates the working set until every pose has finished.

    Restarts run ahead: an attempt after a restart depends on nothing but its restart
    pose (fixed by the restart number), the targets and the root -- not on the attempts
    before it -- once the pose can no longer be straightened onto an arc. So when few
    poses are left, each pose that may still restart also runs its next attempts at
    once, as extra rows: the number of batch iterations then follows the longest
    attempt rather than the sum of them. When the lead attempt ends, the attempts that
    already ended are merged in order (iterations summed, the best pose by strict ``<``)
    exactly as if they had run one after the other, and the next running attempt
    becomes the lead; an attempt cut short by ``max_iter`` is run again as the lead, so
    that its best pose is that of the iterations before the cut.
    """

    def __init__(self, pl, k, out, s, tol, eps, max_iter, restarts):
        self.pl, self.k, self.out, self.s = pl, k, out, s
        self.tol, self.eps, self.max_iter, self.restarts = tol, eps, max_iter, restarts
        self.tol0, self.eps0 = np.array(tol), np.array(eps)  # 0-d: cheaper operands
        self.done: dict[int, dict[int, _Done]] = {}  # pose -> attempt -> result
        self.narc: dict[int, int] = {}  # arcs of the poses running ahead (fixed)
        self.next: dict[int, int] = {}  # their next attempt to start
        self.pending: list[_Rows] = []  # rows to append after this iteration
        self.reach_e = np.asarray(pl.reach_e)
        self.lim = self.reach_e[:, None] * (1.0 - 1e-6)
        effs = list(pl.effs)
        # the effector rows of ``(N, 3, B)`` arrays: a view for a single effector
        self.effs = slice(effs[0], effs[0] + 1) if len(effs) == 1 else effs
        self.it_hi = 0  # the most iterations of any row

    def run(self):
        with np.errstate(invalid="ignore", divide="ignore"):  # inf / inf after a restart
            self._run()
        self.s.flush(self.out)

    def _run(self):
        pl, s, out = self.pl, self.s, self.out
        while s.n_alive:
            dead = s.m - s.n_alive
            if dead and dead >= COMPACT * s.m + COMPACT_MIN:
                s.compact(out)  # finished rows are dropped only once they are worth a copy
            if self.it_hi >= self.max_iter:
                capped = s.lead & s.alive & (s.it >= self.max_iter)
                if _any(capped):
                    self._finish(capped, _CAP)
                    if not s.n_alive:
                        return
            if s.n_alive <= pl.scalar_tail:
                s.compact(out)
                self._finish_scalar()
                return
            if self.restarts and s.n_alive <= AHEAD_ROWS:
                self._spawn()
                self._append()
            self._step()

    def _append(self):
        for o in self.pending:
            self.s.append(o)
        self.pending = []

    # ------------------------------------------------------------------ one iteration
    def _step(self):
        pl, k, s = self.pl, self.k, self.s
        effs = self.effs
        t, root, p = s.t, s.root, s.p
        tv = t
        rho = s.err / s.prev  # inf or nan after a (re)start: no extrapolation
        acc = rho > _RHO_LO
        acc &= rho < _RHO_HI
        if _any(acc):  # virtual targets (acceleration)
            beta = np.minimum(rho / (_ONE - rho), _BETA_MAX)
            beta = np.where(acc, beta, _ZERO)
            x = t - p[effs]
            x *= beta
            x += t
            dv = x - root[None]
            dd = np.sqrt(_einsum("eib,eib->eb", dv, dv))
            over = dd > self.lim
            over &= acc
            if _any(over):
                x = np.where(
                    over[:, None, :],
                    root[None] + dv * (self.lim / np.where(over, dd, 1.0))[:, None, :],
                    x,
                )
            tv = x  # t itself where not accelerated (beta = 0)
        q = backward(pl, k, p, s.f, tv, s.dirv)
        fq = forward(pl, k, q, root, s.f)
        dq = q[effs] - t
        e = np.sqrt(_einsum("eib,eib->eb", dq, dq))
        dq = q[effs] - p[effs]
        moved = np.sqrt(_einsum("eib,eib->eb", dq, dq))
        if e.shape[0] == 1:
            e, moved = e[0], moved[0]
        else:
            e, moved = e.max(axis=0), moved.max(axis=0)
        alive = s.alive
        s.prev, s.err, s.p, s.f = s.err, e, q, fq
        s.since += 1
        s.it += alive
        self.it_hi += 1
        better = e < s.best_err
        better &= alive  # finished rows keep their result
        if _any(better):
            # in place: best_* are private copies (made at the start or by compaction)
            np.copyto(s.best_err, e, where=better)
            np.copyto(s.best_p, q, where=better)
            if fq is not None:
                np.copyto(s.best_f, fq, where=better)
        conv = e <= self.tol0
        conv &= alive
        np.minimum(s.att_best, e, out=s.att_best)
        since = s.since
        check = since == s.check
        slow = s.att_best > _SLOW * s.anchor
        slow &= check
        slow &= ~conv
        np.add(s.check, s.win, out=s.check, where=check)
        np.copyto(s.anchor, s.att_best, where=check)
        np.copyto(s.anchor, e, where=since == 1)
        act = moved < self.eps0  # stalled
        act &= ~conv
        stalled = act.copy()
        act |= slow
        act &= alive
        if self.it_hi >= self.max_iter:
            act &= ~(s.lead & (s.it >= self.max_iter))
        if _any(conv):
            lc = conv & s.lead
            if _any(lc):
                self._finish(lc, _CONV)
        if self.done:
            ends = ~s.lead & s.alive & (conv | (act & (stalled | (s.nrest < self.restarts))))
            if _any(ends):
                self._record(ends.nonzero()[0], conv)
        if _any(act):
            la = act & s.lead
            nxt = la & s.ahead
            if _any(nxt):
                for j in nxt.nonzero()[0]:
                    self._advance(j)
                la &= ~nxt
            if _any(la):
                self._act(la, slow, stalled)
        s.n_alive = int(_any(s.alive))
        if self.pending:
            self._append()

    # ------------------------------------------------------------------ pose endings
    def _finish(self, mask, why):
        """End the lead rows ``mask`` (output at the next flush) and drop the rows of
        their poses' attempts running ahead."""
        s = self.s
        s.alive &= ~mask
        s.why[mask] = why
        ah = mask & s.ahead
        if _any(ah):
            poses = s.rows[ah]
            if poses.size > 8:
                gone = np.isin(s.rows, poses)
            else:  # a few compares cost less than isin
                gone = s.rows == poses[0]
                for pose in poses[1:]:
                    gone |= s.rows == pose
            gone &= s.alive
            s.alive &= ~gone
            s.why[gone] = _GONE
            for pose in poses.tolist():
                self.done.pop(pose, None)
        s.n_alive = int(_any(s.alive))

    def _put(self, pose, best, it, reason, att):
        """Output ``pose`` with ``best = (err, p, f)`` and drop its rows."""
        out = self.out
        out.pos[pose] = best[1]
        if out.frames is not None:
            out.frames[..., pose] = best[2]
        out.err[pose] = best[0]
        out.iters[pose] = it
        out.reason[pose] = reason
        out.nrest[pose] = att + self.narc[pose]
        s = self.s
        gone = (s.rows == pose) & s.alive
        s.alive &= ~gone
        s.why[gone] = _GONE
        self.done.pop(pose, None)

    def _act(self, act, slow, stalled):
        """Arcs, restarts and stops of the lead rows ``act`` (slow or stalled) that run
        no attempts ahead."""
        pl, s = self.pl, self.s
        do_arc = act & slow & s.arc_far & (s.narc < C.MAX_ARCS)
        do_rest = act & ~do_arc & s.can_restart & (s.nrest < self.restarts)
        stop = act & ~do_arc & ~do_rest & stalled
        if _any(do_arc):
            js = do_arc.nonzero()[0]
            s.p[:, :, js] = arc(pl, _take(s.root, js), _take(s.t[0], js), _take(s.p, js))
            s.narc[js] += 1
            s.win[js] = np.where(s.narc[js] < C.MAX_ARCS, C.WINDOW_ARC, C.WINDOW)
        if _any(do_rest):
            js = do_rest.nonzero()[0]
            tp, tf = pl.restart_table()
            kk = pl.restart_indices(s.nrest[js])
            s.p[:, :, js] = tp[kk].transpose(1, 2, 0) + s.root[None, :, js]
            if s.f is not None:
                s.f[..., js] = tf[kk].transpose(1, 2, 3, 0)
            s.nrest[js] += 1
        reset = do_arc | do_rest
        if _any(reset):
            js = reset.nonzero()[0]
            s.since[js] = 0
            s.check[js] = s.win[js] + 1
            s.att_best[js] = np.inf
            s.prev[js] = np.inf
            s.err[js] = np.inf
        if _any(stop):
            self._finish(stop, _STALL)

    # ------------------------------------------------------------------ running ahead
    def _spawn(self):
        """Start the next attempts of the lead rows that may still restart (and can no
        longer be arced) as rows of their own."""
        s, restarts = self.s, self.restarts
        c = (
            s.alive
            & s.lead
            & ~s.ahead
            & s.can_restart
            & (s.nrest < restarts)
            & ~(s.arc_far & (s.narc < C.MAX_ARCS))
        )
        if not _any(c):
            return
        js = c.nonzero()[0]
        s.ahead[js] = True
        for j in js.tolist():
            pose = int(s.rows[j])
            self.done[pose] = {}
            self.narc[pose] = int(s.narc[j])
            self.next[pose] = int(s.nrest[j]) + 1
        self._more(js.tolist(), s.nrest[js].tolist())

    def _more(self, js, atts):
        """Start the attempts of the poses of rows ``js`` (leads at attempts ``atts``)
        up to ``AHEAD_DEPTH`` beyond their lead's."""
        s = self.s
        src, att = [], []
        for j, a in zip(js, atts, strict=True):
            pose = int(s.rows[j])
            first = self.next[pose]
            last = min(self.restarts, a + AHEAD_DEPTH)
            if last >= first:
                src += [j] * (last + 1 - first)
                att += list(range(first, last + 1))
                self.next[pose] = last + 1
        if src:
            self.pending.append(s.fresh(self.pl, src, att))

    def _record(self, js, conv):
        """Attempts running ahead that ended: keep their results for :meth:`_advance`."""
        s, restarts = self.s, self.restarts
        for j in js.tolist():
            pose, att = int(s.rows[j]), int(s.nrest[j])
            kind = "conv" if conv[j] else ("trig" if att < restarts else "stall")
            self.done[pose][att] = _Done(
                int(s.it[j]),
                kind,
                float(s.best_err[j]),
                s.best_p[:, :, j].copy(),
                None if s.best_f is None else s.best_f[..., j].copy(),
            )
            s.alive[j] = False
            s.why[j] = _GONE
            if kind == "conv":  # later attempts of this pose will never count
                gone = (s.rows == pose) & (s.nrest > att) & s.alive
                s.alive &= ~gone
                s.why[gone] = _GONE

    def _advance(self, j):
        """The lead row ``j`` ended its attempt with a restart to come: merge the later
        attempts that already ended, then make the next one the lead."""
        s, max_iter = self.s, self.max_iter
        pose, att, it = int(s.rows[j]), int(s.nrest[j]) + 1, int(s.it[j])
        best = (
            float(s.best_err[j]),
            s.best_p[:, :, j].copy(),
            None if s.best_f is None else s.best_f[..., j].copy(),
        )
        s.alive[j] = False
        s.why[j] = _GONE
        done = self.done[pose]
        while att in done and it + done[att].n <= max_iter:
            d = done.pop(att)
            if d.err < best[0]:
                best = (d.err, d.p, d.f)
            it += d.n
            if d.kind == "conv":
                self._put(pose, best, it, "converged", att)
                return
            if it >= max_iter:
                self._put(pose, best, it, "max_iter", att)
                return
            if d.kind == "stall":
                self._put(pose, best, it, "stalled", att)
                return
            att += 1
        done.pop(att, None)
        r = np.nonzero((s.rows == pose) & (s.nrest == att) & s.alive)[0]
        if r.size and it + s.it[r[0]] <= max_iter:  # running ahead: it becomes the lead
            r = int(r[0])
            s.lead[r] = True
            s.it[r] += it
            self.it_hi = max(self.it_hi, int(s.it[r]))
            s.ahead[r] = att < self.restarts
            if not s.best_err[r] < best[0]:
                s.best_err[r] = best[0]
                s.best_p[:, :, r] = best[1]
                if s.best_f is not None:
                    s.best_f[..., r] = best[2]
            self._more([r], [att])
            return
        # cut short by max_iter (or not started): run the attempt again as the lead
        if r.size:
            s.alive[r[0]] = False
            s.why[r[0]] = _GONE
        o = s.fresh(self.pl, [j], [att])
        o.lead[0] = True
        o.it[0] = it
        self.it_hi = max(self.it_hi, it)
        o.ahead[0] = att < self.restarts
        o.best_err[0] = best[0]
        o.best_p[:, :, 0] = best[1]
        if o.best_f is not None:
            o.best_f[..., 0] = best[2]
        self.pending.append(o)
        self._more([j], [att])

    # ------------------------------------------------------------------ scalar tail
    def _finish_scalar(self):
        """Hand each remaining pose's lead row to the scalar solver with its full
        state (attempts running ahead are dropped: the scalar code redoes them)."""
        pl, s, out = self.pl, self.s, self.out
        p, f, best_p, best_f, t, root, dirv = s.p, s.f, s.best_p, s.best_f, s.t, s.root, s.dirv
        for j in s.lead.nonzero()[0].tolist():
            pj = [tuple(x) for x in p[:, :, j].tolist()]
            fj = None if f is None else [tuple(tuple(c) for c in fv.T.tolist()) for fv in f[..., j]]
            st = S.State(pj, fj, float(s.err[j]))
            st.prev = float(s.prev[j])
            st.best_err = float(s.best_err[j])
            st.best_p = [tuple(x) for x in best_p[:, :, j].tolist()]
            st.best_f = (
                None
                if best_f is None
                else [tuple(tuple(c) for c in fv.T.tolist()) for fv in best_f[..., j]]
            )
            st.it = int(s.it[j])
            st.since = int(s.since[j])
            st.att_best = float(s.att_best[j])
            st.anchor = float(s.anchor[j])
            st.nrest = int(s.nrest[j])
            st.narc = int(s.narc[j])
            tj = [tuple(x) for x in t[:, :, j].tolist()]
            rj = tuple(root[:, j].tolist())
            dj = None if dirv is None else [tuple(x) for x in dirv[:, :, j].tolist()]
            S.run(pl, st, tj, rj, dj, self.tol, self.eps, self.max_iter, self.restarts, False)
            out.put_state(int(s.rows[j]), st)
        s.why[:] = _GONE


__all__ = ["solve_batch"]
