"""Batched FABRIK: the algorithm of ``_fabrik_scalar`` on numpy arrays, many poses at once.

Layout: the batch axis is last and contiguous -- positions ``(N, 3, B)``, frames
``(N, 3, 3, B)`` (``F[v][:, j]`` is column ``j``), twists ``(N, B)`` -- so each per-bone
operation is one numpy call on contiguous rows. Finished poses leave the working set
(it is compacted as it shrinks), and once only a few poses are left they are finished by
the scalar solver, which is cheaper per pose than numpy calls on tiny arrays. Rare
events (straightening a chain onto an arc) also go through the scalar helpers, so both
implementations share their arithmetic.
"""

from __future__ import annotations

import numpy as np

try:  # the C einsum without the Python-level argument handling (same results)
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # pragma: no cover - other numpy layouts
    _einsum = np.einsum

from . import _fabrik_plan as C
from . import _fabrik_scalar as S
from ._fabrik_plan import Plan

_ROT1 = np.array([1, 2, 0])
_ROT2 = np.array([2, 0, 1])
_AXES = np.array([0.0, 0.5 * np.pi, np.pi, -0.5 * np.pi])[:, None]  # cone axis azimuths


# ---------------------------------------------------------------------- vector helpers
def _dot(a, b):
    return _einsum("ib,ib->b", a, b)


def _nrm(v):
    n = np.sqrt(_einsum("ib,ib->b", v, v))
    return v / np.maximum(n, 1e-300)


def _cross(a, b):
    return a[_ROT1] * b[_ROT2] - a[_ROT2] * b[_ROT1]


def _mv(f, v):
    return _einsum("ijb,jb->ib", f, v)


def _mtv(f, v):
    return _einsum("jib,jb->ib", f, v)


def _fc(f, k):
    """``F @ k`` for a constant vector ``k``: ``(3, B)``; ``k`` an int ``j`` stands for
    the unit vector along axis ``j`` (column ``j`` of ``F``: the same numbers, no call)."""
    if type(k) is int:
        return f[:, k]
    return _einsum("ijb,j->ib", f, k)


def _sel(a):
    """The selector :func:`_fc` takes for the constant vector ``a``."""
    if a is None:
        return None
    a = tuple(float(x) for x in a)
    for j in range(3):
        if a == tuple(1.0 if i == j else 0.0 for i in range(3)):
            return j
    return np.asarray(a)


def _rod(v, k, c, s):
    """Rotate ``v (3, B)`` about unit ``k`` (``(3, B)`` or ``(3, 1)``) by cosine/sine
    ``c, s (B,)``."""
    kv = (k * v).sum(axis=0) * (1.0 - c)
    return v * c + _cross(k, v) * s + k * kv


def _rod_frame(f, k, c, s):
    """Rotate every column of ``f (3, 3, B)`` about unit ``k (3, B)``."""
    kx = k[_ROT1, None] * f[_ROT2] - k[_ROT2, None] * f[_ROT1]
    kv = _einsum("ib,ijb->jb", k, f) * (1.0 - c)
    return f * c + kx * s + k[:, None, :] * kv


def _minrot_frame(f, a, b, fallback):
    """Columns of ``f`` rotated by the minimal rotation taking unit ``a`` to unit ``b``
    (``fallback()``: the axis for a half-turn)."""
    w = _cross(a, b)
    c = _dot(a, b)
    half = c <= -1.0 + 1e-12
    wx = w[_ROT1, None] * f[_ROT2] - w[_ROT2, None] * f[_ROT1]
    if half.any():
        wv = _einsum("ib,ijb->jb", w, f) / np.where(half, 1.0, 1.0 + c)
        out = f * c + wx + w[:, None, :] * wv
        alt = _rod_frame(f, fallback(), -np.ones_like(c), np.zeros_like(c))
        return np.where(half, alt, out)
    wv = _einsum("ib,ijb->jb", w, f) / (1.0 + c)
    return f * c + wx + w[:, None, :] * wv


