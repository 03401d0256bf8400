"""The control step's compiled arithmetic (controller/legchain.pyx: legs, leg frames, spine,
target rates) against the plain numpy references in tests/reference, within float
tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.frames import frame_force, rotation_error, share_frame_torque, yaw_forces
from reference.legs import jt_force, leg_ik
from reference.spine import quat_from_pitch_yaw, split_spine
from reference.swing import foot_angles, foot_placement, swing_path

from quadsim.controller.kinematics import quat_to_matrix, static_gravity_torques, tree_pose
from quadsim.controller.legchain import (
    LegChains,
    LegFrames,
    SwingPlan,
    hip_servo,
    spine_pitch_yaw,
    track_targets,
)
from quadsim.controller.loop import BEND, FRAME_OF_LEG, Controller
from quadsim.controller.stand import leg_kinematics
from quadsim.gaits.params import GaitParams
from quadsim.models import GRAVITY_MPS2 as GRAVITY
from quadsim.models import LEGS as LEG_NAMES
from quadsim.models import build_skeleton, preset

SKELETON = build_skeleton(preset("shepherd"))
LEGS, LEG_IDX = leg_kinematics(SKELETON)
MASS = {link.name: link.mass for link in SKELETON.links}
SEG_WEIGHT = GRAVITY * np.array([[MASS[n] for n in SKELETON.legs[leg].links] for leg in LEG_NAMES])
seeds = st.integers(0, 2**32 - 1)


def random_pose(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint angles (4, 5), the two leg frames' rotations per leg (4, 3, 3) and origins (4, 3)."""
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(2, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    R_leg = quat_to_matrix(quat)[FRAME_OF_LEG].copy()
    origin = rng.normal(size=(2, 3))[FRAME_OF_LEG].copy()
    return rng.uniform(-1.2, 1.2, (4, 5)), R_leg, origin


@settings(max_examples=60, derandomize=True, deadline=None)
@given(seeds)
def test_jacobians_hips_and_axes_match_the_numpy_kinematics(seed: int) -> None:
    q, R_leg, origin = random_pose(seed)
    chains = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT)
    chains.update(q, R_leg, origin)
    pos, rots = LEGS.forward(q)
    _, jac_local = LEGS.foot_jacobian(q)
    np.testing.assert_allclose(chains.local_pose()[0], pos, rtol=0, atol=1e-14)
    np.testing.assert_allclose(chains.local_pose()[1], LEGS.joint_axes(q), rtol=0, atol=1e-15)
    np.testing.assert_allclose(chains.jacobian, R_leg @ jac_local, rtol=0, atol=1e-14)
    np.testing.assert_allclose(
        chains.hip_world, origin + np.einsum("kij,kj->ki", R_leg, LEGS.hip), rtol=0, atol=1e-14
    )
    # the hip's roll axis is its frame's x; the pitch axis is the thigh's y (rots[:, 0])
    np.testing.assert_allclose(chains.hip_axes[:, 0], R_leg[:, :, 0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        chains.hip_axes[:, 1], (R_leg @ rots[:, 0])[:, :, 1], rtol=0, atol=1e-14
    )


@settings(max_examples=30, derandomize=True, deadline=None)
@given(seeds)
def test_swing_gravity_is_the_gradient_of_the_legs_potential_energy(seed: int) -> None:
    q, R_leg, origin = random_pose(seed)
    chains = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT)

    def potential(qq: np.ndarray) -> np.ndarray:
        p = np.einsum("kij,ksj->ksi", R_leg, LEGS.forward(qq)[0]) + origin[:, None]
        return (SEG_WEIGHT * 0.5 * (p[:, :4, 2] + p[:, 1:, 2])).sum(axis=1)

    chains.update(q, R_leg, origin)
    rows = chains.swing_gravity([True, False, True, True])
    assert rows[1] is None
    for j in range(5):
        d = np.zeros_like(q)
        d[:, j] = 1e-6
        numeric = (potential(q + d) - potential(q - d)) / 2e-6
        for k in (0, 2, 3):
            assert rows[k][j] == pytest.approx(numeric[k], abs=1e-6)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(seeds, st.floats(0.3, 1.6))
