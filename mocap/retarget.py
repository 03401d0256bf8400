"""Retargeting: fit the dog
model's skeleton to a motion-capture clip and write joint-angle reference trajectories.

Method (per frame, warm-started from the previous frame):

1. The mocap (``quadsim.mocap.motion.load_reference``: z up, x forward) is scaled by leg
   length, ``L_dog / L_mocap`` (positions; time by ``sqrt`` of it, the Froude rule), so
   the targets are in the dog's size.
2. An ``ik.Tree`` mirrors the dog: one node per link pivot (link origin) in the standing
   pose, plus leaf nodes at the toe, head and tail-tip markers. The joint at the start
   of each bone is the dog joint of the link it leaves: a hinge with the dog's axis and
   limits (elbows, wrists, knees, hocks, toes), or a ball joint with an elliptical cone
   from the two-axis limits (shoulder/hip roll+pitch, spine, neck, head and tail
   pitch+yaw) and a small twist range (the dog has no twist DOF). Bones leaving a link
   with several children (pelvis, chest) each get that link's cone, so the torso is
   only approximately rigid.
3. Multi-effector FABRIK (``ik.fabrik``): targets at the four toes, the head and the
   tail tip, the root moved to the pelvis marker; solved in a heading frame (pelvis at
   the origin, yaw from the hip markers removed) so the pelvis cones stay meaningful.
4. Joint angles are read back along the dog's own kinematics, root to leaves: the
   pelvis pose by a best-fit rotation of its four attachment points; each link's one or
   two joint angles from the direction to its first child node (hinges: exact up to the
   fit; two-axis joints: the direction is matched exactly, a twist about the bone is not
   a DOF of the dog and is dropped); angles are clipped to the joint limits. The dog's
   forward kinematics of those angles gives the fitted marker positions.

Output arrays (``--out``): see :func:`write_npz`. ``--plot`` draws the scaled mocap
markers against the fitted model in side view for a few frames, with the data's
CC BY-NC 4.0 attribution in the caption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from quadsim import ik
from quadsim.controller.kinematics import tree_pose
from quadsim.mocap.errors import RetargetError
from quadsim.mocap.motion import (
    FEET,
    ReferenceMotion,
    leg_length,
    scale_motion,
)
from quadsim.models import Skeleton

#: markers FABRIK pulls toward (effectors); the root follows the pelvis marker
TARGETS: tuple[str, ...] = ("LF_toe", "RF_toe", "LH_toe", "RH_toe", "head", "tail_tip")
TWIST_RAD = 0.15  # twist range of the ball joints standing in for two-axis dog joints
PELVIS_CONE_RAD = 0.4  # swing of the bones leaving the pelvis (no joint there)
MIN_CONE_RAD = 0.02
TOL_M = 1e-4  # FABRIK tolerance on the effectors [m]
MAX_ITER = 30


# --------------------------------------------------------------------------- the fit model


def _nrm(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _rot(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotations about constant unit ``axis`` by ``angle (T,)``: ``(T, 3, 3)``."""
    return Rotation.from_rotvec(np.outer(np.asarray(angle, dtype=float), axis)).as_matrix()


