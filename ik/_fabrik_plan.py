"""Static data of one FABRIK problem shape (a tree and its targeted effectors).

Built once per ``(tree, effectors, direction effectors)`` and cached on the tree; the
scalar (``_fabrik_scalar``) and batched (``_fabrik_batch``) solvers both read it, so the
two run the same algorithm on the same constants.
"""

from __future__ import annotations

import math

import numpy as np

from .chain import Tree

# Algorithm constants shared by both implementations (see ik.fabrik's module docstring).
N_RESTART_POSES = 16  # size of the fixed table of restart poses
RESTART_SEED = 20240611  # the table is drawn once per tree from this seed: deterministic
RESTART_SCALE = 1.5  # restart poses: joint coordinates uniform in +-1.5 rad, clamped
WINDOW = 4  # progress check every WINDOW iterations of an attempt ...
WINDOW_ARC = 2  # ... every WINDOW_ARC while a chain near full reach may still be arced
SLOW = 0.7  # "slow": the attempt's best error fell by less than this factor in a window
ARC_FRACTION = 0.8  # chains with a target beyond this fraction of the reach can be arced
MAX_ARCS = 2
ACCEL_MAX = 3.0  # largest extrapolation factor of the virtual target
ACCEL_RHO = (0.2, 0.98)  # extrapolate only when the error ratio is in this range
TWIST_OK = 1e-9  # [rad] a child constraint violated by less than this counts as met
TWIST_STAY = 1e-3  # [1/rad] preference for the smallest twist change among candidates