def _minrot_vec(v, a, b, fallback):
    w = _cross(a, b)
    c = _dot(a, b)
    half = c <= -1.0 + 1e-12
    if half.any():
        wv = _dot(w, v) / np.where(half, 1.0, 1.0 + c)
        out = v * c + _cross(w, v) + w * wv
        fb = fallback() if callable(fallback) else fallback
        return np.where(half, _rod(v, fb, -np.ones_like(c), np.zeros_like(c)), out)
    wv = _dot(w, v) / (1.0 + c)
    return v * c + _cross(w, v) + w * wv


def _perp(a):
    x = np.stack((np.zeros_like(a[0]), a[2], -a[1]))
    y = np.stack((-a[2], np.zeros_like(a[0]), a[0]))
    return _nrm(np.where(np.abs(a[0]) < 0.9, x, y))


class _Consts:
    """numpy versions of the plan's per-node constants."""

    def __init__(self, pl: Plan):
        n = pl.n
        self.r = [np.asarray(pl.r[v]) for v in range(n)]
        self.rc = [np.asarray(pl.r[v])[:, None] for v in range(n)]
        self.e1 = [np.asarray(pl.e1[v]) for v in range(n)]
        self.e2 = [np.asarray(pl.e2[v]) for v in range(n)]
        # rows r, e1, e2: c = basisT @ l are the components of l in the joint basis
        self.basisT = [np.array([pl.r[v], pl.e1[v], pl.e2[v]]) for v in range(n)]
        self.basis = [b.T.copy() for b in self.basisT]
        self.axis = [None if a is None else np.asarray(a) for a in pl.axis]
        self.hplane = [None if a is None else np.array([pl.r[v], a]).T.copy()
                       for v, a in enumerate(pl.ar)]  # columns r, a x r
        self.hrows = [None if a is None else np.array([pl.r[v], a, pl.axis[v]])
                      for v, a in enumerate(pl.ar)]
        self.icone = pl.icone
        self.lens = pl.lens
        self.tw_normals = [tuple(np.asarray(a) for a in t) for t in pl.tw_normals]
        # selectors for _fc, and which joint bases are the identity (then the change of
        # basis in ``project`` is skipped: multiplying by 1 and adding 0 is exact)
        self.rs = [_sel(a) for a in pl.r]
        self.e1s = [_sel(a) for a in pl.e1]
        self.e2s = [_sel(a) for a in pl.e2]
        self.axs = [_sel(a) for a in pl.axis]
        self.half = [None if c is None else np.array([c[0], c[1], c[2], c[3]])[:, None]
                     for c in pl.cone]  # quadrant half-angles (4, 1)
        eye = np.eye(3)
        self.bid = [bool(np.array_equal(b, eye)) for b in self.basisT]
        self.hid = [h is not None and bool(np.array_equal(h, eye)) for h in self.hrows]
        self.rx = [np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
                   for r in pl.r]  # r x l = rx @ l


def _consts(pl: Plan) -> _Consts:
    c = getattr(pl, "_np", None)
    if c is None:
        c = pl._np = _Consts(pl)
    return c


