"""Scalar (pure Python float) FABRIK for one pose: the reference implementation.

For a single pose, per-bone numpy calls on 3-vectors cost more than the arithmetic, so
:func:`ik.fabrik` runs this module; :func:`ik.fabrik_batch` runs the same algorithm on
numpy arrays (``_fabrik_batch``) and hands its last few unfinished poses to
:func:`run` here. Vectors are 3-tuples; a frame is the tuple of its three columns.
The algorithm is described in :mod:`ik.fabrik`.
"""

from __future__ import annotations

import math

from . import _fabrik_plan as C
from ._fabrik_plan import Plan

_TWO_PI = 2.0 * math.pi
_I3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
INF = float("inf")


# ---------------------------------------------------------------------- small helpers
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _nrm(x, y, z):
    n = math.sqrt(x * x + y * y + z * z)
    if n > 1e-300:
        return (x / n, y / n, z / n)
    return (x, y, z)


def _mv(f, v):
    a, b, c = f
    x, y, z = v
    return (
        a[0] * x + b[0] * y + c[0] * z,
        a[1] * x + b[1] * y + c[1] * z,
        a[2] * x + b[2] * y + c[2] * z,
    )


def _mtv(f, v):
    a, b, c = f
    x, y, z = v
    return (
        a[0] * x + a[1] * y + a[2] * z,
        b[0] * x + b[1] * y + b[2] * z,
        c[0] * x + c[1] * y + c[2] * z,
    )


def _rod(v, k, c, s):
    """Rotate ``v`` about unit ``k`` by the angle with cosine ``c`` and sine ``s``."""
    kv = (k[0] * v[0] + k[1] * v[1] + k[2] * v[2]) * (1.0 - c)
    return (
        v[0] * c + (k[1] * v[2] - k[2] * v[1]) * s + k[0] * kv,
        v[1] * c + (k[2] * v[0] - k[0] * v[2]) * s + k[1] * kv,
        v[2] * c + (k[0] * v[1] - k[1] * v[0]) * s + k[2] * kv,
    )


def _minrot_frame(f, a, b, fallback):
    """Frame ``f`` rotated by the minimal rotation taking unit ``a`` to unit ``b``
    (``fallback``: unit axis perpendicular to ``a`` for the half-turn)."""
    w = _cross(a, b)
    c = _dot(a, b)
    if c > -1.0 + 1e-12:
        k = 1.0 / (1.0 + c)
        out = []
        for v in f:
            wv = _dot(w, v) * k
            out.append(
                (
                    v[0] * c + w[1] * v[2] - w[2] * v[1] + w[0] * wv,
                    v[1] * c + w[2] * v[0] - w[0] * v[2] + w[1] * wv,
                    v[2] * c + w[0] * v[1] - w[1] * v[0] + w[2] * wv,
                )
            )
        return tuple(out)
    return tuple(_rod(v, fallback, -1.0, 0.0) for v in f)


def _minrot_vec(v, a, b, fallback):
    w = _cross(a, b)
    c = _dot(a, b)
    if c > -1.0 + 1e-12:
        wv = _dot(w, v) / (1.0 + c)
        return (
            v[0] * c + w[1] * v[2] - w[2] * v[1] + w[0] * wv,
            v[1] * c + w[2] * v[0] - w[0] * v[2] + w[1] * wv,
            v[2] * c + w[0] * v[1] - w[1] * v[0] + w[2] * wv,
        )
    return _rod(v, fallback, -1.0, 0.0)


def _perp(a):
    """A unit vector perpendicular to unit ``a``."""
    if abs(a[0]) < 0.9:
        return _nrm(0.0, a[2], -a[1])  # a x (1, 0, 0)
    return _nrm(-a[2], 0.0, a[0])  # a x (0, 1, 0)