def _ik_basis(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(e1, e2) completing the bone direction ``r`` as ``ik.Tree`` does for cones."""
    e1 = np.cross([0.0, 0.0, 1.0], r)
    if np.linalg.norm(e1) < 1e-9:
        e1 = np.array([0.0, 1.0, 0.0]) - r[1] * r
    e1 = e1 / np.linalg.norm(e1)
    return e1, np.cross(r, e1)


@dataclass
class FitModel:
    """The ``ik.Tree`` standing in for the dog, and the maps between the two."""

    skeleton: Skeleton
    tree: ik.Tree
    names: tuple[str, ...]  # node names: link names, then "marker:<name>"
    link_node: dict[str, int]
    marker_node: dict[str, int]
    child_node: dict[str, int]  # link -> node whose direction sets the link's angles
    leg_length_m: float


def build_fit_model(skeleton: Skeleton) -> FitModel:
    """The ik tree of link pivots (standing pose, pelvis at the origin) + target markers."""
    pose = tree_pose(skeleton)
    names: list[str] = []
    parents: list[int] = []
    points: list[np.ndarray] = []
    link_node: dict[str, int] = {}
    for link in skeleton.links:  # parents come first
        link_node[link.name] = len(names)
        names.append(link.name)
        parents.append(-1 if link.parent is None else link_node[link.parent])
        points.append(pose.link_pos[link.name])
    marker_node: dict[str, int] = {}
    for m in TARGETS:
        link, off = skeleton.markers[m]
        marker_node[m] = len(names)
        names.append(f"marker:{m}")
        parents.append(link_node[link])
        points.append(pose.link_pos[link] + pose.link_rot[link] @ np.asarray(off))
    pts = np.array(points)
    tree = ik.Tree.from_points(pts, parents, names)
    children: dict[int, list[int]] = {}
    for v, pa in enumerate(parents):
        if pa >= 0:
            children.setdefault(pa, []).append(v)
    child_node = {ln: children[v][0] for ln, v in link_node.items() if v in children}
    # joint constraints: bone (P -> C) turns with link P's joints
    for v in range(1, len(names)):
        plink = skeleton.link(names[parents[v]])
        r = _nrm(pts[v] - pts[parents[v]])
        if not plink.joints:
            tree = tree.with_cone(names[v], PELVIS_CONE_RAD).with_twist(
                names[v], -TWIST_RAD, TWIST_RAD
            )
        elif len(plink.joints) == 1:
            j = plink.joints[0]
            stand = skeleton.stand_angles()[skeleton.joint_index(j.name)]
            tree = tree.with_hinge(names[v], pose.axis[j.name], (j.lower - stand, j.upper - stand))
        else:
            tree = tree.with_cone(names[v], _cone(skeleton, pose, plink, r)).with_twist(
                names[v], -TWIST_RAD, TWIST_RAD
            )
    legs = []
    for lm in skeleton.legs.values():
        root = pose.link_pos[lm.links[0]]
        foot = pose.link_pos[lm.foot_link] + pose.link_rot[lm.foot_link] @ np.asarray(
            lm.foot_offset
        )
        legs.append(root[2] - foot[2] + skeleton.spec.foot_radius)
    return FitModel(
        skeleton, tree, tuple(names), link_node, marker_node, child_node, float(np.mean(legs))
    )


def _cone(skeleton: Skeleton, pose, link, r: np.ndarray) -> tuple[float, ...]:
    """Elliptical cone half-angles (+e1, +e2, -e1, -e2) for a two-axis dog joint: each
    quadrant takes the range left (from the standing pose) on the joint whose axis
    swings the bone that way."""
    e1, e2 = _ik_basis(r)
    stand = skeleton.stand_angles()
    half = []
    for u in (e1, e2, -e1, -e2):
        ax = np.cross(r, u)
        best, lim = 0.0, MIN_CONE_RAD
        for j in link.joints:
            c = float(ax @ pose.axis[j.name])
            if abs(c) > abs(best):
                s = stand[skeleton.joint_index(j.name)]
                best, lim = c, (j.upper - s) if c > 0 else (s - j.lower)
        half.append(float(np.clip(lim, MIN_CONE_RAD, np.pi)))
    return tuple(half)


# --------------------------------------------------------------------------- fitting


@dataclass
class Fit:
    t: np.ndarray
    positions: np.ndarray  # (T, N, 3) ik node positions, world
    ik_error: np.ndarray  # (T,) FABRIK error (max over effectors) [m]
    iterations: np.ndarray  # (T,)
    joint_angles: np.ndarray  # (T, J) [rad]
    base_pos: np.ndarray  # (T, 3)
    base_rot: np.ndarray  # (T, 3, 3)
    marker_names: tuple[str, ...]
    markers_fit: np.ndarray  # (T, M, 3) model markers from the joint angles
    markers_ref: np.ndarray  # (T, M, 3) scaled mocap (NaN where the clip has no marker)
    residual_rad: np.ndarray  # (J,) mean angle between fitted and model bone directions
    scale: float


def heading_yaw(motion: ReferenceMotion) -> np.ndarray:
    """Yaw [rad] of the body per frame: the left hip minus the right hip is +y."""
    if motion.has("LH_hip") and motion.has("RH_hip"):
        lat = motion.marker("LH_hip") - motion.marker("RH_hip")
        return np.arctan2(-lat[:, 0], lat[:, 1])
    fwd = motion.marker("mid_spine") - motion.marker("pelvis")
    return np.arctan2(fwd[:, 1], fwd[:, 0])


def fit_motion(model: FitModel, motion: ReferenceMotion, progress=None) -> Fit:
    """Scale ``motion`` to the dog and fit every frame (see the module docstring)."""
    need = (
        *TARGETS,
        "pelvis",
        *(
            f"{f}_{j}"
            for f in FEET
            for j in (("elbow", "wrist") if f in ("LF", "RF") else ("knee", "hock"))
        ),
    )
    missing = [m for m in need if not motion.has(m)]
    if missing:
        raise RetargetError(
            f"{motion.source}: the clip lacks marker(s) {', '.join(missing)}; "
            f"the fit needs {', '.join(need)}"
        )
    scale = model.leg_length_m / leg_length(motion)
    m = scale_motion(motion, scale)
    tree = model.tree
    n_t = m.n_frames
    yaw = heading_yaw(m)
    pelvis = m.marker("pelvis")
    rest = tree.rest_positions()
    init = rest
    pos = np.zeros((n_t, tree.n_nodes, 3))
    err = np.zeros(n_t)
    its = np.zeros(n_t, dtype=int)
    for k in range(n_t):
        c, s = math.cos(yaw[k]), math.sin(yaw[k])
        r_inv = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])  # world -> heading
        targets = {f"marker:{name}": r_inv @ (m.marker(name)[k] - pelvis[k]) for name in TARGETS}
        res = ik.fabrik(
            tree,
            targets=targets,
            root_target=np.zeros(3),
            init=init,
            tol=TOL_M,
            max_iter=MAX_ITER,
            angles=False,
            restarts=0,
        )
        init = res.positions
        pos[k] = res.positions @ r_inv + pelvis[k]  # back to the world (r_inv.T = r)
        err[k] = res.error
        its[k] = res.iterations
        if progress is not None:
            progress((k + 1) / n_t)
    legs = {}
    for leg in model.skeleton.legs:
        mid = ("elbow", "wrist") if leg in ("LF", "RF") else ("knee", "hock")
        legs[leg] = np.stack(
            [m.marker(f"{leg}_{mid[0]}"), m.marker(f"{leg}_{mid[1]}"), m.marker(f"{leg}_toe")],
            axis=1,
        )
    q, base_rot, markers_fit, names, resid = recover_angles(model, pos, legs)
    ref = np.full_like(markers_fit, np.nan)
    for i, name in enumerate(names):
        if m.has(name):
            ref[:, i] = m.marker(name)
    return Fit(
        m.t, pos, err, its, q, pos[:, 0].copy(), base_rot, names, markers_fit, ref, resid, scale
    )


def _kabsch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rotations ``(T, 3, 3)`` best mapping point sets ``a (K, 3)`` onto ``b (T, K, 3)``
    (both about their first point's origin)."""
    h = np.einsum("ki,tkj->tij", a, b)
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(np.swapaxes(vt, 1, 2) @ np.swapaxes(u, 1, 2)))
    fix = np.ones((a.shape[0] * 0 + h.shape[0], 3))
    fix[:, 2] = d
    return np.swapaxes(vt, 1, 2) @ (fix[:, :, None] * np.swapaxes(u, 1, 2))


