"""Scalar (pure Python float) FABRIK for one chain: the fast path of :func:`ik.fabrik`.

For a single pose of a serial chain, per-bone numpy calls on 3-vectors cost more than
the arithmetic; this module does the same computation as the batched numpy core in
``fabrik.py`` (same passes, constraint projections, twist rule and stopping rules) on
Python floats. Vectors are 3-tuples; frames are stored as their three columns.
"""

from __future__ import annotations

import math

from .chain import Chain

_TWO_PI = 2.0 * math.pi


def _rot(ax, ang):
    """Columns of the rotation about unit ``ax`` by ``ang`` (Rodrigues)."""
    x, y, z = ax
    c = math.cos(ang)
    s = math.sin(ang)
    t = 1.0 - c
    return (
        (c + t * x * x, t * x * y + s * z, t * x * z - s * y),
        (t * x * y - s * z, c + t * y * y, t * y * z + s * x),
        (t * x * z + s * y, t * y * z - s * x, c + t * z * z),
    )


def _mat_apply(cols, v):
    a, b, c = cols
    return (
        a[0] * v[0] + b[0] * v[1] + c[0] * v[2],
        a[1] * v[0] + b[1] * v[1] + c[1] * v[2],
        a[2] * v[0] + b[2] * v[1] + c[2] * v[2],
    )


def _mat_t_apply(cols, v):
    a, b, c = cols
    return (
        a[0] * v[0] + a[1] * v[1] + a[2] * v[2],
        b[0] * v[0] + b[1] * v[1] + b[2] * v[2],
        c[0] * v[0] + c[1] * v[1] + c[2] * v[2],
    )


def _mat_mul(f, r):
    return (_mat_apply(f, r[0]), _mat_apply(f, r[1]), _mat_apply(f, r[2]))


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _quat_rotvec(phi, ax, tau, r):
    """Rotation vector of rot(ax, phi) @ rot(r, tau)."""
    ch, sh = math.cos(0.5 * phi), math.sin(0.5 * phi)
    ct, st = math.cos(0.5 * tau), math.sin(0.5 * tau)
    w1, v1 = ch, (sh * ax[0], sh * ax[1], sh * ax[2])
    w2, v2 = ct, (st * r[0], st * r[1], st * r[2])
    w = w1 * w2 - _dot(v1, v2)
    cr = _cross(v1, v2)
    v = (w1 * v2[0] + w2 * v1[0] + cr[0], w1 * v2[1] + w2 * v1[1] + cr[1],
         w1 * v2[2] + w2 * v1[2] + cr[2])
    if w < 0.0:
        w, v = -w, (-v[0], -v[1], -v[2])
    n = math.sqrt(_dot(v, v))
    if n < 1e-300:
        return [2.0 * v[0], 2.0 * v[1], 2.0 * v[2]]
    k = 2.0 * math.atan2(n, w) / n
    return [k * v[0], k * v[1], k * v[2]]


class ScalarPlan:
    """Per-chain constants as Python floats (built once per chain object)."""

    def __init__(self, chain: Chain):
        n = chain.n_nodes
        self.n = n
        self.lens = [float(x) for x in chain._len]
        self.reach = float(sum(self.lens))
        self.joints = chain.joints
        self.r = [tuple(float(x) for x in chain._rhat[v]) for v in range(n)]
        self.e1 = [tuple(float(x) for x in chain._basis[v][:, 1]) for v in range(n)]
        self.e2 = [tuple(float(x) for x in chain._basis[v][:, 2]) for v in range(n)]
        self.axis = [None] * n
        self.ar = [None] * n
        for v in range(1, n):
            j = self.joints[v]
            if j.kind == "hinge":
                a = tuple(float(x) for x in j.axis)
                self.axis[v] = a
                self.ar[v] = _cross(a, self.r[v])
        cons = [False] * (n + 1)
        for v in range(n - 1, 0, -1):
            j = self.joints[v]
            free_2d = chain.dim == 2 and j.limits is None
            cons[v] = cons[v + 1] or (j.constrained and not free_2d)
        # frames are needed from bone v on if any later joint is constrained
        self.need_frames = cons
        self.constrained = cons[1]
        self.hinge_child = [
            v + 1 if v + 1 < n and self.joints[v + 1].kind == "hinge" else 0 for v in range(n)
        ]
        self.qoff = [int(x) for x in chain._qoff]
        self.dof = chain.dof