# ---------------------------------------------------------------------- constraints
def project(pl: Plan, v: int, lx, ly, lz):
    """Project the unit direction ``l`` (parent bone frame) of bone ``v`` onto its
    joint's direction constraint. Returns ``(l', violation [rad], cos, sin)`` where for a
    hinge ``cos, sin`` are those of the hinge angle, for a ball those of the swing."""
    r = pl.r[v]
    if pl.hinge[v]:
        ar = pl.ar[v]
        x = lx * r[0] + ly * r[1] + lz * r[2]
        y = lx * ar[0] + ly * ar[1] + lz * ar[2]
        h = math.sqrt(x * x + y * y)
        lim = pl.hlim[v]
        if h > 1e-300:
            c, s = x / h, y / h
        else:
            c, s = 1.0, 0.0
        exc = 0.0
        if lim is not None:
            th = math.atan2(s, c)
            if th < lim[0]:
                exc, c, s = lim[0] - th, lim[2], lim[3]
            elif th > lim[1]:
                exc, c, s = th - lim[1], lim[4], lim[5]
        lp = (c * r[0] + s * ar[0], c * r[1] + s * ar[1], c * r[2] + s * ar[2])
        a = pl.axis[v]
        z = lx * a[0] + ly * a[1] + lz * a[2]
        return lp, math.atan2(abs(z), h) + exc, c, s
    cone = pl.cone[v]
    c0 = lx * r[0] + ly * r[1] + lz * r[2]
    if cone is None:
        return (lx, ly, lz), 0.0, c0, None
    e1, e2 = pl.e1[v], pl.e2[v]
    c1 = lx * e1[0] + ly * e1[1] + lz * e1[2]
    c2 = lx * e2[0] + ly * e2[1] + lz * e2[2]
    s1 = c1 * c1
    s2 = c2 * c2
    h = math.sqrt(s1 + s2)
    if h <= 1e-300:
        return (lx, ly, lz), 0.0, c0, None
    # elliptical bound in the azimuth of l: 1 / sqrt(cos^2 / a1^2 + sin^2 / a2^2)
    bound = h / math.sqrt(
        s1 * (pl.icone[v][0] if c1 >= 0.0 else pl.icone[v][2])
        + s2 * (pl.icone[v][1] if c2 >= 0.0 else pl.icone[v][3])
    )
    phi = math.atan2(h, c0)
    if phi <= bound:
        return (lx, ly, lz), 0.0, c0, None
    cb = math.cos(bound)
    sb = math.sin(bound) / h
    lp = (
        cb * r[0] + sb * (c1 * e1[0] + c2 * e2[0]),
        cb * r[1] + sb * (c1 * e1[1] + c2 * e2[1]),
        cb * r[2] + sb * (c1 * e1[2] + c2 * e2[2]),
    )
    return lp, phi - bound, cb, None


def _viol(pl: Plan, c: int, l) -> float:
    return project(pl, c, l[0], l[1], l[2])[1]


def choose_twist(pl: Plan, v: int, cs, ls, lo: float, hi: float) -> float:
    """Extra twist [rad] of ball joint ``v`` about its bone, relative to its current
    frame (0 = keep it), within ``[lo, hi]``: the smallest that lets the constrained
    children ``cs`` point along ``ls`` (unit directions in the current frame).
    Candidates: 0, the ends of a twist range, and the twists that turn a child's
    direction into a plane of its constraint (hinge plane, cone axis planes); the
    least violation wins, ties going to the smaller turn."""
    r = pl.r[v]

    def score(t):
        ct, st = math.cos(t), math.sin(t)
        worst = 0.0
        for c, l in zip(cs, ls, strict=True):
            lt = l if t == 0.0 else _rod(l, r, ct, -st)  # l seen from the frame twisted by t
            vv = _viol(pl, c, lt)
            if vv > worst:
                worst = vv
        return worst

    s0 = score(0.0)
    if s0 <= C.TWIST_OK:
        return 0.0
    if pl.tw_axial[v]:
        return _axial_twist(pl, cs[0], ls[0], s0)
    cands = [lo, hi] if pl.twist[v] is not None else []
    for c, l in zip(cs, ls, strict=True):
        for a in pl.tw_normals[c]:
            # twists t with (Rot(r, -t) l) . a = 0: the child direction in that plane
            lr = _dot(l, r)
            ra = _dot(r, a)
            aa = _dot(l, a) - lr * ra
            bb = -_dot(_cross(r, l), a)
            cc = lr * ra
            rho = math.hypot(aa, bb)
            if rho > 1e-12:
                base = math.atan2(bb, aa)
                delta = math.acos(min(max(-cc / rho, -1.0), 1.0))
                for cand in (base + delta, base - delta):
                    t = (cand + math.pi) % _TWO_PI - math.pi
                    cands.append(min(max(t, lo), hi))
    best, best_s = 0.0, s0  # the first candidate of least score wins
    for t in cands:
        s = score(t) + C.TWIST_STAY * abs(t)
        if s < best_s:
            best, best_s = t, s
    return best


