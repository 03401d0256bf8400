"""Kinematic model: :class:`Tree` (several end effectors) and :class:`Chain` (one).

Model and frames
----------------
Nodes are joint positions, node 0 is the root; every other node ``v`` ends one bone that
starts at ``parents[v] < v``. Bone ``v`` has a rest vector ``offsets[v]`` [length] in the
frame of its parent bone (the root frame for children of the root); at rest every frame
is the root frame, which is the world frame (the root is translated by ``root``, never
rotated). The joint at the start of bone ``v`` rotates it by ``R_v`` relative to the parent
bone frame: ``F_v = F_parent @ R_v`` and ``p_v = p_parent + F_v @ offsets[v]``.

Joint coordinates ``q`` (a flat vector, :attr:`Tree.dof` long, in node order):
hinges take one angle [rad] about their axis (given in the parent bone frame); ball joints
take a rotation vector [rad] in the parent bone frame. 2-D chains are hinges about +z.

Constraints (all angles in radians):
  * hinge limits ``(lo, hi)`` on the hinge angle;
  * cone: the swing of the bone away from its rest direction is at most an elliptical
    bound with half-angles ``(a_+e1, a_+e2, a_-e1, a_-e2)``, one per quadrant, where
    ``(e1, e2)`` complete the rest direction to a right-handed basis (``+y, +z`` for a bone
    along ``+x``); the bound in azimuth ``psi`` is
    ``1 / sqrt(cos(psi)^2 / a1^2 + sin(psi)^2 / a2^2)`` (swing measured as an angle);
  * twist ``(lo, hi)`` about the bone (swing-twist decomposition).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ._rot import axis_angle, exp_so3, log_so3
from ._validate import as_points
from .errors import BoneLengthError, ConstraintError, IKError, ShapeError

__all__ = ["Joint", "Tree", "Chain"]

_Z = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class Joint:
    """One joint (at the start of a bone). Immutable; build with the ``with_*`` methods.

    Attributes:
        kind: ``"ball"`` (3 DOF) or ``"hinge"`` (1 DOF).
        axis: hinge axis, unit, in the parent bone frame (perpendicular to the bone).
        limits: hinge angle range ``(lo, hi)`` [rad] or None.
        cone: elliptical swing half-angles ``(+e1, +e2, -e1, -e2)`` [rad] or None.
        twist: twist range ``(lo, hi)`` [rad] about the bone, or None.
    """

    kind: str = "ball"
    axis: tuple[float, float, float] | None = None
    limits: tuple[float, float] | None = None
    cone: tuple[float, float, float, float] | None = None
    twist: tuple[float, float] | None = None

    @property
    def dof(self) -> int:
        return 1 if self.kind == "hinge" else 3

    @property
    def constrained(self) -> bool:
        """True if the joint restricts the bone direction beyond a free ball."""
        if self.kind == "hinge":
            return True
        return self.cone is not None or self.twist is not None


def _range(lo: float, hi: float, name: str, bound: float) -> tuple[float, float]:
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi or lo < -bound or hi > bound:
        raise ConstraintError(
            f"{name} must satisfy -{bound:.4g} <= lo <= hi <= {bound:.4g}, got ({lo}, {hi})"
        )
    return lo, hi


class Tree:
    """A kinematic tree of bones with one or more end effectors.

    Args:
        parents: ``(N,)`` parent node of each node; ``parents[0] == -1`` and
            ``parents[v] < v``.
        offsets: ``(N, dim)`` rest bone vectors [length] (row 0 ignored); bone ``v`` goes
            from ``parents[v]`` to ``v``.
        root: root position ``(dim,)`` [length, world]; default origin.
        joints: optional ``N`` :class:`Joint` (entry 0 ignored); default free ball joints
            (hinges about +z in 2-D).
        names: optional ``N`` hashable node names, usable wherever a node is asked for.

    Use :meth:`from_points` to build from rest positions of the nodes.
    """

    def __init__(
        self,
        parents: Sequence[int],
        offsets: np.ndarray,
        root: np.ndarray | None = None,
        joints: Sequence[Joint | None] | None = None,
        names: Sequence[Hashable] | None = None,
    ) -> None:
        par = np.array(parents, dtype=int).reshape(-1)
        n = par.size
        if n < 2:
            raise ShapeError("a tree needs at least one bone (two nodes)")
        if par[0] != -1 or np.any(par[1:] < 0) or np.any(par[1:] >= np.arange(1, n)):
            raise ShapeError("parents must have parents[0] == -1 and 0 <= parents[v] < v")
        off = np.array(offsets, dtype=float)
        if off.ndim != 2 or off.shape[0] != n or off.shape[1] not in (2, 3):
            raise ShapeError(f"offsets must have shape ({n}, 2 or 3), got {off.shape}")
        if not np.all(np.isfinite(off)):
            raise BoneLengthError("offsets contain NaN or infinity")
        dim = off.shape[1]
        off[0] = 0.0
        lens = np.linalg.norm(off, axis=1)
        bad = np.nonzero(lens[1:] <= 1e-12 * max(1.0, lens.max()))[0]
        if bad.size:
            raise BoneLengthError(f"zero-length bone(s) ending at node(s) {list(bad + 1)}")
        self._dim = dim
        self._parents = par
        self._off = off
        self._len = lens
        off3 = np.zeros((n, 3))
        off3[:, :dim] = off
        self._off3 = off3
        rhat = np.zeros((n, 3))
        rhat[1:] = off3[1:] / lens[1:, None]
        self._rhat = rhat
        basis = np.zeros((n, 3, 3))
        basis[0] = np.eye(3)
        for v in range(1, n):
            r = rhat[v]
            e1 = np.cross(_Z, r)
            if np.linalg.norm(e1) < 1e-9:
                e1 = np.array([0.0, 1.0, 0.0]) - r[1] * r
            e1 /= np.linalg.norm(e1)
            basis[v] = np.stack([r, e1, np.cross(r, e1)], axis=1)
        self._basis = basis
        self.root = np.zeros(dim) if root is None else as_points(root, dim, "root").reshape(dim)
        if joints is None:
            joints = [None] * n
        if len(joints) != n:
            raise ShapeError(f"joints must have {n} entries, got {len(joints)}")
        default = Joint("hinge", (0.0, 0.0, 1.0)) if dim == 2 else Joint()
        self._joints = tuple([None] + [default if j is None else j for j in joints[1:]])
        if names is not None:
            names = tuple(names)
            if len(names) != n or len(set(names)) != n:
                raise ShapeError(f"names must be {n} distinct labels")
        self._names = names
        children: list[list[int]] = [[] for _ in range(n)]
        for v in range(1, n):
            children[par[v]].append(v)
        self._children = tuple(tuple(c) for c in children)
        dofs = [0] + [j.dof for j in self._joints[1:]]
        self._qoff = np.concatenate([[0], np.cumsum(dofs)]).astype(int)
        for v in range(1, n):
            self._check_joint(v, self._joints[v])

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_points(
        cls,
        points: np.ndarray,
        parents: Sequence[int],
        names: Sequence[Hashable] | None = None,
    ) -> Tree:
        """Tree whose rest pose has the nodes at ``points (N, dim)`` (node 0 = root)."""
        pts = np.array(points, dtype=float)
        par = np.array(parents, dtype=int)
        if pts.ndim != 2 or pts.shape[0] != par.size:
            raise ShapeError(f"points must have shape ({par.size}, dim), got {pts.shape}")
        off = np.zeros_like(pts)
        off[1:] = pts[1:] - pts[np.maximum(par[1:], 0)]
        return cls(par, off, root=pts[0], names=names)

    def _copy(self, **changes) -> Tree:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__.pop("_scalar_plan", None)  # derived caches belong to the old object
        new.__dict__.pop("_cache", None)
        new.__dict__.update(changes)
        return new

    def _node(self, key: Hashable) -> int:
        """Node index of a bone given by node name or index (the bone ending there)."""
        if self._names is not None and key in self._names:
            return self._names.index(key)
        if isinstance(key, int | np.integer) and 1 <= int(key) < self.n_nodes:
            return int(key)
        valid = self._names[1:] if self._names is not None else f"1..{self.n_nodes - 1}"
        raise ConstraintError(f"unknown node {key!r}; valid: {valid}")

    def _check_joint(self, v: int, j: Joint) -> None:
        if j.kind not in ("ball", "hinge"):
            raise ConstraintError(f"joint kind must be 'ball' or 'hinge', got {j.kind!r}")
        if self._dim == 2 and (j.kind != "hinge" or j.cone is not None or j.twist is not None):
            raise ConstraintError("2-D chains have hinge joints about +z only (use with_limits)")
        if j.kind == "hinge":
            a = np.asarray(j.axis, dtype=float)
            if abs(float(a @ self._rhat[v])) > 1e-9:
                raise ConstraintError(
                    f"hinge axis {tuple(a)} of the bone ending at node {v} must be "
                    f"perpendicular to its rest direction {tuple(self._rhat[v])}"
                )

    def _with_joint(self, v: int, j: Joint) -> Tree:
        self._check_joint(v, j)
        joints = list(self._joints)
        joints[v] = j
        dofs = [0] + [jj.dof for jj in joints[1:]]
        qoff = np.concatenate([[0], np.cumsum(dofs)]).astype(int)
        return self._copy(_joints=tuple(joints), _qoff=qoff)

    def with_root(self, root: np.ndarray) -> Tree:
        """Copy with the root at ``root`` [length, world]."""
        return self._copy(root=as_points(root, self._dim, "root").reshape(self._dim))

    def with_hinge(
        self, joint: Hashable, axis: np.ndarray, limits: tuple[float, float] | None = None
    ) -> Tree:
        """Copy with a hinge about ``axis`` (parent bone frame) and optional limits [rad]."""
        v = self._node(joint)
        a = np.array(axis, dtype=float).reshape(-1)
        if a.size == 2:
            a = np.append(a, 0.0)
        if a.size != 3 or not np.all(np.isfinite(a)) or np.linalg.norm(a) == 0.0:
            raise ConstraintError(f"hinge axis must be a nonzero 3-vector, got {axis!r}")
        a = a / np.linalg.norm(a)
        lim = None if limits is None else _range(*limits, "hinge limits", np.pi)
        return self._with_joint(v, Joint("hinge", tuple(float(x) for x in a), lim))

    def with_limits(self, joint: Hashable, lo: float, hi: float) -> Tree:
        """Copy with hinge angle limits ``[lo, hi]`` [rad] (the joint must be a hinge)."""
        v = self._node(joint)
        j = self._joints[v]
        if j.kind != "hinge":
            raise ConstraintError(f"joint {joint!r} is a ball joint; use with_cone/with_twist")
        return self._with_joint(v, replace(j, limits=_range(lo, hi, "hinge limits", np.pi)))

    def with_cone(self, joint: Hashable, half_angles: float | Sequence[float]) -> Tree:
        """Copy with an elliptical cone limit (ball joint): one half-angle or four
        ``(+e1, +e2, -e1, -e2)`` [rad], each in ``(0, pi]``."""
        v = self._node(joint)
        h = (
            np.broadcast_to(np.asarray(half_angles, dtype=float), (4,))
            if np.ndim(half_angles) == 0
            else np.asarray(half_angles, dtype=float)
        )
        if h.shape != (4,) or not np.all((h > 0.0) & (h <= np.pi)):
            raise ConstraintError(f"cone half-angles must be 1 or 4 values in (0, pi], got {h}")
        j = self._joints[v]
        if j.kind != "ball":
            j = Joint()
        return self._with_joint(v, replace(j, cone=tuple(float(x) for x in h)))

    def with_twist(self, joint: Hashable, lo: float, hi: float) -> Tree:
        """Copy with a twist range ``[lo, hi]`` [rad] about the bone (ball joint)."""
        v = self._node(joint)
        j = self._joints[v]
        if j.kind != "ball":
            j = Joint()
        return self._with_joint(v, replace(j, twist=_range(lo, hi, "twist limits", np.pi)))

    def with_ball(self, joint: Hashable) -> Tree:
        """Copy with a free ball joint."""
        return self._with_joint(self._node(joint), Joint())

    # ------------------------------------------------------------------ properties
    @property
    def dim(self) -> int:
        """Spatial dimension (2 or 3)."""
        return self._dim

    @property
    def n_nodes(self) -> int:
        return self._parents.size

    @property
    def n_bones(self) -> int:
        return self._parents.size - 1

    @property
    def parents(self) -> np.ndarray:
        return self._parents.copy()

    @property
    def lengths(self) -> np.ndarray:
        """Bone lengths [length], one per bone (nodes 1..N-1)."""
        return self._len[1:].copy()

    @property
    def joints(self) -> tuple[Joint | None, ...]:
        """Joint of the bone ending at each node (entry 0 is None)."""
        return self._joints

    @property
    def names(self) -> tuple[Hashable, ...] | None:
        return self._names

    @property
    def effectors(self) -> tuple[int, ...]:
        """Leaf nodes (end effectors)."""
        return tuple(v for v in range(1, self.n_nodes) if not self._children[v])

    @property
    def is_chain(self) -> bool:
        return bool(np.all(self._parents[1:] == np.arange(self.n_nodes - 1)))

    @property
    def dof(self) -> int:
        """Length of the joint-coordinate vector ``q``."""
        return int(self._qoff[-1])

    @property
    def constrained(self) -> bool:
        return any(j.constrained for j in self._joints[1:]) and not (
            self._dim == 2 and all(j.limits is None for j in self._joints[1:])
        )

    def _cached(self, key: str, make):
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            cache[key] = make()
        return cache[key]

    @property
    def reach(self) -> float:
        """Longest root-to-node path length [length]."""

        def make() -> float:
            acc = np.zeros(self.n_nodes)
            for v in range(1, self.n_nodes):
                acc[v] = acc[self._parents[v]] + self._len[v]
            return float(acc.max())

        return self._cached("reach", make)

    def q_slice(self, joint: Hashable) -> slice:
        v = self._node(joint)
        return slice(int(self._qoff[v]), int(self._qoff[v + 1]))

    def rest_positions(self) -> np.ndarray:
        """Node positions ``(N, dim)`` at rest (all joint rotations identity)."""
        return self._cached("rest", lambda: self.forward(np.zeros(self.dof))).copy()

    def node_index(self, key: Hashable) -> int:
        """Index of a node given by name or index (0 = root allowed)."""
        if self._names is not None and key in self._names:
            return self._names.index(key)
        if isinstance(key, int | np.integer) and 0 <= int(key) < self.n_nodes:
            return int(key)
        raise ShapeError(f"unknown node {key!r}")

    # ------------------------------------------------------------------ kinematics
    def _q(self, q: np.ndarray) -> np.ndarray:
        a = np.array(q, dtype=float)
        if a.shape[-1:] != (self.dof,):
            raise ShapeError(f"q must have shape (..., {self.dof}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise IKError("q contains NaN or infinity")
        return a

    def _local_rot(self, v: int, qv: np.ndarray) -> np.ndarray:
        j = self._joints[v]
        if j.kind == "hinge":
            return axis_angle(np.asarray(j.axis), qv[..., 0])
        return exp_so3(qv)

    def frames(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World frames and positions: ``(F (..., N, 3, 3), P (..., N, 3))`` (3-D internally)."""
        q = self._q(q)
        batch = q.shape[:-1]
        n = self.n_nodes
        f = np.empty(batch + (n, 3, 3))
        p = np.empty(batch + (n, 3))
        f[..., 0, :, :] = np.eye(3)
        p[..., 0, :] = 0.0
        p[..., 0, : self._dim] = self.root
        for v in range(1, n):
            pa = self._parents[v]
            r = self._local_rot(v, q[..., self._qoff[v] : self._qoff[v + 1]])
            f[..., v, :, :] = f[..., pa, :, :] @ r
            p[..., v, :] = p[..., pa, :] + f[..., v, :, :] @ self._off3[v]
        return f, p

    def forward(self, q: np.ndarray) -> np.ndarray:
        """Node positions ``(..., N, dim)`` [length, world] for joint coordinates ``q``."""
        return self.frames(q)[1][..., : self._dim]

    def jacobian(
        self,
        q: np.ndarray,
        effectors: Iterable[Hashable] | None = None,
        orientation: bool = False,
    ) -> np.ndarray:
        """Jacobian of effector positions (and frame orientations) w.r.t. ``q``.

        Columns are derivatives along the tangent directions used by :meth:`integrate`
        (hinge angle; for a ball joint a small rotation ``exp(d) @ R_v`` with ``d`` in the
        parent bone frame). Rows: per effector ``dim`` position rows [length/rad], then,
        if ``orientation``, the world angular velocity (3 rows; 1 in 2-D) [rad/rad].
        Shape ``(E * rows, dof)`` for a single ``q``.
        """
        q = self._q(q)
        if q.ndim != 1:
            raise ShapeError("jacobian takes a single q of shape (dof,)")
        effs = self.effectors if effectors is None else tuple(self.node_index(e) for e in effectors)
        f, p = self.frames(q)
        rows = []
        for e in effs:
            jp = np.zeros((3, self.dof))
            jw = np.zeros((3, self.dof))
            v = e
            while v > 0:
                pa = self._parents[v]
                j = self._joints[v]
                s = slice(self._qoff[v], self._qoff[v + 1])
                if j.kind == "hinge":
                    w = f[pa] @ np.asarray(j.axis)
                    w = w[:, None]
                else:
                    w = f[pa]
                jw[:, s] = w
                jp[:, s] = np.cross(w.T, p[e] - p[pa]).T
                v = pa
            rows.append(jp[: self._dim])
            if orientation:
                rows.append(jw[2:3] if self._dim == 2 else jw)
        return np.concatenate(rows, axis=0)

    def integrate(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """New ``q`` after a tangent step ``dq`` (see :meth:`jacobian`); inputs unchanged."""
        q = self._q(q)
        dq = self._q(dq)
        out = q + dq
        for v in range(1, self.n_nodes):
            if self._joints[v].kind == "ball":
                s = slice(self._qoff[v], self._qoff[v + 1])
                out[..., s] = log_so3(exp_so3(dq[..., s]) @ exp_so3(q[..., s]))
        return out

    # ------------------------------------------------------------------ constraints
    def _cone_bound(self, v: int, psi: np.ndarray) -> np.ndarray:
        cone = self._joints[v].cone
        c, s = np.cos(psi), np.sin(psi)
        a1 = np.where(c >= 0.0, cone[0], cone[2])
        a2 = np.where(s >= 0.0, cone[1], cone[3])
        return 1.0 / np.sqrt((c / a1) ** 2 + (s / a2) ** 2)

    def _swing(self, v: int, l_local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Swing angle and azimuth of a unit direction in the parent frame."""
        c = l_local @ self._basis[v]
        phi = np.arctan2(np.hypot(c[..., 1], c[..., 2]), c[..., 0])
        psi = np.arctan2(c[..., 2], c[..., 1])
        return phi, psi

    def _swing_matrix(self, v: int, phi: np.ndarray, psi: np.ndarray) -> np.ndarray:
        b = self._basis[v]
        ax = -np.sin(psi)[..., None] * b[:, 1] + np.cos(psi)[..., None] * b[:, 2]
        return axis_angle(ax, phi)

    def _hinge_child(self, v: int) -> int:
        """First child of node ``v`` whose joint is a hinge (0 if none)."""
        for c in self._children[v]:
            if self._joints[c].kind == "hinge":
                return c
        return 0

    def _twist_for_hinge(self, v, c, rs, lnew, child_rel, twist) -> np.ndarray:
        """Twist of ball joint ``v`` that puts the hinge plane of child ``c`` through the
        child bone (``child_rel``: child node minus parent node, parent frame), nearest 0
        among the in-limit solutions, preferring one with the hinge angle in its limits."""
        r = self._rhat[v]
        g = child_rel - self._len[v] * lnew
        g = np.einsum("bji,bj->bi", rs, g)  # into the swing frame
        jc = self._joints[c]
        a = np.asarray(jc.axis)
        a_par = (a @ r) * r
        a_perp = a - a_par
        ca = g @ a_par
        aa = g @ a_perp
        bb = g @ np.cross(r, a_perp)
        rho = np.hypot(aa, bb)
        base = np.arctan2(bb, aa)
        delta = np.arccos(np.clip(-ca / np.where(rho > 1e-12, rho, 1.0), -1.0, 1.0))
        best = None
        best_score = None
        rc = self._rhat[c]
        arc = np.cross(a, rc)
        for cand in (base + delta, base - delta):
            t = np.remainder(cand + np.pi, 2.0 * np.pi) - np.pi
            t = np.where(rho > 1e-12, t, 0.0)
            if twist is not None:
                t = np.clip(t, twist[0], twist[1])
            # distance of the hinge plane from the child bone (nonzero only when clipped)
            miss = np.abs(ca + rho * np.cos(t - base)) / np.maximum(
                np.linalg.norm(g, axis=-1), 1e-300
            )
            score = np.abs(t) + 100.0 * miss
            if jc.limits is not None:
                gl = np.einsum("bji,bj->bi", axis_angle(r, t), g)
                th = np.arctan2(gl @ arc, gl @ rc)
                score = score + 10.0 * np.maximum(
                    np.maximum(jc.limits[0] - th, th - jc.limits[1]), 0.0
                )
            if best is None:
                best, best_score = t, score
            else:
                pick = score < best_score - 1e-12
                best = np.where(pick, t, best)
                best_score = np.where(pick, score, best_score)
        return best

    def _place(
        self,
        v: int,
        l_local: np.ndarray,
        constrain: bool,
        want_q: bool = True,
        child_rel: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Joint rotation putting bone ``v`` along unit ``l_local (B, 3)`` (parent frame),
        projected onto the joint's constraints if ``constrain``. The twist of a ball joint
        is 0 clipped to its range, unless ``v`` has a hinge child and ``child_rel`` (that
        child's node minus ``v``'s parent node, parent frame) is given: then the twist
        turns the hinge plane through the child bone (see :meth:`_twist_for_hinge`).
        Returns ``(l_new (B,3), R_v (B,3,3), q_v (B,dof) or None)``."""
        j = self._joints[v]
        r = self._rhat[v]
        if j.kind == "hinge":
            a = np.asarray(j.axis)
            ar = np.cross(a, r)
            th = np.arctan2(l_local @ ar, l_local @ r)
            if constrain and j.limits is not None:
                th = np.clip(th, j.limits[0], j.limits[1])
            lnew = np.cos(th)[:, None] * r + np.sin(th)[:, None] * ar
            return lnew, axis_angle(a, th), (th[:, None] if want_q else None)
        phi, psi = self._swing(v, l_local)
        if constrain and j.cone is not None:
            phi = np.minimum(phi, self._cone_bound(v, psi))
        rs = self._swing_matrix(v, phi, psi)
        lnew = rs @ r
        tau = 0.0
        if constrain and j.twist is not None:
            tau = float(np.clip(0.0, j.twist[0], j.twist[1]))
        c = self._hinge_child(v)
        if c and child_rel is not None:
            tau = self._twist_for_hinge(v, c, rs, lnew, child_rel, j.twist)
            rot = rs @ axis_angle(r, tau)
            return lnew, rot, (log_so3(rot) if want_q else None)
        if tau != 0.0:
            rot = rs @ axis_angle(r, np.full(phi.shape, tau))
            return lnew, rot, (log_so3(rot) if want_q else None)
        if want_q:
            b = self._basis[v]
            ax = -np.sin(psi)[..., None] * b[:, 1] + np.cos(psi)[..., None] * b[:, 2]
            return lnew, rs, phi[:, None] * ax
        return lnew, rs, None

    def _decompose(self, v: int, rot: np.ndarray):
        """Swing angle, azimuth and twist of ball-joint rotations ``(..., 3, 3)``."""
        r = self._rhat[v]
        b = self._basis[v]
        phi, psi = self._swing(v, rot @ r)
        m = np.swapaxes(self._swing_matrix(v, phi, psi), -1, -2) @ rot
        me1 = m @ b[:, 1]
        tau = np.arctan2(me1 @ b[:, 2], me1 @ b[:, 1])
        return phi, psi, tau

    def _clamp_rot(self, v: int, rot: np.ndarray) -> np.ndarray:
        """Project ball-joint rotations ``(..., 3, 3)`` onto the cone and twist limits."""
        j = self._joints[v]
        if j.cone is None and j.twist is None:
            return rot
        phi, psi, tau = self._decompose(v, rot)
        if j.cone is not None:
            phi = np.minimum(phi, self._cone_bound(v, psi))
        if j.twist is not None:
            tau = np.clip(tau, j.twist[0], j.twist[1])
        return self._swing_matrix(v, phi, psi) @ axis_angle(self._rhat[v], tau)

    def clamp(self, q: np.ndarray) -> np.ndarray:
        """Copy of ``q`` projected onto the joint limits."""
        out = self._q(q)
        for v in range(1, self.n_nodes):
            j = self._joints[v]
            s = slice(self._qoff[v], self._qoff[v + 1])
            if j.kind == "hinge":
                if j.limits is not None:
                    out[..., s] = np.clip(out[..., s], j.limits[0], j.limits[1])
            elif j.cone is not None or j.twist is not None:
                out[..., s] = log_so3(self._clamp_rot(v, exp_so3(out[..., s])))
        return out

    def violation(self, q: np.ndarray) -> np.ndarray:
        """Largest constraint violation [rad] of ``q`` (0 when every limit holds)."""
        q = self._q(q)
        worst = np.zeros(q.shape[:-1])
        for v in range(1, self.n_nodes):
            j = self._joints[v]
            s = slice(self._qoff[v], self._qoff[v + 1])
            if j.kind == "hinge":
                if j.limits is not None:
                    th = q[..., s][..., 0]
                    worst = np.maximum(worst, np.maximum(j.limits[0] - th, th - j.limits[1]))
                continue
            if j.cone is None and j.twist is None:
                continue
            phi, psi, tau = self._decompose(v, exp_so3(q[..., s]))
            if j.cone is not None:
                worst = np.maximum(worst, phi - self._cone_bound(v, psi))
            if j.twist is not None:
                worst = np.maximum(worst, np.maximum(j.twist[0] - tau, tau - j.twist[1]))
        return np.maximum(worst, 0.0)

    def position_violation(self, positions: np.ndarray) -> np.ndarray:
        """Largest constraint violation [rad] of a pose given by node positions (the
        bone directions; twist taken as the in-range value nearest 0)."""
        q = self.angles_from_positions(positions, constrain=False)
        return self.violation(q)

    def angles_from_positions(self, positions: np.ndarray, constrain: bool = False) -> np.ndarray:
        """Joint coordinates ``q (..., dof)`` reproducing the bone directions of
        ``positions (..., N, dim)`` [length, world].

        Ball joints take the minimal (swing) rotation, with the twist set to the value of
        its range nearest 0; hinges take the angle of the bone projected on their plane.
        With ``constrain`` the result is also projected onto the limits. The positions
        are recovered exactly (``forward(q) == positions``) when bone lengths match and
        hinge bones lie in their planes.
        """
        pos = np.asarray(positions, dtype=float)
        n, dim = self.n_nodes, self._dim
        if pos.shape[-2:] != (n, dim):
            raise ShapeError(f"positions must have shape (..., {n}, {dim}), got {pos.shape}")
        batch = pos.shape[:-2]
        p = np.zeros((int(np.prod(batch, dtype=int)), n, 3))
        p[..., :dim] = pos.reshape(-1, n, dim)
        m = p.shape[0]
        f = np.empty((m, n, 3, 3))
        f[:, 0] = np.eye(3)
        q = np.zeros((m, self.dof))
        for v in range(1, n):
            pa = self._parents[v]
            d = p[:, v] - p[:, pa]
            nd = np.linalg.norm(d, axis=-1, keepdims=True)
            d = np.where(nd > 0, d / np.where(nd > 0, nd, 1.0), f[:, pa] @ self._rhat[v])
            loc = np.einsum("bji,bj->bi", f[:, pa], d)
            c = self._hinge_child(v)
            rel = np.einsum("bji,bj->bi", f[:, pa], p[:, c] - p[:, pa]) if c else None
            _, rot, qv = self._place(
                v, loc, constrain or self._joints[v].twist is not None, child_rel=rel
            )
            f[:, v] = f[:, pa] @ rot
            q[:, self._qoff[v] : self._qoff[v + 1]] = qv
        return q.reshape(batch + (self.dof,))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(bones={self.n_bones}, dim={self._dim}, "
            f"effectors={self.effectors}, dof={self.dof})"
        )


class Chain(Tree):
    """A serial chain: node ``i + 1`` ends bone ``i``; joint ``i`` (at node ``i``)
    rotates bone ``i``. Builders take the joint index ``i`` in ``0..bones-1``."""

    @classmethod
    def from_lengths(
        cls, lengths: Sequence[float], dim: int = 3, root: np.ndarray | None = None
    ) -> Chain:
        """Bones along +x from a root at the origin (or ``root``), free ball joints
        (hinges about +z in 2-D)."""
        ls = np.array(lengths, dtype=float).reshape(-1)
        if dim not in (2, 3):
            raise ShapeError(f"dim must be 2 or 3, got {dim}")
        if ls.size < 1:
            raise ShapeError("a chain needs at least one bone")
        if not np.all(np.isfinite(ls)) or np.any(ls <= 0.0):
            raise BoneLengthError(f"bone lengths must be positive and finite, got {ls}")
        off = np.zeros((ls.size + 1, dim))
        off[1:, 0] = ls
        return cls(np.arange(-1, ls.size), off, root=root)

    @classmethod
    def from_points(
        cls,
        points: np.ndarray,
        parents: Sequence[int] | None = None,
        names: Sequence[Hashable] | None = None,
    ) -> Chain:
        """Chain whose rest pose has its nodes at ``points (bones + 1, dim)``."""
        pts = np.asarray(points, dtype=float)
        return super().from_points(pts, np.arange(-1, pts.shape[0] - 1), names)  # type: ignore[return-value]

    def _node(self, key: Hashable) -> int:
        if isinstance(key, int | np.integer) and 0 <= int(key) < self.n_bones:
            return int(key) + 1
        raise ConstraintError(f"unknown joint {key!r}; valid: 0..{self.n_bones - 1}")

    @property
    def effector(self) -> int:
        return self.n_nodes - 1


def targets_for(tree: Tree, targets: Mapping[Hashable, np.ndarray] | np.ndarray):
    """Normalise targets to ``(effector node indices, array (..., E, dim))``."""
    dim = tree.dim
    if isinstance(targets, Mapping):
        if not targets:
            raise ShapeError("targets is empty")
        idx = [tree.node_index(k) for k in targets]
        if 0 in idx:
            raise ShapeError("the root cannot be an effector (use root_target)")
        arrs = [as_points(t, dim, f"target[{k!r}]") for k, t in targets.items()]
        shapes = {a.shape for a in arrs}
        if len(shapes) != 1:
            raise ShapeError(f"all targets must have the same shape, got {shapes}")
        return tuple(idx), np.stack(arrs, axis=-2)
    t = as_points(targets, dim, "target")
    return (tree.effectors[-1],) if len(tree.effectors) == 1 else tree.effectors, (
        t[..., None, :] if len(tree.effectors) == 1 else t
    )