def test_ik_is_the_law_of_cosines_reference(seed: int, spread: float) -> None:
    # targets from within reach to well beyond it (the reach clamp), pitches either way
    rng = np.random.default_rng(seed)
    target = LEGS.hip + rng.normal(0.0, 0.2 * spread, (4, 3)) - [0.0, 0.0, 0.3]
    cannon, toe = rng.uniform(-1.0, 1.0, 4), rng.uniform(-1.0, 1.0, 4)
    args = target.tolist(), cannon.tolist(), toe.tolist()
    reference = leg_ik(target, LEGS.hip, LEGS.lengths, cannon, toe, BEND)
    solved = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT).solve_ik(*args)
    # arccos near full stretch loses half the digits the kernel's half-angle form keeps
    np.testing.assert_allclose(solved, reference, rtol=0, atol=1e-7)


def test_bad_shapes_and_reach_are_refused() -> None:
    chains = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT)
    with pytest.raises(ValueError, match="dimensions"):
        chains.update(np.zeros(20), np.zeros((4, 3, 3)), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="max_reach"):
        LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT, max_reach=1.5)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(
    seeds,
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_leg_torques_compose_jt_forces_shared_frame_torques_and_swing_gravity(
    seed: int, support: list[bool], swinging: list[bool]
) -> None:
    q, R_leg, origin = random_pose(seed)
    rng = np.random.default_rng(seed + 1)
    # only supporting legs take a force from their frame
    leg_force = rng.normal(0.0, 100.0, (4, 3)) * np.array(support)[:, None]
    frame_torque, hip_servo = rng.normal(0.0, 30.0, (2, 3)), rng.normal(0.0, 20.0, (4, 2))
    chains = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT)
    chains.update(q, R_leg, origin)
    got = chains.leg_torques(leg_force, frame_torque, hip_servo, support, swinging).copy()
    # the reference: J^T (-F), then the frame torque left by the swinging hips (a joint acts
    # on its parent with -tau) shared among the supporting hips, then the swing legs' weight
    tau = jt_force(chains.jacobian, -leg_force)
    axes = chains.hip_axes.reshape(2, 2, 2, 3)
    on = np.array(support).reshape(2, 2)
    by_swing_hips = np.einsum(
        "fka,fkaj->fj", ((tau[:, :2] + hip_servo).reshape(2, 2, 2) * ~on[:, :, None]), axes
    )
    tau[:, :2] += share_frame_torque(frame_torque + by_swing_hips, axes, on).reshape(4, 2)
    gravity = chains.swing_gravity(swinging)
    tau += [g if g is not None else [0.0] * 5 for g in gravity]
    np.testing.assert_allclose(got, tau, rtol=0, atol=1e-9)


def a_swing_plan(seed: int) -> tuple[SwingPlan, dict[str, np.ndarray]]:
    """A SwingPlan of random per-leg values, and those values."""
    rng = np.random.default_rng(seed)
    v = {
        "height": rng.uniform(0.03, 0.15, 4),
        "skew": rng.uniform(-0.5, 0.5, 4),
        "early": rng.uniform(-0.3, 0.3, 4),
        "lead_off": rng.choice([0.0, 0.05], 4),
        "lead_strike": rng.choice([0.0, 0.04], 4),
        "stance_cannon": rng.uniform(-0.3, 0.3, 4),
        "swing_cannon": rng.uniform(0.3, 1.2, 4),
        "toe_off": rng.uniform(0.0, 0.6, 4),
        "foot_strike": rng.uniform(-0.4, 0.0, 4),
        "stance_time": rng.uniform(0.1, 0.5, 4),
        "fp": rng.uniform(0.0, 0.2, (4, 2)),
        "max_extend": rng.uniform(0.05, 1.5),
    }
    plan = SwingPlan(
        v["height"],
        v["skew"],
        v["early"],
        v["lead_off"],
        v["lead_strike"],
        v["stance_cannon"],
        v["swing_cannon"],
        v["toe_off"],
        v["foot_strike"],
        v["stance_time"],
        v["fp"],
        max_fp_error=0.5,
        max_extend_m=v["max_extend"],
    )
    return plan, v