def _axial_twist(pl: Plan, c: int, l, s0: float) -> float:
    """:func:`choose_twist` when the twist only shifts the cone child's azimuth ``psi``
    (same rest direction, free twist): the candidates put ``psi`` on the cone's axes
    (0, pi/2, pi, -pi/2), where the bound is that axis's half-angle."""
    r, e1, e2 = pl.r[c], pl.e1[c], pl.e2[c]
    c1, c2 = _dot(l, e1), _dot(l, e2)
    phi = math.atan2(math.hypot(c1, c2), _dot(l, r))
    psi = math.atan2(c2, c1)
    cone = pl.cone[c]
    best, best_s = 0.0, s0
    for axis, half in (
        (0.0, cone[0]),
        (0.5 * math.pi, cone[1]),
        (math.pi, cone[2]),
        (-0.5 * math.pi, cone[3]),
    ):
        t = (psi - axis + math.pi) % _TWO_PI - math.pi
        s = max(phi - half, 0.0) + C.TWIST_STAY * abs(t)
        if s < best_s:
            best, best_s = t, s
    return best


# ---------------------------------------------------------------------- passes
def backward(pl: Plan, p, f, tv, dirv):
    """Backward pass from positions ``p`` (frames ``f`` of the last forward pass or
    None) toward targets ``tv``; returns the new node list."""
    q = list(p)
    n = pl.n
    par = pl.par
    lens = pl.lens
    acc = [None] * n
    for v in pl.bw_order:
        k = pl.eff_slot[v]
        if k >= 0:
            x = tv[k]
        else:
            s = acc[v]
            m = pl.cnt[v]
            x = (s[0] / m, s[1] / m, s[2] / m)
            if m > 1:
                x = _annulus(pl.branches[v], x, tv)
        q[v] = x
        pa = par[v]
        lv = lens[v]
        kd = pl.dir_slot[v]
        if kd >= 0:
            d = dirv[kd]
        else:
            b = p[pa]
            d = _nrm(x[0] - b[0], x[1] - b[1], x[2] - b[2])
            if f is not None and pl.bw_cch[v]:
                d = _bw_constrain(pl, v, x, d, f[v], q)
        y = (x[0] - lv * d[0], x[1] - lv * d[1], x[2] - lv * d[2])
        a = acc[pa]
        acc[pa] = y if a is None else (a[0] + y[0], a[1] + y[1], a[2] + y[2])
    return q


def _annulus(branches, x, tv):
    """Move a sub-base proposal into the reach annulus of every targeted branch."""
    for _ in range(3):
        for k, hi, lo in branches:
            t = tv[k]
            dx, dy, dz = x[0] - t[0], x[1] - t[1], x[2] - t[2]
            dd = math.sqrt(dx * dx + dy * dy + dz * dz)
            if dd > hi or dd < lo:
                s = (hi if dd > hi else lo) / max(dd, 1e-300)
                x = (t[0] + dx * s, t[1] + dy * s, t[2] + dz * s)
    return x