def _solve_two_axis(a1, a2, o, d):
    """Angles ``(q1, q2)`` with ``Rot(a1, q1) Rot(a2, q2) o = d`` for unit ``o`` (const)
    and ``d (T, 3)`` (both in the parent frame); the solution with ``q2`` nearest 0."""
    a12 = a1 @ a2
    a2o = a2 @ o
    alpha = a1 @ o - a2o * a12
    beta = a1 @ np.cross(a2, o)
    gamma = d @ a1 - a2o * a12
    rho = math.hypot(alpha, beta)
    base = math.atan2(beta, alpha)
    delta = np.arccos(np.clip(gamma / max(rho, 1e-12), -1.0, 1.0))
    cand = np.stack([base + delta, base - delta])
    cand = (cand + np.pi) % (2 * np.pi) - np.pi
    q2 = cand[np.argmin(np.abs(cand), axis=0), np.arange(d.shape[0])]
    v = np.einsum("tij,j->ti", _rot(a2, q2), o)
    return _solve_one_axis(a1, v, d), q2


def _solve_one_axis(a1, v, d):
    """Angle about ``a1`` turning ``v`` toward ``d`` (both ``(T, 3)`` or ``v`` const)."""
    v = np.broadcast_to(v, d.shape)
    vp = v - np.outer(v @ a1, a1)
    dp = d - np.outer(d @ a1, a1)
    return np.arctan2(np.cross(vp, dp) @ a1, np.einsum("ti,ti->t", vp, dp))