# ---------------------------------------------------------------------- constraints
def project(pl: Plan, k: _Consts, v: int, l, want_viol: bool = True):
    """Batched :func:`_fabrik_scalar.project` of unit directions ``l (3, M)``:
    ``(l', violation or None, cos, sin)``; ``violation`` None means all zero."""
    if pl.hinge[v]:
        hid = k.hid[v]
        xyz = l if hid else k.hrows[v] @ l
        x, y = xyz[0], xyz[1]
        h = np.sqrt(x * x + y * y)
        hs = np.maximum(h, 1e-300)
        c = np.where(h > 1e-300, x / hs, 1.0)
        s = y / hs
        lim = pl.hlim[v]
        exc = 0.0
        if lim is not None:
            th = np.arctan2(s, c)
            low = th < lim[0]
            high = th > lim[1]
            if low.any() or high.any():
                exc = np.where(low, lim[0] - th, np.where(high, th - lim[1], 0.0))
                c = np.where(low, lim[2], np.where(high, lim[4], c))
                s = np.where(low, lim[3], np.where(high, lim[5], s))
        if hid:
            lp = np.empty((3,) + c.shape)
            lp[0] = c
            lp[1] = s
            lp[2] = 0.0
        else:
            lp = k.hplane[v] @ np.stack((c, s))
        vio = np.arctan2(np.abs(xyz[2]), h) + exc if want_viol else None
        return lp, vio, c, s
    ic = k.icone[v]
    if ic is None:
        return l, None, None, None
    bid = k.bid[v]
    cc = l if bid else k.basisT[v] @ l
    c0, c1, c2 = cc
    s1 = c1 * c1
    s2 = c2 * c2
    h = np.sqrt(s1 + s2)
    if ic[0] == ic[1] == ic[2] == ic[3]:  # circular cone: same arithmetic, no selects
        den = s1 * ic[0] + s2 * ic[0]
    else:
        den = s1 * np.where(c1 >= 0.0, ic[0], ic[2]) + s2 * np.where(c2 >= 0.0, ic[1], ic[3])
    bound = h / np.sqrt(np.maximum(den, 1e-300))
    phi = np.arctan2(h, c0)
    out = phi > bound
    if not out.any():
        return l, None, None, None
    out &= h > 1e-300  # on the axis (h == 0): never outside
    if not out.any():
        return l, None, None, None
    sb = np.sin(bound) / np.where(out, h, 1.0)
    lp = np.empty(cc.shape)
    np.cos(bound, out=lp[0])
    np.multiply(c1, sb, out=lp[1])
    np.multiply(c2, sb, out=lp[2])
    if not bid:
        lp = k.basis[v] @ lp
    return np.where(out, lp, l), np.where(out, phi - bound, 0.0), None, None


def choose_twist(pl: Plan, k: _Consts, v: int, cs, ls, lo, hi, pre=None):
    """Batched :func:`_fabrik_scalar.choose_twist`: ``ls`` unit child directions
    ``(3, B)`` in the current frame; ``lo, hi`` scalars or ``(B,)``. Returns the extra
    twists ``(B,)``, or None when no pose needs one. ``pre`` (if given) receives each
    child's projection at the current twist, for reuse when the twist is kept."""
    s0 = None
    for c, l in zip(cs, ls, strict=True):
        lp, vv, c_, s_ = project(pl, k, c, l)
        if pre is not None:
            pre[c] = (lp, c_, s_)
        if vv is not None:
            s0 = vv if s0 is None else np.maximum(s0, vv)
    if s0 is None:
        return None
    bad = s0 > C.TWIST_OK
    if not bad.any():
        return None
    if pre is not None:
        for c in cs:
            pre[c] = None
    sel = np.nonzero(bad)[0]
    m = sel.size
    if pl.tw_axial[v]:
        return _axial_twist(pl, k, cs[0], ls[0], s0, sel)
    lo_s = lo[sel] if np.ndim(lo) else lo
    hi_s = hi[sel] if np.ndim(hi) else hi
    r = k.rc[v]
    rv = k.r[v]
    ls = [l[:, sel] for l in ls]
    rls = [k.rx[v] @ l for l in ls]
    rdl = [rv @ l for l in ls]
    cands = []
    if pl.twist[v] is not None:
        cands += [np.broadcast_to(lo_s, (m,)), np.broadcast_to(hi_s, (m,))]
    for c, l, rl, rd in zip(cs, ls, rls, rdl, strict=True):
        for a in k.tw_normals[c]:
            ra = float(rv @ a)
            aa = a @ l - rd * ra
            bb = -(a @ rl)
            cc = rd * ra
            rho = np.hypot(aa, bb)
            okr = rho > 1e-12
            base = np.arctan2(bb, aa)
            delta = np.arccos(np.clip(-cc / np.where(okr, rho, 1.0), -1.0, 1.0))
            for cand in (base + delta, base - delta):
                t = np.minimum(np.maximum(np.remainder(cand + np.pi, 2.0 * np.pi) - np.pi,
                                          lo_s), hi_s)
                cands.append(np.where(okr, t, 0.0))  # no solution: same as keeping
    ct_ = np.stack(cands)  # (K, m)
    ct, st = np.cos(ct_), np.sin(ct_)
    worst = None
    for c, l, rl, rd in zip(cs, ls, rls, rdl, strict=True):
        lt = l[:, None, :] * ct - rl[:, None, :] * st + r[:, :, None] * (rd * (1.0 - ct))
        vv = project(pl, k, c, lt.reshape(3, -1))[1]
        if vv is None:
            continue
        vv = vv.reshape(ct_.shape)
        worst = vv if worst is None else np.maximum(worst, vv)
    sc = C.TWIST_STAY * np.abs(ct_)
    if worst is not None:
        sc = sc + worst
    allt = np.concatenate([np.zeros((1, m)), ct_])
    alls = np.concatenate([s0[sel][None], sc])
    j = np.argmin(alls, axis=0)  # the first candidate of least score wins
    out = np.zeros(s0.shape)
    out[sel] = allt[j, np.arange(m)]
    return out