def _bw_constrain(pl: Plan, v: int, x, d, fo, q):
    """Direction of bone ``v`` (pointing at ``x``) turned so that its constrained
    children, already placed, satisfy their joint constraints relative to it.

    Bone ``v``'s frame is estimated as ``fo`` (last forward pass) turned by the minimal
    rotation from its old direction onto ``d``; each violated child constraint then
    turns that frame by the minimal rotation ``M`` taking the child's projected
    direction onto its actual one. In the frame's own coordinates: the other children
    ``l <- M^T l``, the bone direction ``b <- M b``."""
    r = pl.r[v]
    fe = _minrot_frame(fo, _nrm(*_mv(fo, r)), d, _mv(fo, pl.e2[v]))
    cs = pl.bw_cch[v]
    ls = []
    for c in cs:
        qc = q[c]
        ls.append(_mtv(fe, _nrm(qc[0] - x[0], qc[1] - x[1], qc[2] - x[2])))
    b = r
    turned = False
    for i, c in enumerate(cs):
        li = ls[i]
        lp, vio, _, _ = project(pl, c, li[0], li[1], li[2])
        if vio > 0.0:
            ax = _perp(lp)
            b = _minrot_vec(b, lp, li, ax)
            for j in range(i + 1, len(cs)):
                ls[j] = _minrot_vec(ls[j], li, lp, ax)
            turned = True
    if not turned:
        return d
    return _nrm(*_mv(fe, b))


def forward(pl: Plan, q, root, f_old, frames: bool | None = None):
    """Forward pass in place on ``q``; returns the frames (None for a tree without
    constraints, unless ``frames``). A ball joint's frame is its old frame ``f_old[v]``
    turned by the minimal rotation onto the new bone direction -- its twist is kept in
    space -- then its twist is clipped to the range and turned to suit its children.
    Without ``f_old`` (first pass) the twist starts at zero relative to the parent."""
    n = pl.n
    par = pl.par
    lens = pl.lens
    q[0] = root
    if not (pl.frames if frames is None else frames):
        for v in range(1, n):
            a = q[par[v]]
            b = q[v]
            ux, uy, uz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
            nn = math.sqrt(ux * ux + uy * uy + uz * uz)
            lv = lens[v] / nn if nn > 1e-300 else lens[v]
            q[v] = (a[0] + lv * ux, a[1] + lv * uy, a[2] + lv * uz)
        return None
    f = [_I3] * n
    for v in range(1, n):
        pa = par[v]
        a = q[pa]
        b = q[v]
        fp = f[pa]
        d = _nrm(b[0] - a[0], b[1] - a[1], b[2] - a[2])
        l = _mtv(fp, d)
        lp, _, cs, sn = project(pl, v, l[0], l[1], l[2])
        # unit vectors in, so that rounding errors of the frames do not compound
        w = _nrm(*_mv(fp, lp))
        lv = lens[v]
        xv = (a[0] + lv * w[0], a[1] + lv * w[1], a[2] + lv * w[2])
        r = pl.r[v]
        if pl.hinge[v]:
            ax = _nrm(*_mv(fp, pl.axis[v]))
            fv = tuple(_rod(col, ax, cs, sn) for col in fp)
        else:
            fo = fp if f_old is None else f_old[v]
            g = _minrot_frame(fo, _nrm(*_mv(fo, r)), w, _mv(fo, pl.e2[v]))
            lo, hi = -math.pi, math.pi
            tw = pl.twist[v]
            if tw is not None:
                # twist relative to the parent: from the zero-twist frame's e1 to g's
                e1 = pl.e1[v]
                z1 = _minrot_vec(_mv(fp, e1), _nrm(*_mv(fp, r)), w, _mv(fp, pl.e2[v]))
                g1 = _mv(g, e1)
                tau = math.atan2(_dot(_cross(z1, g1), w), _dot(z1, g1))
                tc = min(max(tau, tw[0]), tw[1])
                if tc != tau:
                    g = tuple(_rod(col, w, math.cos(tc - tau), math.sin(tc - tau)) for col in g)
                lo, hi = tw[0] - tc, tw[1] - tc
            cs = pl.cch[v]
            if cs:
                ls = []
                for c in cs:
                    qc = q[c]
                    ls.append(_mtv(g, _nrm(qc[0] - xv[0], qc[1] - xv[1], qc[2] - xv[2])))
                t = choose_twist(pl, v, cs, ls, lo, hi)
                if t != 0.0:
                    g = tuple(_rod(col, w, math.cos(t), math.sin(t)) for col in g)
            fv = g
        f[v] = fv
        q[v] = xv
    return f