@settings(max_examples=40, derandomize=True, deadline=None)
@given(seeds)
def test_swing_paths_and_foot_angles_are_the_references(seed: int) -> None:
    plan, v = a_swing_plan(seed)
    rng = np.random.default_rng(seed + 1)
    progress = rng.uniform(-0.2, 1.1, 4)
    progress[rng.random(4) < 0.3] = -1.0  # stance
    liftoff, landing = rng.normal(size=(4, 2)).tolist(), rng.normal(size=(4, 2)).tolist()
    ground = rng.normal(0.0, 0.1, 4).tolist()
    want = swing_path(
        np.array(liftoff),
        np.array(landing),
        progress,
        v["height"],
        np.array(ground),
        shape=(v["skew"], v["early"]),
    )
    got = plan.swing_path(progress.tolist(), liftoff, landing, ground)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    to_liftoff, to_strike = rng.uniform(0.0, 0.1, (2, 4))
    timing = (progress, to_liftoff, to_strike, v["lead_off"], v["lead_strike"])
    cannon = foot_angles(
        v["stance_cannon"], v["swing_cannon"], v["stance_cannon"], v["stance_cannon"], *timing
    )
    toe = foot_angles(np.zeros(4), v["swing_cannon"], v["toe_off"], v["foot_strike"], *timing)
    got = plan.foot_angles(progress.tolist(), to_liftoff.tolist(), to_strike.tolist())
    np.testing.assert_allclose(got, [cannon, toe], rtol=0, atol=1e-14)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(seeds, st.floats(-3.0, 3.0))
def test_landing_points_are_the_foot_placement_reference(seed: int, heading: float) -> None:
    plan, v = a_swing_plan(seed)
    q, R_leg, origin = random_pose(seed)
    chains = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT)
    chains.update(q, R_leg, origin)
    rng = np.random.default_rng(seed + 2)
    frame_vel, frame_v_d = rng.normal(0.0, 1.0, (2, 3)), rng.normal(0.0, 1.0, (2, 2))
    H2 = np.array([[np.cos(heading), -np.sin(heading)], [np.sin(heading), np.cos(heading)]])
    offset, to_strike = rng.normal(0.0, 0.05, (4, 2)), rng.uniform(0.0, 0.3, 4)
    swinging = [True, False, True, True]
    anchor = np.full((4, 2), 7.0)
    stance_scale = rng.uniform(0.5, 1.0)  # a quickened stride clock's shorter stance
    plan.place_feet(
        chains,
        frame_vel,
        frame_v_d,
        H2,
        offset.tolist(),
        to_strike.tolist(),
        swinging,
        anchor,
        stance_scale,
    )
    # the reference: the feedback (v - v_d) s_fp with the error clipped, in heading axes
    v_leg = frame_vel[FRAME_OF_LEG, :2]
    err = np.clip((v_leg - frame_v_d[FRAME_OF_LEG]) @ H2, -0.5, 0.5)
    feedback = (err * v["fp"]) @ H2.T
    want = foot_placement(
        chains.hip_world[:, :2], v_leg, to_strike, stance_scale * v["stance_time"], offset, feedback
    )
    np.testing.assert_allclose(anchor[swinging], want[swinging], rtol=0, atol=1e-14)
    assert np.all(anchor[1] == 7.0)  # a stance foot keeps its anchor


@settings(max_examples=40, derandomize=True, deadline=None)
@given(
    st.floats(-0.6, 0.6),
    st.floats(-0.6, 0.6),
    st.floats(-3.0, 3.0),
    st.floats(-0.5, 0.5),
    st.integers(1, 4),
)
def test_spine_angles_are_the_quaternion_split_reference(
    back: float, front: float, yaw: float, bend: float, n: int
) -> None:
    got = spine_pitch_yaw(
        back,
        front,
        np.cos(yaw / 2),
        np.sin(yaw / 2),
        np.cos((yaw + bend) / 2),
        np.sin((yaw + bend) / 2),
        n,
    )
    want = split_spine(quat_from_pitch_yaw(back, yaw), quat_from_pitch_yaw(front, yaw + bend), n)
    np.testing.assert_allclose(np.broadcast_to(got, (n, 2)), want, rtol=0, atol=1e-12)