def _axial_twist(pl: Plan, k: _Consts, c: int, l, s0, sel):
    """Batched :func:`_fabrik_scalar._axial_twist` for the rows ``sel``."""
    cc = l[:, sel] if k.bid[c] else k.basisT[c] @ l[:, sel]
    phi = np.arctan2(np.sqrt(cc[1] * cc[1] + cc[2] * cc[2]), cc[0])
    psi = np.arctan2(cc[2], cc[1])
    axes = _AXES
    half = k.half[c]
    t = np.remainder(psi - axes + np.pi, 2.0 * np.pi) - np.pi  # (4, m)
    sc = np.maximum(phi - half, 0.0) + C.TWIST_STAY * np.abs(t)
    allt = np.concatenate([np.zeros((1, sel.size)), t])
    alls = np.concatenate([s0[sel][None], sc])
    out = np.zeros(s0.shape)
    out[sel] = allt[np.argmin(alls, axis=0), np.arange(sel.size)]
    return out


# ---------------------------------------------------------------------- passes
def backward(pl: Plan, k: _Consts, p, f, tv, dirv):
    q = p.copy()
    acc = np.zeros_like(p)
    par = pl.par
    lens = pl.lens
    for v in pl.bw_order:
        e = pl.eff_slot[v]
        if e >= 0:
            x = tv[e]
        else:
            m = pl.cnt[v]
            x = acc[v] / m
            if m > 1:
                x = _annulus(pl.branches[v], x, tv)
        q[v] = x
        pa = par[v]
        kd = pl.dir_slot[v]
        if kd >= 0:
            d = dirv[kd]
        else:
            d = _nrm(x - p[pa])
            if f is not None and pl.bw_cch[v]:
                d = _bw_constrain(pl, k, v, x, d, f[v], q)
        acc[pa] += x - lens[v] * d
    return q


def _annulus(branches, x, tv):
    for _ in range(3):
        for e, hi, lo in branches:
            t = tv[e]
            rel = x - t
            dd = np.sqrt(_dot(rel, rel))
            out = (dd > hi) | (dd < lo)
            if out.any():
                s = np.where(dd > hi, hi, lo) / np.maximum(dd, 1e-300)
                x = np.where(out, t + rel * s, x)
    return x


def _bw_constrain(pl, k, v, x, d, fo, q):
    """Batched :func:`_fabrik_scalar._bw_constrain`."""
    fe = _minrot_frame(fo, _nrm(_fc(fo, k.rs[v])), d, lambda: _fc(fo, k.e2s[v]))
    cs = pl.bw_cch[v]
    ls = [_mtv(fe, _nrm(q[c] - x)) for c in cs]
    b = None
    turned = None
    for i, c in enumerate(cs):
        li = ls[i]
        lp, vio, _, _ = project(pl, k, c, li)
        if vio is None:
            continue
        bad = vio > 0.0
        if not bad.any():
            continue
        b0 = np.broadcast_to(k.rc[v], li.shape) if b is None else b
        b = np.where(bad, _minrot_vec(b0, lp, li, lambda lp=lp: _perp(lp)), b0)
        for j in range(i + 1, len(cs)):
            ls[j] = np.where(bad, _minrot_vec(ls[j], li, lp, lambda lp=lp: _perp(lp)), ls[j])
        turned = bad if turned is None else turned | bad
    if turned is None:
        return d
    return np.where(turned, _nrm(_mv(fe, b)), d)