# ---------------------------------------------------------------------- arcs
def arc(pl: Plan, root, t, p):
    """Chain nodes on a circular arc from ``root`` to ``t`` with the chain's bone
    lengths, bulging toward the current pose ``p`` (the straightening step)."""
    lens = pl.lens[1:]
    total = sum(lens)
    ux, uy, uz = t[0] - root[0], t[1] - root[1], t[2] - root[2]
    d = math.sqrt(ux * ux + uy * uy + uz * uz)
    u = (ux / d, uy / d, uz / d)
    n = pl.n
    mx = my = mz = 0.0
    for v in range(1, n - 1):
        mx += p[v][0] - root[0]
        my += p[v][1] - root[1]
        mz += p[v][2] - root[2]
    k = mx * u[0] + my * u[1] + mz * u[2]
    w = (mx - k * u[0], my - k * u[1], mz - k * u[2])
    wn = math.sqrt(_dot(w, w))
    if wn <= 1e-9 * total * (n - 2):
        w = _cross(u, (0.0, 0.0, 1.0))
        if _dot(w, w) < 1e-12:
            w = _cross(u, (0.0, 1.0, 0.0))
        wn = math.sqrt(_dot(w, w))
    w = (w[0] / wn, w[1] / wn, w[2] / wn)
    kap = arc_curvature(lens, total, d)
    out = [tuple(root)]
    if kap <= 0.0:
        acc = 0.0
        for ln in lens:
            acc += ln
            out.append((root[0] + acc * u[0], root[1] + acc * u[1], root[2] + acc * u[2]))
        return out
    rad = 1.0 / kap
    angs = [2.0 * math.asin(min(ln * kap * 0.5, 1.0)) for ln in lens]
    big = sum(angs)
    cx = root[0] + 0.5 * d * u[0] - rad * math.cos(0.5 * big) * w[0]
    cy = root[1] + 0.5 * d * u[1] - rad * math.cos(0.5 * big) * w[1]
    cz = root[2] + 0.5 * d * u[2] - rad * math.cos(0.5 * big) * w[2]
    phi = -0.5 * big
    for a in angs:
        phi += a
        s, c = rad * math.sin(phi), rad * math.cos(phi)
        out.append((cx + s * u[0] + c * w[0], cy + s * u[1] + c * w[1], cz + s * u[2] + c * w[2]))
    return out


ARC_NEWTON_STEPS = 16


def arc_curvature(lens, total, d):
    """Curvature of the circle through both chain ends whose chords are the bones:
    safeguarded Newton on the end-to-end chord, which falls from ``total`` as the
    curvature grows (start from the small-bend expansion
    ``chord = total - k^2 (total^3 - sum l^3) / 24``)."""
    if d >= total:
        return 0.0
    hi = 2.0 / max(lens)
    lo = 0.0
    cube = total**3 - sum(ln**3 for ln in lens)
    k = math.sqrt(24.0 * (total - d) / cube) if cube > 0.0 else 0.5 * hi
    if not 0.0 < k < hi:
        k = 0.5 * hi
    for _ in range(ARC_NEWTON_STEPS):
        big = 0.0
        der = 0.0
        for ln in lens:
            x = min(ln * k * 0.5, 1.0)
            big += 2.0 * math.asin(x)
            der += ln / math.sqrt(max(1.0 - x * x, 1e-300))
        if big > _TWO_PI:
            hi = k
            k = 0.5 * (lo + hi)
            continue
        chord = 2.0 / k * math.sin(0.5 * big)
        f = chord - d
        if abs(f) <= 1e-15 * total:
            break
        if f > 0.0:
            lo = k
        else:
            hi = k
        fp = (-chord + math.cos(0.5 * big) * der) / k
        kn = k - f / fp if fp < 0.0 else -1.0
        k = kn if lo <= kn <= hi else 0.5 * (lo + hi)
    return k