@settings(max_examples=30, derandomize=True, deadline=None)
@given(seeds, st.lists(st.booleans(), min_size=4, max_size=4))
def test_target_rates_and_hip_servo_are_the_numpy_expressions(seed: int, still: list[bool]) -> None:
    rng = np.random.default_rng(seed)
    n, dt = 38, 1e-3
    lower, upper = -rng.uniform(0.5, 2.0, n), rng.uniform(0.5, 2.0, n)
    target, previous = rng.normal(0.0, 1.5, n), rng.normal(0.0, 1.0, n)
    rate = rng.normal(0.0, 5.0, n)
    leg_idx = rng.permutation(n)[:20].reshape(4, 5).astype(np.intp)
    # the numpy reference
    want_target = np.minimum(np.maximum(target, lower), upper)
    raw = np.clip((want_target - previous) / dt, -30.0, 30.0)
    want_rate = rate + 0.1 * (raw - rate)
    want_rate[leg_idx[still].ravel()] = 0.0
    track_targets(target, lower, upper, previous, rate, leg_idx, still, dt, 30.0, 0.1)
    assert np.array_equal(target, want_target) and np.array_equal(previous, want_target)
    assert np.array_equal(rate, want_rate)
    gains, q, qd = rng.uniform(1.0, 400.0, (2, n)), rng.normal(size=n), rng.normal(size=n)
    out = np.empty((4, 2))
    hip_servo(gains, target, q, rate, qd, leg_idx[:, :2].copy(), out)
    servo = gains[0] * (target - q) + gains[1] * (rate - qd)
    assert np.array_equal(out, servo[leg_idx[:, :2]])