def recover_angles(model: FitModel, pos: np.ndarray, leg_marks: dict[str, np.ndarray]):
    """Dog joint angles, pelvis rotation, model markers and per-joint residual from
    fitted node positions ``pos (T, N, 3)``; each leg is re-solved in the dog's own leg
    kinematics for its mocap markers ``leg_marks[leg] (T, 3, 3)`` (see :func:`_solve_leg`)."""
    sk = model.skeleton
    rest = model.tree.rest_positions()
    n_t = pos.shape[0]
    jn = sk.joint_names
    q = np.zeros((n_t, len(jn)))
    resid = np.zeros(len(jn))
    lo, hi, _ = sk.limits()
    leg_of = {lm.links[0]: lm for lm in sk.legs.values()}
    solved: set[str] = set()
    # pelvis: best rotation of its attachment points
    kids = [v for v in range(1, model.tree.n_nodes) if model.tree.parents[v] == 0]
    r_base = _kabsch(rest[kids] - rest[0], pos[:, kids] - pos[:, :1])
    frame_r: dict[str, np.ndarray] = {}
    frame_p: dict[str, np.ndarray] = {}
    for link in sk.links:
        if link.parent is None:
            frame_r[link.name], frame_p[link.name] = r_base, pos[:, 0]
            continue
        r_par, p_par = frame_r[link.parent], frame_p[link.parent]
        p = p_par + np.einsum("tij,j->ti", r_par, np.asarray(link.origin))
        rot = r_par
        node = model.child_node.get(link.name)
        if link.name in leg_of:
            lm = leg_of[link.name]
            ang = _solve_leg(model, lm, r_par, p, leg_marks[lm.leg])
            for i, name in enumerate(lm.joints):
                q[:, sk.joint_index(name)] = ang[:, i]
            solved.update(lm.links)
        if link.name in solved:
            for j in link.joints:
                rot = rot @ _rot(np.asarray(j.axis, dtype=float), q[:, sk.joint_index(j.name)])
            if node is not None:
                o = _nrm(_child_offset(model, link.name, node))
                d = _nrm(pos[:, node] - pos[:, model.link_node[link.name]])
                got = np.einsum("tij,j->ti", rot, o)
                res = np.arccos(np.clip(np.einsum("ti,ti->t", got, d), -1.0, 1.0)).mean()
                resid[[sk.joint_index(j.name) for j in link.joints]] = res
        elif link.joints and node is not None:
            child_off = _child_offset(model, link.name, node)
            o = child_off / np.linalg.norm(child_off)
            d = _nrm(pos[:, node] - pos[:, model.link_node[link.name]])
            d_loc = np.einsum("tji,tj->ti", r_par, d)  # in the parent link frame
            axes = [np.asarray(j.axis, dtype=float) for j in link.joints]
            idx = [sk.joint_index(j.name) for j in link.joints]
            if len(axes) == 1:
                ang = [_solve_one_axis(axes[0], o, d_loc)]
            else:
                ang = list(_solve_two_axis(axes[0], axes[1], o, d_loc))
            for a, i in zip(ang, idx, strict=True):
                q[:, i] = np.clip(a, lo[i], hi[i])
            loc = np.broadcast_to(np.eye(3), (n_t, 3, 3))
            for ax, i in zip(axes, idx, strict=True):
                loc = loc @ _rot(ax, q[:, i])
            rot = r_par @ loc
            got = np.einsum("tij,j->ti", loc, o)
            res = np.arccos(np.clip(np.einsum("ti,ti->t", got, d_loc), -1.0, 1.0)).mean()
            resid[idx] = res
        frame_r[link.name], frame_p[link.name] = rot, p
    names = tuple(sk.markers)
    mk = np.zeros((n_t, len(names), 3))
    for i, name in enumerate(names):
        link, off = sk.markers[name]
        mk[:, i] = frame_p[link] + np.einsum("tij,j->ti", frame_r[link], np.asarray(off))
    return q, r_base, mk, names, resid