def forward(pl: Plan, k: _Consts, q, root, f_old, frames: bool | None = None):
    """Batched :func:`_fabrik_scalar.forward` in place on ``q (N, 3, B)``; returns the
    frames ``(N, 3, 3, B)`` or None."""
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
    f[0] = np.eye(3)[:, :, None]
    pre: list = [None] * n  # projections computed while choosing the parent's twist
    for v in range(1, n):
        pa = par[v]
        a = q[pa]
        fp = f[pa]
        if pre[v] is not None:
            lp, cs, sn = pre[v]
        else:
            l = _mtv(fp, _nrm(q[v] - a))
            lp, _, cs, sn = project(pl, k, v, l, want_viol=False)
        w = _nrm(_mv(fp, lp))
        xv = a + lens[v] * w
        if pl.hinge[v]:
            g = _rod_frame(fp, _nrm(_fc(fp, k.axs[v])), cs, sn)
        else:
            fo = fp if f_old is None else f_old[v]
            g = _minrot_frame(fo, _nrm(_fc(fo, k.rs[v])), w, lambda fo=fo, v=v: _fc(fo, k.e2s[v]))
            lo = -np.pi
            hi = np.pi
            tw = pl.twist[v]
            if tw is not None:
                z1 = _minrot_vec(_fc(fp, k.e1s[v]), _nrm(_fc(fp, k.rs[v])), w,
                                 lambda fp=fp, v=v: _fc(fp, k.e2s[v]))
                g1 = _fc(g, k.e1s[v])
                tau = np.arctan2(_dot(_cross(z1, g1), w), _dot(z1, g1))
                tc = np.minimum(np.maximum(tau, tw[0]), tw[1])
                dt = tc - tau
                if dt.any():
                    g = _rod_frame(g, w, np.cos(dt), np.sin(dt))
                lo, hi = tw[0] - tc, tw[1] - tc
            cch = pl.cch[v]
            if cch:
                t = choose_twist(pl, k, v, cch, [_mtv(g, _nrm(q[c] - xv)) for c in cch], lo, hi,
                                 pre)
                if t is not None:
                    g = _rod_frame(g, w, np.cos(t), np.sin(t))
        f[v] = g
        q[v] = xv
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
    out[1:] = c[None] + (rad * np.sin(phi))[:, None, :] * u[None] + (
        rad * np.cos(phi))[:, None, :] * w[None]
    if straight.any():
        cum = np.cumsum(lens)
        st = root[None] + cum[:, None, None] * u[None]
        out[1:] = np.where(straight, st, out[1:])
    return out


def arc_curvature(lens, total, d):
    """Batched :func:`_fabrik_scalar.arc_curvature` for distances ``d (J,)``."""
    hi = np.full(d.shape, 2.0 / lens.max())
    lo = np.zeros(d.shape)
    cube = total ** 3 - float(np.sum(lens ** 3))
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
    """Frames ``(B, N, 3, 3)`` of free-tree poses ``pos (B, N, 3)`` (minimal rotations)."""
    q = np.ascontiguousarray(pos.transpose(1, 2, 0))
    f = forward(pl, _consts(pl), q, q[0].copy(), None, frames=True)
    return f.transpose(3, 0, 1, 2)


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
        self.frames = np.zeros((bsz, pl.n, 3, 3)) if pl.frames else None
        self.err = np.zeros(bsz)
        self.iters = np.zeros(bsz, dtype=int)
        self.reason = np.empty(bsz, dtype=object)
        self.nrest = np.zeros(bsz, dtype=int)

    def put_rows(self, rows, best_p, best_f, best_err, it, reason, nrest):
        self.pos[rows] = best_p.transpose(2, 0, 1)
        if self.frames is not None:
            self.frames[rows] = best_f.transpose(3, 0, 1, 2)
        self.err[rows] = best_err
        self.iters[rows] = it
        self.reason[rows] = reason
        self.nrest[rows] = nrest

    def put_state(self, row, st):
        self.pos[row] = st.best_p
        if self.frames is not None:
            self.frames[row] = np.array(st.best_f).transpose(0, 2, 1)
        self.err[row] = st.best_err
        self.iters[row] = st.it
        self.reason[row] = st.reason
        self.nrest[row] = st.nrest + st.narc