def _twist_for_hinge(pl: ScalarPlan, v, c, rs, lnew, rel, twist):
    r = pl.r[v]
    lv = pl.lens[v]
    g = (rel[0] - lv * lnew[0], rel[1] - lv * lnew[1], rel[2] - lv * lnew[2])
    g = _mat_t_apply(rs, g)
    a = pl.axis[c]
    k = _dot(a, r)
    a_par = (k * r[0], k * r[1], k * r[2])
    a_perp = (a[0] - a_par[0], a[1] - a_par[1], a[2] - a_par[2])
    ca = _dot(g, a_par)
    aa = _dot(g, a_perp)
    bb = _dot(g, _cross(r, a_perp))
    rho = math.hypot(aa, bb)
    base = math.atan2(bb, aa)
    x = -ca / (rho if rho > 1e-12 else 1.0)
    delta = math.acos(min(max(x, -1.0), 1.0))
    gn = max(math.sqrt(_dot(g, g)), 1e-300)
    jc = pl.joints[c]
    rc = pl.r[c]
    arc = pl.ar[c]
    best = best_score = None
    for cand in (base + delta, base - delta):
        t = (cand + math.pi) % _TWO_PI - math.pi if rho > 1e-12 else 0.0
        if twist is not None:
            t = min(max(t, twist[0]), twist[1])
        miss = abs(ca + rho * math.cos(t - base)) / gn
        score = abs(t) + 100.0 * miss
        if jc.limits is not None:
            gl = _mat_t_apply(_rot(r, t), g)
            th = math.atan2(_dot(gl, arc), _dot(gl, rc))
            score += 10.0 * max(jc.limits[0] - th, th - jc.limits[1], 0.0)
        if best is None or score < best_score - 1e-12:
            best, best_score = t, score
    return best


def _forward(pl: ScalarPlan, q: list, root, want_q: bool):
    """Forward pass in place on node list ``q``; returns joint coordinates if asked."""
    lens = pl.lens
    n = pl.n
    q[0] = root
    out = [0.0] * pl.dof if want_q else None
    f = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    for v in range(1, n):
        p = q[v - 1]
        cur = q[v]
        dx, dy, dz = cur[0] - p[0], cur[1] - p[1], cur[2] - p[2]
        nn = math.sqrt(dx * dx + dy * dy + dz * dz)
        if nn > 1e-300:
            dx, dy, dz = dx / nn, dy / nn, dz / nn
        if not pl.need_frames[v] and not want_q:
            lv = lens[v]
            q[v] = (p[0] + lv * dx, p[1] + lv * dy, p[2] + lv * dz)
            continue
        j = pl.joints[v]
        loc = _mat_t_apply(f, (dx, dy, dz))
        r = pl.r[v]
        if j.kind == "hinge":
            a, ar = pl.axis[v], pl.ar[v]
            th = math.atan2(_dot(loc, ar), _dot(loc, r))
            if j.limits is not None:
                th = min(max(th, j.limits[0]), j.limits[1])
            c, s = math.cos(th), math.sin(th)
            lnew = (c * r[0] + s * ar[0], c * r[1] + s * ar[1], c * r[2] + s * ar[2])
            rot = _rot(a, th)
            if want_q:
                out[pl.qoff[v]] = th
        else:
            e1, e2 = pl.e1[v], pl.e2[v]
            c0, c1, c2 = _dot(loc, r), _dot(loc, e1), _dot(loc, e2)
            phi = math.atan2(math.hypot(c1, c2), c0)
            psi = math.atan2(c2, c1)
            cp, sp = math.cos(psi), math.sin(psi)
            if j.cone is not None:
                cone = j.cone
                a1 = cone[0] if cp >= 0.0 else cone[2]
                a2 = cone[1] if sp >= 0.0 else cone[3]
                bound = 1.0 / math.sqrt((cp / a1) ** 2 + (sp / a2) ** 2)
                if bound < phi:
                    phi = bound
            ax = (-sp * e1[0] + cp * e2[0], -sp * e1[1] + cp * e2[1], -sp * e1[2] + cp * e2[2])
            rs = _rot(ax, phi)
            lnew = _mat_apply(rs, r)
            tau = 0.0
            if j.twist is not None:
                tau = min(max(0.0, j.twist[0]), j.twist[1])
            c = pl.hinge_child[v]
            if c:
                rel = _mat_t_apply(f, (q[c][0] - p[0], q[c][1] - p[1], q[c][2] - p[2]))
                tau = _twist_for_hinge(pl, v, c, rs, lnew, rel, j.twist)
            rot = _mat_mul(rs, _rot(r, tau)) if tau != 0.0 else rs
            if want_q:
                o = pl.qoff[v]
                if tau != 0.0:
                    out[o : o + 3] = _quat_rotvec(phi, ax, tau, r)
                else:
                    out[o : o + 3] = [phi * ax[0], phi * ax[1], phi * ax[2]]
        w = _mat_apply(f, lnew)
        lv = lens[v]
        q[v] = (p[0] + lv * w[0], p[1] + lv * w[1], p[2] + lv * w[2])
        f = _mat_mul(f, rot)
    return out