class Plan:
    """Python-float constants for one problem shape."""

    def __init__(self, tree: Tree, effs: tuple[int, ...], dir_effs: tuple[int, ...]):
        n = tree.n_nodes
        self.tree = tree
        self.n = n
        self.dim = tree.dim
        self.effs = effs
        self.dir_effs = dir_effs
        self.par = [int(x) for x in tree._parents]
        self.lens = [float(x) for x in tree._len]
        self.children = [tuple(c) for c in tree._children]
        self.qoff = [int(x) for x in tree._qoff]
        self.dof = tree.dof
        joints = tree.joints
        self.joints = joints
        self.r = [tuple(float(x) for x in tree._rhat[v]) for v in range(n)]
        self.e1 = [tuple(float(x) for x in tree._basis[v][:, 1]) for v in range(n)]
        self.e2 = [tuple(float(x) for x in tree._basis[v][:, 2]) for v in range(n)]
        self.hinge = [False] * n
        self.axis: list = [None] * n
        self.ar: list = [None] * n
        self.hlim: list = [None] * n
        self.cone: list = [None] * n
        self.twist: list = [None] * n
        self.cons = [False] * n
        self.icone: list = [None] * n  # 1 / half-angle^2 of the cones
        for v in range(1, n):
            j = joints[v]
            if j.kind == "hinge":
                self.hinge[v] = True
                a = tuple(float(x) for x in j.axis)
                self.axis[v] = a
                r = self.r[v]
                self.ar[v] = (
                    a[1] * r[2] - a[2] * r[1],
                    a[2] * r[0] - a[0] * r[2],
                    a[0] * r[1] - a[1] * r[0],
                )
                if j.limits is not None:
                    lo, hi = float(j.limits[0]), float(j.limits[1])
                    self.hlim[v] = (lo, hi, math.cos(lo), math.sin(lo), math.cos(hi), math.sin(hi))
                self.cons[v] = self.dim == 3 or j.limits is not None
            else:
                if j.cone is not None:
                    self.cone[v] = tuple(float(x) for x in j.cone)
                    self.icone[v] = tuple(1.0 / float(x) ** 2 for x in j.cone)
                if j.twist is not None:
                    self.twist[v] = (float(j.twist[0]), float(j.twist[1]))
                self.cons[v] = j.cone is not None
        # frames are needed as soon as one joint restricts a direction or a twist
        self.frames = any(self.cons) or any(t is not None for t in self.twist)
        self.cch = [tuple(c for c in self.children[v] if self.cons[c]) for v in range(n)]
        # twist candidates put a child's direction into a plane through its rest
        # direction: the plane of a hinge, the two axis planes of a cone
        self.tw_normals: list = [()] * n
        for c in range(1, n):
            if self.hinge[c]:
                self.tw_normals[c] = (self.axis[c],)
            elif self.cone[c] is not None:
                self.tw_normals[c] = (self.e2[c], self.e1[c])
        # one cone child sharing the bone's rest direction, free twist: the twist only
        # shifts the child's azimuth, and the candidates have a closed form
        self.tw_axial = [False] * n
        for v in range(1, n):
            cs = self.cch[v]
            if (
                not self.hinge[v]
                and self.twist[v] is None
                and len(cs) == 1
                and self.cone[cs[0]] is not None
                and np.allclose(self.r[v], self.r[cs[0]], rtol=0.0, atol=1e-12)
            ):
                self.tw_axial[v] = True
        # targets: which nodes move in the backward pass
        self.eff_slot = [-1] * n
        for k, e in enumerate(effs):
            self.eff_slot[e] = k
        self.dir_slot = [-1] * n
        for k, e in enumerate(dir_effs):
            self.dir_slot[e] = k
        active = [False] * n
        for e in effs:
            v = e
            while v > 0 and not active[v]:
                active[v] = True
                v = self.par[v]
        self.active = active
        self.n_inactive = active[1:].count(False)  # nodes the backward pass leaves alone
        self.bw_order = [v for v in range(n - 1, 0, -1) if active[v]]
        cnt = [0] * n
        for v in range(1, n):
            if active[v]:
                cnt[self.par[v]] += 1
        self.cnt = cnt
        self.bw_cch = [tuple(c for c in self.cch[v] if active[c]) for v in range(n)]
        # reach of every targeted branch below each sub-base: (slot, max, min) [length]
        self.branches: list = [()] * n
        br: dict[int, list] = {}
        for k, e in enumerate(effs):
            path: list[int] = []
            v = e
            while v > 0:
                path.append(v)
                v = self.par[v]
                if cnt[v] > 1:
                    total = sum(self.lens[w] for w in path)
                    longest = max(self.lens[w] for w in path)
                    br.setdefault(v, []).append((k, total, max(0.0, 2.0 * longest - total)))
        for v, lst in br.items():
            self.branches[v] = tuple(lst)
        acc = [0.0] * n
        for v in range(1, n):
            acc[v] = acc[self.par[v]] + self.lens[v]
        self.reach_e = [acc[e] for e in effs]
        self.reach = float(tree.reach)
        # the batched solver finishes its last poses one at a time once there are this
        # few: an iteration of numpy calls then costs more than the scalar solver's
        # iterations of those poses (both grow with the joints, so one number fits the
        # benchmark chains, free or constrained)
        self.scalar_tail = 8
        self.chain = bool(tree.is_chain) and effs == (n - 1,)
        self.arc_ok = self.chain and not dir_effs and n > 2
        self.root0 = tuple(float(x) for x in tree.root) + (0.0,) * (3 - self.dim)
        self._table = None
        self._table_py = None

    # ------------------------------------------------------------------ restart poses
    def restart_table(self):
        """Fixed restart poses: ``(positions (K, N, 3) relative to the root, frames
        (K, N, 3, 3))`` from in-limit random joint coordinates."""
        if self._table is None:
            tree = self.tree
            rng = np.random.Generator(np.random.PCG64(RESTART_SEED))
            q = tree.clamp(rng.uniform(-RESTART_SCALE, RESTART_SCALE, (N_RESTART_POSES, tree.dof)))
            f, p = tree.frames(q)
            self._table = (p - np.asarray(self.root0), f)
        return self._table

    def restart_index(self, t_rel, k: int) -> int:
        """Table pose for restart number ``k`` of a solve with targets ``t_rel (E, 3)``
        (relative to the root): the poses in table order (the targets are not used, so a
        restart's pose depends on nothing but ``k``)."""
        return k % N_RESTART_POSES

    def restart_indices(self, k: np.ndarray) -> np.ndarray:
        """:meth:`restart_index` for an array of restart numbers."""
        return np.asarray(k) % N_RESTART_POSES

    def restart_table_py(self):
        """:meth:`restart_table` as Python tuples (positions, frames as columns, twists)."""
        if self._table_py is None:
            p, f = self.restart_table()
            self._table_py = (
                [[tuple(x) for x in pk] for pk in p.tolist()],
                [[tuple(tuple(col) for col in fv.T.tolist()) for fv in fk] for fk in f],
            )
        return self._table_py


def plan_for(tree: Tree, effs: tuple[int, ...], dir_effs: tuple[int, ...]) -> Plan:
    return tree._cached(("fabrik_plan", effs, dir_effs), lambda: Plan(tree, effs, dir_effs))