@settings(max_examples=40, derandomize=True, deadline=None)
@given(seeds, st.lists(st.booleans(), min_size=4, max_size=4))
def test_frame_wrenches_and_their_share_are_the_paper_terms(seed: int, support: list[bool]) -> None:
    rng = np.random.default_rng(seed)
    weight = rng.uniform(50.0, 200.0, 2)
    gains = [rng.uniform(1.0, 500.0, (2, 2))] + [rng.uniform(1.0, 500.0, 2) for _ in range(6)]
    frames_kernel = LegFrames(weight.tolist(), GRAVITY)
    frames_kernel.set_gains(*(g.tolist() for g in gains))
    kv, kp_h, kd_h, kp_o, kd_o, kp_yaw, kd_yaw = gains
    frames = rng.normal(0.0, 1.0, (2, 3, 3))  # per frame: position, velocity, angular velocity
    quat = rng.normal(size=(3, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    frame_R, R_desired = quat_to_matrix(quat[:2]), quat_to_matrix(quat[2])
    heading = rng.uniform(-3.0, 3.0)
    H2 = np.array([[np.cos(heading), -np.sin(heading)], [np.sin(heading), np.cos(heading)]])
    v_d, height_d = rng.normal(0.0, 1.0, (2, 2)), rng.normal(0.5, 0.2, (2, 3))
    yaw_err, w_d = rng.normal(0.0, 0.3, 2), rng.normal(0.0, 1.0, 3)
    speed, turn_rate = rng.uniform(0.0, 5.0), rng.normal(0.0, 0.5)
    frames_kernel.wrenches(
        frames, frame_R, R_desired, H2, v_d, height_d, yaw_err, w_d, speed, turn_rate
    )
    foot = rng.normal(0.0, 0.5, (4, 3))
    frames_kernel.share(frames_kernel.frame_force, frames_kernel.yaw_torque, foot, frames, support)
    for f in range(2):
        # k_v on the velocity error in heading axes, the centripetal force of the turn fed
        # forward, the height PD on the height wave plus the weight fed its acceleration
        error_in_heading = (v_d[f] - frames[f, 1, :2]) @ H2
        centripetal = weight[f] / GRAVITY * speed * turn_rate
        horizontal = H2 @ (kv[f] * error_in_heading + [0.0, centripetal])
        carried = weight[f] * (1.0 + height_d[f, 2] / GRAVITY)
        want = frame_force(
            height_d[f, 0] - frames[f, 0, 2],
            frames[f, 1, 2] - height_d[f, 1],
            horizontal,
            carried,
            kp_h[f],
            kd_h[f],
        )
        np.testing.assert_allclose(frames_kernel.frame_force[f], want, rtol=1e-12, atol=1e-9)
        yaw = kp_yaw[f] * yaw_err[f] + kd_yaw[f] * (turn_rate - frames[f, 2, 2])
        assert frames_kernel.yaw_torque[f] == pytest.approx(yaw, rel=1e-12, abs=1e-9)
        torque = kp_o[f] * rotation_error(R_desired, frame_R[f])
        torque -= kd_o[f] * (frames[f, 2] - w_d)
        np.testing.assert_allclose(frames_kernel.frame_torque[f], torque, rtol=1e-9, atol=1e-9)
        # the frame's force split evenly among its supporting feet, plus the yaw forces
        legs = slice(2 * f, 2 * f + 2)
        on = np.array(support[legs])
        lever = foot[legs, :2] - frames[f, 0, :2]
        shared = want * on[:, None] / max(on.sum(), 1)
        want_legs = shared + yaw_forces(frames_kernel.yaw_torque[f], lever, on)
        np.testing.assert_allclose(frames_kernel.leg_force[legs], want_legs, rtol=0, atol=1e-9)


def _in_frames(points: np.ndarray, origins: np.ndarray, R: np.ndarray) -> np.ndarray:
    """World points (4, 3) in their legs' frame coordinates, R^T (p - o) (LF, RF: front)."""
    return np.einsum("kji,kj->ki", R[FRAME_OF_LEG], points - origins[FRAME_OF_LEG])


@settings(max_examples=40, derandomize=True, deadline=None)
@given(seeds)
def test_leg_targets_are_swing_paths_and_planted_feet_in_their_frames(seed: int) -> None:
    plan, v = a_swing_plan(seed)
    rng = np.random.default_rng(seed + 3)
    progress = rng.uniform(0.0, 1.1, 4)
    stance, support = rng.random(4) < 0.5, rng.random(4) < 0.5
    liftoff, anchor = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    ground = rng.normal(0.0, 0.1, 4)
    frames = rng.normal(size=(2, 3, 3))
    quats = rng.normal(size=(2, 2, 4))
    R, R_d = quat_to_matrix(quats / np.linalg.norm(quats, axis=2, keepdims=True))
    height_d = rng.normal(size=(2, 3))
    foot = rng.normal(size=(4, 3))
    flags = (progress.tolist(), stance.tolist(), support.tolist())
    frame_args = (frames, np.ascontiguousarray(R), height_d, np.ascontiguousarray(R_d))
    got = plan.leg_targets(
        *flags, liftoff, anchor, ground.tolist(), ground.tolist(), None, *frame_args, foot
    )
    path = swing_path(liftoff, anchor, progress, v["height"], ground, shape=(v["skew"], v["early"]))
    swing = _in_frames(path, frames[:, 0], R)
    planted = np.c_[anchor, ground - np.where(support, 0.0, 0.02)]
    desired = frames[:, 0].copy()
    desired[:, 2] = height_d[:, 0]
    unclamped = _in_frames(planted, desired, R_d)
    held = unclamped.copy()
    foot_now = _in_frames(foot, frames[:, 0], R)[:, 2]
    # never above the foot, at most max_extend below it
    held[:, 2] = np.clip(held[:, 2], foot_now - v["max_extend"], foot_now)
    np.testing.assert_allclose(got, np.where(stance[:, None], held, swing), rtol=0, atol=1e-13)
    # a planted foot the clamp left alone, seen from its desired frame: back in the world
    # it is on its anchor
    for k in np.flatnonzero(stance & (held[:, 2] == unclamped[:, 2])):
        f = FRAME_OF_LEG[k]
        np.testing.assert_allclose(R_d[f] @ got[k] + desired[f], planted[k], atol=1e-12)
    # landing on higher ground: a swinging foot starts over the old and ends over the new
    swinging = [False] * 4
    for progress_now, rise in ((0.0, 0.0), (1.0, 0.1)):
        flags = ([progress_now] * 4, swinging, support.tolist())
        landing = (ground + 0.1).tolist()
        paths = (liftoff, anchor, ground.tolist())
        up = plan.leg_targets(*flags, *paths, landing, None, *frame_args, foot)
        flat = plan.leg_targets(*flags, *paths, ground.tolist(), None, *frame_args, foot)
        world_rise = np.einsum("kij,kj->ki", R[FRAME_OF_LEG], up - flat)[:, 2]
        np.testing.assert_allclose(world_rise, rise, atol=1e-12)
    # a floor lifts a swinging foot's target to it, in the world, and leaves it if below
    flags = ([0.5] * 4, swinging, support.tolist())
    free = plan.leg_targets(*flags, *paths, ground.tolist(), None, *frame_args, foot)
    free_z = np.einsum("kij,kj->ki", R[FRAME_OF_LEG], free)[:, 2] + frames[FRAME_OF_LEG, 0, 2]
    floor = free_z + np.array([0.05, -0.05, 0.2, -0.2])
    held = plan.leg_targets(*flags, *paths, ground.tolist(), floor.tolist(), *frame_args, foot)
    held_z = np.einsum("kij,kj->ki", R[FRAME_OF_LEG], held)[:, 2] + frames[FRAME_OF_LEG, 0, 2]
    np.testing.assert_allclose(held_z, np.maximum(free_z, floor), atol=1e-12)


HANGING = [*[j for pair in SKELETON.neck_joints for j in pair], *SKELETON.head_joints]
HANGING += [j for pair in SKELETON.tail_joints for j in pair]


def hanging_torques(q: np.ndarray, frame_R: np.ndarray) -> np.ndarray:
    """The controller's neck, head and tail holding torques, by joint name order of HANGING."""
    controller = Controller(SKELETON, GaitParams.load("trot"))
    tau = np.zeros(len(q))
    controller.hanging.torques(np.ascontiguousarray(frame_R), q, tau)
    return tau[[SKELETON.joint_names.index(j) for j in HANGING]]


def random_joint_angles(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lower, upper, _ = SKELETON.limits()
    return rng.uniform(lower, upper)


@settings(max_examples=20, derandomize=True, deadline=None)
@given(seeds)
def test_hanging_chain_torques_are_the_tree_statics_of_a_level_body(seed: int) -> None:
    q = random_joint_angles(seed)
    pose = tree_pose(SKELETON, q)  # the pelvis level; the chest where the spine puts it
    frame_R = np.stack([pose.link_rot["chest"], np.eye(3)])
    np.testing.assert_allclose(
        hanging_torques(q, frame_R),
        static_gravity_torques(SKELETON, HANGING, joint_angles=q),
        rtol=0,
        atol=1e-10,
    )


@settings(max_examples=20, derandomize=True, deadline=None)
@given(seeds)
def test_hanging_chain_torques_are_the_gradient_of_their_potential_energy(seed: int) -> None:
    """tau_j = dU/dq_j for U the chains' potential energy, roots turned at random."""
    q = random_joint_angles(seed)
    quat = np.random.default_rng(seed).normal(size=(2, 4))
    frame_R = quat_to_matrix(quat / np.linalg.norm(quat, axis=1, keepdims=True))
    roots = {"chest": frame_R[0], "pelvis": frame_R[1]}
    below = {"chest": ["neck1", "neck2", "head"], "pelvis": ["tail1", "tail2"]}

    def potential(qq: np.ndarray) -> float:
        pose = tree_pose(SKELETON, qq)
        energy = 0.0
        for root, links in below.items():
            # each chain in its root's frame, then turned by the root's rotation
            turn = roots[root] @ pose.link_rot[root].T
            for link in links:
                height = (turn @ (pose.com[link] - pose.link_pos[root]))[2]
                energy += MASS[link] * GRAVITY * height
        return energy

    tau = hanging_torques(q, frame_R)
    for k, name in enumerate(HANGING):
        d = np.zeros_like(q)
        d[SKELETON.joint_names.index(name)] = 1e-6
        numeric = (potential(q + d) - potential(q - d)) / 2e-6
        assert tau[k] == pytest.approx(numeric, abs=1e-6)