# ---------------------------------------------------------------------- driver
class State:
    """Everything one pose's solve carries between iterations (resumable)."""

    __slots__ = (
        "p",
        "f",
        "err",
        "prev",
        "best_err",
        "best_p",
        "best_f",
        "it",
        "since",
        "att_best",
        "anchor",
        "nrest",
        "narc",
        "reason",
        "hist",
    )

    def __init__(self, p, f, err):
        self.p = p
        self.f = f
        self.err = err
        self.prev = INF
        self.best_err = err
        self.best_p = p
        self.best_f = f
        self.it = 0
        self.since = 0  # iterations of the current attempt (since start, restart or arc)
        self.att_best = INF
        self.anchor = INF
        self.nrest = 0
        self.narc = 0
        self.reason = ""
        self.hist: list[float] = []


def _max_err(pl: Plan, q, t):
    e = 0.0
    for k, v in enumerate(pl.effs):
        a, b = q[v], t[k]
        d = math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2)
        if d > e:
            e = d
    return e


def start(pl: Plan, init, root, t):
    """Initial state: the starting pose after one forward (projection) pass."""
    q = list(init)
    f = forward(pl, q, root, None)
    return State(q, f, _max_err(pl, q, t))


def unreachable_chain(pl: Plan, root, t):
    """Straight chain toward a chain target at or beyond full reach (one iteration)."""
    dx, dy, dz = t[0] - root[0], t[1] - root[1], t[2] - root[2]
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist > 1e-300:
        dx, dy, dz = dx / dist, dy / dist, dz / dist
    q = [tuple(root)]
    acc = 0.0
    for v in range(1, pl.n):
        acc += pl.lens[v]
        q.append((root[0] + acc * dx, root[1] + acc * dy, root[2] + acc * dz))
    f = forward(pl, q, root, None)
    return q, f