def solve_batch(pl: Plan, t3, init3, root3, dirv, tol, eps, max_iter, restarts):
    """Solve ``B`` poses. ``t3 (B, E, 3)``, ``init3 (B, N, 3)``, ``root3 (B, 3)``,
    ``dirv (B, D, 3)`` or None. Returns positions ``(B, N, 3)``, frames ``(B, N, 3, 3)``
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
        out.put_rows(rows, p[:, :, rows], None if f is None else f[..., rows], err[rows],
                     0, "converged", 0)
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
            out.put_rows(rows, qf, ff, ef, 1, np.where(ef <= tol, "converged", "unreachable"),
                         0)
            done |= far
    work = np.nonzero(~done)[0]
    if work.size:
        _iterate(pl, k, out, work, p[:, :, work], None if f is None else f[..., work],
                 err[work], t_all[:, :, work],
                 r_all[:, work], None if d_all is None else d_all[:, :, work],
                 dist0[work], reach_e, tol, eps, max_iter, restarts)
    return out.pos, out.frames, out.err, out.iters, out.reason.astype(str), out.nrest


def _iterate(pl, k, out, rows, p, f, err, t, root, dirv, dist0, reach_e, tol, eps,
             max_iter, restarts):
    m = rows.size
    inf = np.inf
    prev = np.full(m, inf)
    best_err = err.copy()
    best_p = p.copy()
    best_f = None if f is None else f.copy()
    since = np.zeros(m, dtype=int)
    att_best = np.full(m, inf)
    anchor = np.full(m, inf)
    nrest = np.zeros(m, dtype=int)
    narc = np.zeros(m, dtype=int)
    rel = t - root[None]
    can_restart = (restarts > 0) & np.all(np.sqrt(_einsum("eib,eib->eb", rel, rel))
                                          <= reach_e[:, None], axis=0)
    arc_far = (pl.arc_ok & (dist0 >= C.ARC_FRACTION * pl.reach)) if pl.arc_ok else np.zeros(
        m, dtype=bool)
    it = 0
    effs = list(pl.effs)
    while m:
        if it >= max_iter:
            out.put_rows(rows, best_p, best_f, best_err, it, "max_iter", nrest + narc)
            return
        if m <= pl.scalar_tail:
            _finish_scalar(pl, out, rows, p, f, err, prev, best_err, best_p, best_f,
                           it, since, att_best, anchor, nrest, narc, t, root, dirv, tol,
                           eps, max_iter, restarts)
            return
        it += 1
        # virtual targets (acceleration)
        tv = t
        with np.errstate(invalid="ignore"):  # inf / inf right after a restart: no extrapolation
            rho = np.where(prev > 0.0, err / np.where(prev > 0.0, prev, 1.0), 0.0)
        acc = (since >= 1) & (rho > C.ACCEL_RHO[0]) & (rho < C.ACCEL_RHO[1])
        if acc.any():
            beta = np.where(acc, np.minimum(rho / np.where(acc, 1.0 - rho, 1.0), C.ACCEL_MAX),
                            0.0)
            x = t + beta * (t - p[effs])
            dv = x - root[None]
            dd = np.sqrt(_einsum("eib,eib->eb", dv, dv))
            lim = reach_e[:, None] * (1.0 - 1e-6)
            over = dd > lim
            x = np.where(over[:, None, :], root[None] + dv * (lim / np.where(over, dd, 1.0))[
                :, None, :], x)
            tv = np.where(acc, x, t)
        q = backward(pl, k, p, f, tv, dirv)
        fq = forward(pl, k, q, root, f)
        e = _max_err(pl, q, t)
        mv = q[effs] - p[effs]
        moved = np.sqrt(_einsum("eib,eib->eb", mv, mv)).max(axis=0)
        prev, err, p, f = err, e, q, fq
        since += 1
        better = e < best_err
        if better.any():
            # in place: best_* are private copies (made at the start or by compaction)
            np.copyto(best_err, e, where=better)
            np.copyto(best_p, q, where=better)
            if f is not None:
                np.copyto(best_f, f, where=better)
        conv = e <= tol
        att_best = np.minimum(att_best, e)
        w = np.where(arc_far & (narc < C.MAX_ARCS), C.WINDOW_ARC, C.WINDOW)
        first = since == 1
        check = ~first & ((since - 1) % w == 0)
        slow = check & (att_best > C.SLOW * anchor) & ~conv
        anchor = np.where(first, e, np.where(check, att_best, anchor))
        stalled = (moved < eps) & ~conv
        act = (slow | stalled) & (it < max_iter)
        fin = conv.copy()
        if act.any():
            do_arc = act & slow & arc_far & (narc < C.MAX_ARCS)
            do_rest = act & ~do_arc & can_restart & (nrest < restarts)
            stop = act & ~do_arc & ~do_rest & stalled
            fin |= stop
            reset = do_arc | do_rest
            if do_arc.any():
                js = np.nonzero(do_arc)[0]
                p[:, :, js] = arc(pl, root[:, js], t[0][:, js], p[:, :, js])
                narc = narc + do_arc
            if do_rest.any():
                tp, tf = pl.restart_table()
                js = np.nonzero(do_rest)[0]
                kk = np.array([pl.restart_index((t[:, :, j] - root[None, :, j]).tolist(),
                                                int(nrest[j])) for j in js])
                p[:, :, js] = tp[kk].transpose(1, 2, 0) + root[None, :, js]
                if f is not None:
                    f[..., js] = tf[kk].transpose(1, 2, 3, 0)
                nrest = nrest + do_rest
            since = np.where(reset, 0, since)
            att_best = np.where(reset, inf, att_best)
            prev = np.where(reset, inf, prev)
            err = np.where(reset, inf, err)
            if stop.any():
                js = np.nonzero(stop)[0]
                out.put_rows(rows[js], best_p[:, :, js],
                             None if best_f is None else best_f[..., js], best_err[js], it,
                             "stalled", nrest[js] + narc[js])
        if conv.any():
            js = np.nonzero(conv)[0]
            out.put_rows(rows[js], best_p[:, :, js],
                         None if best_f is None else best_f[..., js], best_err[js], it,
                         "converged", nrest[js] + narc[js])
        if fin.any():
            keep = np.nonzero(~fin)[0]
            rows = rows[keep]
            m = rows.size
            if not m:
                return
            p, err, prev, best_err, best_p = p[:, :, keep], err[keep], prev[keep], \
                best_err[keep], best_p[:, :, keep]
            if f is not None:
                f, best_f = f[..., keep], best_f[..., keep]
            since, att_best, anchor = since[keep], att_best[keep], anchor[keep]
            nrest, narc = nrest[keep], narc[keep]
            t, root = t[:, :, keep], root[:, keep]
            if dirv is not None:
                dirv = dirv[:, :, keep]
            can_restart, arc_far = can_restart[keep], arc_far[keep]


def _finish_scalar(pl, out, rows, p, f, err, prev, best_err, best_p, best_f, it, since,
                   att_best, anchor, nrest, narc, t, root, dirv, tol, eps, max_iter,
                   restarts):
    """Hand the remaining poses to the scalar solver with their full state."""
    for j, row in enumerate(rows):
        pj = [tuple(x) for x in p[:, :, j].tolist()]
        fj = None if f is None else [tuple(tuple(c) for c in fv.T.tolist())
                                     for fv in f[..., j]]
        st = S.State(pj, fj, float(err[j]))
        st.prev = float(prev[j])
        st.best_err = float(best_err[j])
        st.best_p = [tuple(x) for x in best_p[:, :, j].tolist()]
        st.best_f = None if best_f is None else [tuple(tuple(c) for c in fv.T.tolist())
                                                 for fv in best_f[..., j]]
        st.it = it
        st.since = int(since[j])
        st.att_best = float(att_best[j])
        st.anchor = float(anchor[j])
        st.nrest = int(nrest[j])
        st.narc = int(narc[j])
        tj = [tuple(x) for x in t[:, :, j].tolist()]
        rj = tuple(root[:, j].tolist())
        dj = None if dirv is None else [tuple(x) for x in dirv[:, :, j].tolist()]
        S.run(pl, st, tj, rj, dj, tol, eps, max_iter, restarts, False)
        out.put_state(row, st)


__all__ = ["solve_batch"]
