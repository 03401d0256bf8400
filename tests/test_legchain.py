"""The control step's compiled arithmetic (controller/legchain.pyx: legs, leg frames, spine,
target rates) against the numpy and float-math references it replaced in the step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsim.controller.kinematics import quat_to_matrix
from quadsim.controller.legchain import (
    LegChains,
    LegFrames,
    SwingPlan,
    hip_servo,
    spine_pitch_yaw,
    track_targets,
)
from quadsim.controller.legframe import frame_force, share_frame_torque, yaw_forces
from quadsim.controller.legik import LegIK
from quadsim.controller.loop import BEND, FRAME_OF_LEG
from quadsim.controller.spine import quat_from_pitch_yaw, split_spine
from quadsim.controller.stand import GRAVITY, leg_kinematics
from quadsim.controller.swing import FootAngles, SwingPath, foot_placement
from quadsim.controller.virtual_force import jt_force, rotation_error
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
def test_ik_is_the_float_reference_bit_for_bit(seed: int, spread: float) -> None:
    # targets from within reach to well beyond it (the reach clamp), pitches either way
    rng = np.random.default_rng(seed)
    target = LEGS.hip + rng.normal(0.0, 0.2 * spread, (4, 3)) - [0.0, 0.0, 0.3]
    cannon, toe = rng.uniform(-1.0, 1.0, 4), rng.uniform(-1.0, 1.0, 4)
    args = target.tolist(), cannon.tolist(), toe.tolist()
    reference = LegIK(LEGS.hip, LEGS.lengths, BEND).solve(*args)
    solved = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT).solve_ik(*args)
    assert np.array_equal(solved, reference)


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
    )
    return plan, v


@settings(max_examples=40, derandomize=True, deadline=None)
@given(seeds)
def test_swing_paths_and_foot_angles_are_the_float_references_bit_for_bit(seed: int) -> None:
    plan, v = a_swing_plan(seed)
    rng = np.random.default_rng(seed + 1)
    progress = rng.uniform(-0.2, 1.1, 4)
    progress[rng.random(4) < 0.3] = -1.0  # stance
    liftoff, landing = rng.normal(size=(4, 2)).tolist(), rng.normal(size=(4, 2)).tolist()
    ground = rng.normal(0.0, 0.1, 4).tolist()
    path = SwingPath(v["height"], reach_below_m=0.02, shape=(v["skew"], v["early"]))
    assert plan.swing_path(progress.tolist(), liftoff, landing, ground) == path(
        liftoff, landing, progress.tolist(), ground
    )
    angles = FootAngles(
        (v["lead_off"], v["lead_strike"]),
        [
            (v["stance_cannon"], v["swing_cannon"], v["stance_cannon"], v["stance_cannon"]),
            (np.zeros(4), v["swing_cannon"], v["toe_off"], v["foot_strike"]),
        ],
    )
    timing = (
        progress.tolist(),
        rng.uniform(0.0, 0.1, 4).tolist(),
        rng.uniform(0.0, 0.1, 4).tolist(),
    )
    assert plan.foot_angles(*timing) == angles(*timing)


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
    plan.place_feet(
        chains, frame_vel, frame_v_d, H2, offset.tolist(), to_strike.tolist(), swinging, anchor
    )
    # the reference: the feedback (v - v_d) s_fp with the error clipped, in heading axes
    v_leg = frame_vel[FRAME_OF_LEG, :2]
    err = np.clip((v_leg - frame_v_d[FRAME_OF_LEG]) @ H2, -0.5, 0.5)
    feedback = (err * v["fp"]) @ H2.T
    want = foot_placement(
        chains.hip_world[:, :2], v_leg, to_strike, v["stance_time"], offset, feedback
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
    assert np.array_equal(np.broadcast_to(got, (n, 2)), want)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(seeds, st.lists(st.booleans(), min_size=4, max_size=4), st.booleans())
def test_frame_forces_are_the_leg_frame_references(
    seed: int, support: list[bool], turning: bool
) -> None:
    rng = np.random.default_rng(seed)
    weight = np.array([180.0, 160.0])
    gains = {
        name: rng.uniform(50.0, 900.0, 2)
        for name in ("kp_h", "kd_h", "kp_o", "kd_o", "kp_yaw", "kd_yaw")
    }
    kv, max_pull = rng.uniform(50.0, 400.0, (2, 2)), [math.inf, 0.3 * weight[1]]
    frames = LegFrames(weight, GRAVITY, 0.6, 3.0, 0.3, 1.0)
    frames.set_gains(
        kv,
        gains["kp_h"],
        gains["kd_h"],
        gains["kp_o"],
        gains["kd_o"],
        gains["kp_yaw"],
        gains["kd_yaw"],
        max_pull,
    )
    quat = rng.normal(size=(3, 4))
    frame_R, R_desired = (
        quat_to_matrix(quat[:2] / np.linalg.norm(quat[:2], axis=1)[:, None]),
        quat_to_matrix(quat[2] / np.linalg.norm(quat[2])),
    )
    pos, vel, angvel = rng.normal(0.0, 0.3, (3, 2, 3))
    heading = rng.uniform(-3.0, 3.0)
    H2 = np.array([[np.cos(heading), -np.sin(heading)], [np.sin(heading), np.cos(heading)]])
    speed, turn_rate = 1.5, (0.4 if turning else 0.0)
    v_d, z_d, rate, accel = (
        rng.normal(0.0, 0.5, (2, 2)),
        rng.normal(0.5, 0.02, 2),
        rng.normal(0.0, 0.1, 2),
        rng.normal(0.0, 1.0, 2),
    )
    yaw_err, w_d = rng.normal(0.0, 0.1, 2), rng.normal(0.0, 0.2, 3)
    foot = pos[FRAME_OF_LEG] + rng.normal(0.0, 0.2, (4, 3))
    dt = 1e-3
    frames.v_int = 0.1
    frames.forces(
        pos,
        vel,
        angvel,
        frame_R,
        R_desired,
        H2,
        speed,
        v_d,
        turn_rate,
        z_d,
        rate,
        accel,
        yaw_err.tolist(),
        w_d.tolist(),
        foot,
        support,
        dt,
    )
    # the reference, frame by frame
    body_v = 0.5 * (vel[0, :2] + vel[1, :2]) @ H2[:, 0]
    v_int = min(max(0.1 + (speed - body_v) * dt, -0.6), 0.6)
    assert frames.v_int == pytest.approx(v_int, abs=1e-15)
    for f in range(2):
        legs = [2 * f, 2 * f + 1]
        on = np.array([support[k] for k in legs])
        if not on.any():
            assert np.all(frames.leg_force[legs] == 0.0) and np.all(frames.frame_torque[f] == 0.0)
            continue
        err = (v_d[f] + H2[:, 0] * v_int / 3.0 - vel[f, :2]) @ H2
        push = H2 @ (kv[f] * err)
        if turning:
            push += weight[f] / GRAVITY * speed * turn_rate * H2[:, 1]
        F = frame_force(
            z_d[f] - pos[f, 2],
            vel[f, 2] - rate[f],
            push,
            weight[f] * (1.0 + accel[f] / GRAVITY),
            gains["kp_h"][f],
            gains["kd_h"][f],
            max_pull[f],
        )
        yaw_torque = gains["kp_yaw"][f] * yaw_err[f] + gains["kd_yaw"][f] * (
            turn_rate - angvel[f, 2]
        )
        if turning:  # the heading integral, from zero
            yaw_torque += gains["kp_yaw"][f] * min(max(yaw_err[f] * dt, -0.3), 0.3)
        want = yaw_forces(yaw_torque, (foot[legs] - pos[f])[:, :2], on) + np.outer(on, F / on.sum())
        np.testing.assert_allclose(frames.leg_force[legs], want, rtol=1e-12, atol=1e-9)
        torque = gains["kp_o"][f] * rotation_error(R_desired, frame_R[f]) - gains["kd_o"][f] * (
            angvel[f] - w_d
        )
        np.testing.assert_allclose(frames.frame_torque[f], torque, rtol=1e-12, atol=1e-9)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(
    seeds,
    st.lists(st.booleans(), min_size=4, max_size=4),
    st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_leg_targets_pose_stance_legs_in_the_desired_frame_and_swing_legs_on_their_path(
    seed: int, stance: list[bool], support: list[bool]
) -> None:
    plan, v = a_swing_plan(seed)
    q, R_leg, origin = random_pose(seed)
    chains = LegChains(LEGS.hip, LEGS.lengths, BEND, SEG_WEIGHT)
    rng = np.random.default_rng(seed + 3)
    frame_R, frame_pos = R_leg[::2].copy(), origin[::2].copy()
    tilt = np.array([0.0, 0.05, 0.1, 0.99])
    R_desired = quat_to_matrix(tilt / np.linalg.norm(tilt))
    progress = np.where(stance, -1.0, rng.uniform(0.0, 1.0, 4))
    to_liftoff, to_strike = rng.uniform(0.0, 0.1, 4), rng.uniform(0.0, 0.1, 4)
    liftoff, anchor = rng.normal(0.0, 0.3, (4, 2)), rng.normal(0.0, 0.3, (4, 2))
    ground, foot = rng.normal(0.0, 0.02, 4), rng.normal(0.0, 0.3, (4, 3))
    z_d, pitch_d, frame_pitch, radius = rng.uniform(0.4, 0.5, 2), 0.05, [0.1, -0.1], 0.02
    got = plan.leg_angles(
        chains,
        progress.tolist(),
        to_liftoff.tolist(),
        to_strike.tolist(),
        stance,
        support,
        liftoff,
        anchor,
        ground.tolist(),
        foot,
        frame_R,
        frame_pos,
        R_desired,
        z_d.tolist(),
        pitch_d,
        frame_pitch,
        radius,
    ).copy()
    # the reference, leg by leg
    path = SwingPath(v["height"], reach_below_m=0.02, shape=(v["skew"], v["early"]))
    swing_target = path(
        liftoff.tolist(), anchor.tolist(), progress.tolist(), (ground + radius).tolist()
    )
    cannon, toe = plan.foot_angles(progress.tolist(), to_liftoff.tolist(), to_strike.tolist())
    target, cannon_pitch, toe_pitch = [], [], []
    for k in range(4):
        f = FRAME_OF_LEG[k]
        if stance[k]:
            below = 0.0 if support[k] else 0.02
            rel = [*(anchor[k] - frame_pos[f, :2]), ground[k] + radius - below - z_d[f]]
            local = R_desired.T @ rel
            local[2] = min(local[2], (frame_R[f].T @ (foot[k] - frame_pos[f]))[2])
            plane = pitch_d
        else:
            local, plane = frame_R[f].T @ (swing_target[k] - frame_pos[f]), frame_pitch[f]
        target.append(local.tolist())
        cannon_pitch.append(cannon[k] - plane)
        toe_pitch.append(toe[k] - plane)
    want = LegIK(LEGS.hip, LEGS.lengths, BEND).solve(target, cannon_pitch, toe_pitch)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


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