def run(pl: Plan, st: State, t, root, dirv, tol, eps, max_iter, restarts, track):
    """Iterate ``st`` until it converges, stalls for good or reaches ``max_iter``."""
    effs = pl.effs
    ne = len(effs)
    reach_e = pl.reach_e
    can_restart = restarts > 0 and all(math.dist(t[k], root) <= reach_e[k] for k in range(ne))
    dist_t = math.dist(t[0], root) if pl.arc_ok else 0.0
    arc_far = pl.arc_ok and dist_t >= C.ARC_FRACTION * pl.reach
    while True:
        if st.err <= tol:
            st.reason = "converged"
            return st
        if st.it >= max_iter:
            st.reason = "max_iter"
            return st
        st.it += 1
        tv = t
        if st.since >= 1:
            rho = st.err / st.prev if st.prev > 0.0 else 0.0
            if C.ACCEL_RHO[0] < rho < C.ACCEL_RHO[1]:
                beta = min(rho / (1.0 - rho), C.ACCEL_MAX)
                tv = []
                for k, v in enumerate(effs):
                    tk, ek = t[k], st.p[v]
                    x = (
                        tk[0] + beta * (tk[0] - ek[0]),
                        tk[1] + beta * (tk[1] - ek[1]),
                        tk[2] + beta * (tk[2] - ek[2]),
                    )
                    dx, dy, dz = x[0] - root[0], x[1] - root[1], x[2] - root[2]
                    dd = math.sqrt(dx * dx + dy * dy + dz * dz)
                    lim = reach_e[k] * (1.0 - 1e-6)
                    if dd > lim:
                        s = lim / dd
                        x = (root[0] + dx * s, root[1] + dy * s, root[2] + dz * s)
                    tv.append(x)
        q = backward(pl, st.p, st.f, tv, dirv)
        f = forward(pl, q, root, st.f)
        e = _max_err(pl, q, t)
        moved = 0.0
        for v in effs:
            a, b = q[v], st.p[v]
            m = math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2)
            if m > moved:
                moved = m
        st.prev, st.err, st.p, st.f = st.err, e, q, f
        st.since += 1
        if track:
            st.hist.append(e)
        if e < st.best_err:
            st.best_err, st.best_p, st.best_f = e, q, f
        if e <= tol:
            continue
        if e < st.att_best:
            st.att_best = e
        w = C.WINDOW_ARC if (arc_far and st.narc < C.MAX_ARCS) else C.WINDOW
        slow = False
        if st.since == 1:
            st.anchor = e
        elif (st.since - 1) % w == 0:
            slow = st.att_best > C.SLOW * st.anchor
            st.anchor = st.att_best
        stalled = moved < eps
        if not (slow or stalled) or st.it >= max_iter:
            continue
        if slow and arc_far and st.narc < C.MAX_ARCS:
            st.p = arc(pl, root, t[0], st.p)
            st.narc += 1
        elif can_restart and st.nrest < restarts:
            pos, fr = pl.restart_table_py()
            k = pl.restart_index(
                [[a - b for a, b in zip(tk, root, strict=True)] for tk in t], st.nrest
            )
            st.p = [(x[0] + root[0], x[1] + root[1], x[2] + root[2]) for x in pos[k]]
            if st.f is not None:
                st.f = fr[k]
            st.nrest += 1
        elif stalled:
            st.reason = "stalled"
            return st
        else:
            continue
        st.since = 0
        st.att_best = INF
        st.prev = INF
        st.err = INF  # a restart or arc pose counts once an iteration has passed over it


# ---------------------------------------------------------------------- joint angles
def angles(pl: Plan, f, p) -> list[float]:
    """Joint coordinates from the frames of a forward pass."""
    out = [0.0] * pl.dof
    par = pl.par
    for v in range(1, pl.n):
        fp, fv = f[par[v]], f[v]
        o = pl.qoff[v]
        if pl.hinge[v]:
            r = pl.r[v]
            lc = _mtv(fp, _mv(fv, r))
            out[o] = math.atan2(_dot(lc, pl.ar[v]), _dot(lc, r))
            continue
        # R = fp^T fv, element (i, j) = fp[i] . fv[j]
        m = [[_dot(fp[i], fv[j]) for j in range(3)] for i in range(3)]
        out[o : o + 3] = _rotvec(m)
    return out


def _rotvec(m) -> list[float]:
    """Rotation vector of a rotation matrix given as nested rows (via a quaternion)."""
    tr = m[0][0] + m[1][1] + m[2][2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        w = 0.25 * s
        x = (m[2][1] - m[1][2]) / s
        y = (m[0][2] - m[2][0]) / s
        z = (m[1][0] - m[0][1]) / s
    elif m[0][0] > m[1][1] and m[0][0] > m[2][2]:
        s = math.sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2.0
        w = (m[2][1] - m[1][2]) / s
        x = 0.25 * s
        y = (m[0][1] + m[1][0]) / s
        z = (m[0][2] + m[2][0]) / s
    elif m[1][1] > m[2][2]:
        s = math.sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2.0
        w = (m[0][2] - m[2][0]) / s
        x = (m[0][1] + m[1][0]) / s
        y = 0.25 * s
        z = (m[1][2] + m[2][1]) / s
    else:
        s = math.sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2.0
        w = (m[1][0] - m[0][1]) / s
        x = (m[0][2] + m[2][0]) / s
        y = (m[1][2] + m[2][1]) / s
        z = 0.25 * s
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    nv = math.sqrt(x * x + y * y + z * z)
    if nv < 1e-300:
        return [0.0, 0.0, 0.0]
    k = 2.0 * math.atan2(nv, w) / nv
    return [k * x, k * y, k * z]