def solve_chain(pl: ScalarPlan, target, init, root, tol, eps, max_iter, want_q):
    """One chain pose. ``target``, ``root``: 3-tuples; ``init``: list of 3-tuples.
    Returns ``(positions list, q list or None, iterations, error, reason, history)``."""
    n = pl.n
    lens = pl.lens
    tx, ty, tz = target
    p = list(init)
    moved_root = p[0] != root
    e = p[-1]
    err = math.sqrt((e[0] - tx) ** 2 + (e[1] - ty) ** 2 + (e[2] - tz) ** 2)
    hist: list[float] = []
    if err <= tol and not moved_root:
        return p, None, 0, err, "converged", hist
    dx, dy, dz = tx - root[0], ty - root[1], tz - root[2]
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dist >= pl.reach:
        if dist > 1e-300:
            dx, dy, dz = dx / dist, dy / dist, dz / dist
        q = [root]
        acc = 0.0
        for v in range(1, n):
            acc += lens[v]
            q.append((root[0] + acc * dx, root[1] + acc * dy, root[2] + acc * dz))
        qq = _forward(pl, q, root, want_q) if (pl.constrained or want_q) else None
        e = q[-1]
        err = math.sqrt((e[0] - tx) ** 2 + (e[1] - ty) ** 2 + (e[2] - tz) ** 2)
        return q, qq, 1, err, ("converged" if err <= tol else "unreachable"), hist
    it = 0
    reason = "max_iter"
    qq = None
    while it < max_iter:
        it += 1
        q = list(p)
        q[n - 1] = (tx, ty, tz)
        for v in range(n - 1, 0, -1):
            a = q[v]
            b = p[v - 1]
            ux, uy, uz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
            nn = math.sqrt(ux * ux + uy * uy + uz * uz)
            lv = lens[v] / nn if nn > 1e-300 else lens[v]
            q[v - 1] = (a[0] + lv * ux, a[1] + lv * uy, a[2] + lv * uz)
        if pl.constrained:
            qq = _forward(pl, q, root, False)
        else:
            q[0] = root
            for v in range(1, n):
                a = q[v - 1]
                b = q[v]
                ux, uy, uz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
                nn = math.sqrt(ux * ux + uy * uy + uz * uz)
                lv = lens[v] / nn if nn > 1e-300 else lens[v]
                q[v] = (a[0] + lv * ux, a[1] + lv * uy, a[2] + lv * uz)
        e = q[-1]
        err = math.sqrt((e[0] - tx) ** 2 + (e[1] - ty) ** 2 + (e[2] - tz) ** 2)
        o = p[-1]
        moved = math.sqrt((e[0] - o[0]) ** 2 + (e[1] - o[1]) ** 2 + (e[2] - o[2]) ** 2)
        p = q
        hist.append(err)
        if err <= tol:
            reason = "converged"
            break
        if moved < eps:
            reason = "stalled"
            break
    if want_q:
        # the positions are final; recover q with one more (idempotent) forward pass
        q = list(p)
        qq = _forward(pl, q, root, True)
        p = q
    return p, qq, it, err, reason, hist
