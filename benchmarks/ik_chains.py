"""Benchmark chains for ``bench_ik.py``: each as an ``ik`` model plus, where the peer
can express it, the same kinematics for ikpy (and pyfabrik for unconstrained chains).

Every case: ``name``, ``tree`` (ik.Chain/Tree), ``ikpy`` (an ``ikpy.chain.Chain`` or
None), ``pyfabrik_dim`` (2/3 if pyfabrik can solve it, else None), ``ikpy_q`` (maps an
ikpy joint vector to our ``q``, so ikpy's answers can be checked against our joint
limits: its box bounds on Euler angles contain our cones, an easier problem).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from quadsim.ik import Chain, Tree
from quadsim.ik._rot import axis_angle, log_so3
from quadsim.ik.testing import hand_tree

FREE = (-np.inf, np.inf)  # ikpy turns (None, None) into NaN bounds that scipy refuses


@dataclass
class Case:
    name: str
    tree: Tree
    ikpy: object | None
    pyfabrik_dim: int | None
    note: str = ""
    ikpy_q: Callable[[np.ndarray], np.ndarray] | None = None


_AX = {"x": np.array([1.0, 0, 0]), "y": np.array([0, 1.0, 0]), "z": np.array([0, 0, 1.0])}


def _euler_to_rotvec(angles, axes: str) -> np.ndarray:
    """Rotation vector of ``R(axes[0], a0) @ R(axes[1], a1) @ ...`` (ikpy's revolutes
    stacked at one point, applied in chain order)."""
    r = np.eye(3)
    for a, ax in zip(angles, axes, strict=True):
        r = r @ axis_angle(_AX[ax], np.float64(a))
    return log_so3(r)


def _ikpy_q(groups):
    """Map ikpy's full joint vector (origin link first) to our q: ``groups`` lists, per
    joint of ours, the number of ikpy revolutes and their axes ("z", "zy", "zyx")."""

    def convert(q_full: np.ndarray) -> np.ndarray:
        out, k = [], 1
        for axes in groups:
            a = q_full[k : k + len(axes)]
            k += len(axes)
            out.extend([a[0]] if len(axes) == 1 else _euler_to_rotvec(a, axes))
        return np.array(out)

    return convert


def _ikpy_chain(segments):
    """segments: list of (translation, axis or None, bounds) -> ikpy Chain; the last
    segment is a fixed tip."""
    try:
        from ikpy.chain import Chain as IkpyChain
        from ikpy.link import OriginLink, URDFLink
    except ImportError:  # pragma: no cover - ikpy is a benchmark-only dependency
        return None
    links = [OriginLink()]
    mask = [False]
    for k, (trans, axis, bounds) in enumerate(segments):
        if axis is None:
            links.append(
                URDFLink(
                    name=f"tip{k}",
                    origin_translation=trans,
                    origin_orientation=[0, 0, 0],
                    rotation=None,
                    joint_type="fixed",
                )
            )
            mask.append(False)
        else:
            links.append(
                URDFLink(
                    name=f"j{k}",
                    origin_translation=trans,
                    origin_orientation=[0, 0, 0],
                    rotation=axis,
                    bounds=bounds,
                )
            )
            mask.append(True)
    return IkpyChain(links, active_links_mask=mask)


def planar10() -> Case:
    chain = Chain.from_lengths([1.0] * 10, dim=2)
    segs = []
    for i in range(10):
        segs.append(([1.0 if i else 0.0, 0, 0], [0, 0, 1], FREE))
    segs.append(([1.0, 0, 0], None, None))
    return Case("planar 10-bone", chain, _ikpy_chain(segs), 2, ikpy_q=_ikpy_q(["z"] * 10))


def cone10() -> Case:
    """10 ball joints; joints 1..9 with elliptical cones (quadrant half-angles
    0.5/0.7/0.6/0.8 rad) around the parent bone; ikpy gets two revolutes (z, y) per
    joint with box bounds of the largest half-angle (a superset of the cone)."""
    chain = Chain.from_lengths([1.0] * 10)
    half = (0.5, 0.7, 0.6, 0.8)
    for j in range(1, 10):
        chain = chain.with_cone(j, half)
    big = max(half)
    segs = []
    for i in range(10):
        b = FREE if i == 0 else (-big, big)
        segs.append(([1.0 if i else 0.0, 0, 0], [0, 0, 1], b))
        segs.append(([0.0, 0, 0], [0, 1, 0], b))
    segs.append(([1.0, 0, 0], None, None))
    return Case("3-D 10-bone cones", chain, _ikpy_chain(segs), None, ikpy_q=_ikpy_q(["zy"] * 10))


def arm7() -> Case:
    """7-DOF arm: ball shoulder (cone 1.4 rad), hinge elbow about z in [0, 2.6],
    ball wrist (cone 1.0, twist +-1.0); upper arm 0.32, forearm 0.30, hand 0.08 [m]."""
    chain = (
        Chain.from_lengths([0.32, 0.30, 0.08])
        .with_cone(0, 1.4)
        .with_hinge(1, [0, 0, 1], (0.0, 2.6))
        .with_cone(2, 1.0)
        .with_twist(2, -1.0, 1.0)
    )
    segs = [
        ([0, 0, 0], [0, 0, 1], (-1.4, 1.4)),
        ([0, 0, 0], [0, 1, 0], (-1.4, 1.4)),
        ([0, 0, 0], [1, 0, 0], FREE),
        ([0.32, 0, 0], [0, 0, 1], (0.0, 2.6)),
        ([0.30, 0, 0], [0, 0, 1], (-1.0, 1.0)),
        ([0, 0, 0], [0, 1, 0], (-1.0, 1.0)),
        ([0, 0, 0], [1, 0, 0], (-1.0, 1.0)),
        ([0.08, 0, 0], None, None),
    ]
    return Case("7-DOF arm", chain, _ikpy_chain(segs), None, ikpy_q=_ikpy_q(["zyx", "z", "zyx"]))


def hand() -> Case:
    return Case(
        "hand tree, 5 effectors",
        hand_tree(),
        None,
        None,
        note="ikpy and pyfabrik solve single chains only",
    )


def all_cases() -> list[Case]:
    return [planar10(), cone10(), arm7(), hand()]


def ikpy_fk_tip(kc, q_full: np.ndarray) -> np.ndarray:
    return np.asarray(kc.forward_kinematics(q_full))[:3, 3]