def _leg_chain(model: FitModel, lm) -> ik.Chain:
    """The leg below its roll joint as a 2-D chain in the leg plane (x forward, z up),
    hanging down at zero angles; hinge angle = minus the dog's angle (about +y)."""
    key = f"_leg_chain_{lm.leg}"
    chain = model.__dict__.get(key)
    if chain is None:
        sk = model.skeleton
        pts = np.zeros((len(lm.lengths) + 1, 2))
        pts[1:, 1] = -np.cumsum(lm.lengths)
        chain = ik.Chain.from_points(pts)
        for i, name in enumerate(lm.joints[1:]):
            j = sk.joints[sk.joint_index(name)]
            chain = chain.with_limits(i, -j.upper, -j.lower)
        model.__dict__[key] = chain
    return chain


def _solve_leg(
    model: FitModel, lm, r_par: np.ndarray, p_root: np.ndarray, marks: np.ndarray
) -> np.ndarray:
    """Leg angles ``(T, 5)`` in ``lm.joints`` order putting the toe marker on the mocap
    toe: the roll turns the leg plane through the toe (clipped to its limits), then
    FABRIK solves the planar pitch/knee/ankle/toe chain, starting from the mocap's own
    leg markers ``marks (T, 3 or 4, 3)`` (root, knee/elbow, hock/wrist, toe; the root may
    be missing) laid into that plane, so the leg keeps the mocap's bend."""
    sk = model.skeleton
    roll = sk.joints[sk.joint_index(lm.joints[0])]
    target = marks[:, -1]
    t_loc = np.einsum("tji,tj->ti", r_par, target - p_root)
    r = np.clip(np.arctan2(t_loc[:, 1], -t_loc[:, 2]), roll.lower, roll.upper)
    c, s = np.cos(r), np.sin(r)

    def plane(pts):  # (T, 3) world -> (T, 2) leg-plane coordinates (x, z)
        loc = np.einsum("tji,tj->ti", r_par, pts - p_root)
        return np.stack([loc[:, 0], -loc[:, 1] * s + loc[:, 2] * c], axis=1)

    tgt = plane(target)
    knee, hock = plane(marks[:, -3]), plane(marks[:, -2])
    chain = _leg_chain(model, lm)
    out = np.zeros((target.shape[0], len(lm.joints)))
    out[:, 0] = r
    toe_len = lm.lengths[-1]
    for k in range(target.shape[0]):
        # the mocap pose as the start: root, knee, hock, toe joint (a toe length back
        # from the toe along hock -> toe), toe; the first forward pass fixes lengths
        u = tgt[k] - hock[k]
        u = u / max(float(np.linalg.norm(u)), 1e-9)
        init = np.array([[0.0, 0.0], knee[k], hock[k], tgt[k] - toe_len * u, tgt[k]])
        res = ik.fabrik(chain, tgt[k], tol=TOL_M, max_iter=MAX_ITER, init=init)
        out[k, 1:] = -res.angles
    return out


def _child_offset(model: FitModel, link: str, node: int) -> np.ndarray:
    """Offset of ``node`` from ``link``'s pivot in the link frame at zero angles."""
    sk = model.skeleton
    name = model.names[node]
    if name.startswith("marker:"):
        return np.asarray(sk.markers[name[len("marker:") :]][1], dtype=float)
    return np.asarray(sk.link(name).origin, dtype=float)


# --------------------------------------------------------------------------- outputs


def _quat_xyzw(r: np.ndarray) -> np.ndarray:
    return Rotation.from_matrix(r).as_quat()


def fit_errors(fit: Fit) -> dict[str, np.ndarray]:
    """Per-frame errors [m] of the model markers against the scaled mocap."""
    idx = {n: i for i, n in enumerate(fit.marker_names)}
    d = np.linalg.norm(fit.markers_fit - fit.markers_ref, axis=-1)  # (T, M), NaN if no ref
    tgt = [idx[n] for n in (*TARGETS, "pelvis")]
    toes = [idx[f"{f}_toe"] for f in FEET]
    return {
        "fit_error": d[:, tgt].mean(axis=1),
        "toe_error": d[:, toes],
        "all_marker_error": np.nanmean(d, axis=1),
    }


def write_npz(
    path: Path, fit: Fit, model: FitModel, motion: ReferenceMotion, preset_name: str
) -> dict[str, np.ndarray]:
    """Arrays written: ``t`` (T,) [s, Froude-scaled]; ``joint_names`` (J,);
    ``joint_angles`` (T, J) [rad]; ``joint_recovery`` (J,): "hinge" (one axis, exact up
    to the fit) or "two-axis" (bone direction matched, twist dropped); ``joint_residual_rad``
    (J,) mean angle between fitted and model bone directions; ``base_pos`` (T, 3) [m],
    ``base_quat`` (T, 4) xyzw; ``marker_names`` (M,), ``markers_fit`` (T, M, 3) model
    markers, ``markers_ref`` (T, M, 3) scaled mocap (NaN where absent); ``fit_error`` (T,)
    [m] mean over the targets (toes, head, tail tip, pelvis); ``toe_error`` (T, 4) [m]
    (LF, RF, LH, RH); ``all_marker_error`` (T,) [m]; ``ik_node_names`` (N,),
    ``ik_positions`` (T, N, 3) FABRIK node positions, ``ik_error`` (T,) [m],
    ``ik_iterations`` (T,); ``target_names``; ``scale`` (mocap -> dog), ``leg_length_dog_m``;
    ``source``, ``preset``, ``attribution``."""
    sk = model.skeleton
    errs = fit_errors(fit)
    recovery = np.array(
        ["hinge" if len(link.joints) == 1 else "two-axis" for link in sk.links for _ in link.joints]
    )
    arrays = {
        "t": fit.t,
        "joint_names": np.array(sk.joint_names),
        "joint_angles": fit.joint_angles,
        "joint_recovery": recovery,
        "joint_residual_rad": fit.residual_rad,
        "base_pos": fit.base_pos,
        "base_quat": _quat_xyzw(fit.base_rot),
        "marker_names": np.array(fit.marker_names),
        "markers_fit": fit.markers_fit,
        "markers_ref": fit.markers_ref,
        **errs,
        "ik_node_names": np.array(model.names),
        "ik_positions": fit.positions,
        "ik_error": fit.ik_error,
        "ik_iterations": fit.iterations,
        "target_names": np.array((*TARGETS, "pelvis")),
        "scale": np.float64(fit.scale),
        "leg_length_dog_m": np.float64(model.leg_length_m),
        "source": np.array(motion.source),
        "preset": np.array(preset_name),
        "attribution": np.array(motion.attribution or ""),
    }
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **arrays)
    return arrays
