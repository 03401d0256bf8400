"""The pure parts of the control step: kinematics, IK, virtual forces, swing, spine."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.frames import frame_force, rotation_error, share_frame_torque, yaw_forces
from reference.legs import jt_force, leg_ik
from reference.spine import quat_from_pitch_yaw, quat_multiply, split_spine
from reference.swing import foot_angles, foot_placement, swing_path

from quadsim.controller.kinematics import pitch_of, quat_to_matrix, rot_x, rot_y
from quadsim.controller.loop import (
    BEND,
    CHEST,
    FRONT,
    V_INT_MAX_TERRAIN,
    V_INT_UNWIND,
    Controller,
    ground_pitch,
)
from quadsim.controller.sim import World
from quadsim.controller.spine import pitch_yaw_quat
from quadsim.controller.stand import leg_kinematics
from quadsim.controller.terrain import parse_terrain
from quadsim.gaits.params import PULL_UNLIMITED, GaitParams
from quadsim.models import GRAVITY_MPS2, build_skeleton, preset
from quadsim.models import LEGS as LEG_NAMES

SKELETON = build_skeleton(preset("shepherd"))
LEGS, LEG_IDX = leg_kinematics(SKELETON)
angles_4x5 = st.lists(st.floats(-0.8, 0.8), min_size=20, max_size=20).map(
    lambda v: np.array(v).reshape(4, 5)
)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(angles_4x5)
def test_foot_jacobian_matches_finite_differences(angles: np.ndarray) -> None:
    _, jac = LEGS.foot_jacobian(angles)
    eps = 1e-6
    for j in range(5):
        d = np.zeros_like(angles)
        d[:, j] = eps
        plus, minus = LEGS.forward(angles + d)[0][:, 4], LEGS.forward(angles - d)[0][:, 4]
        numeric = (plus - minus) / (2 * eps)
        assert np.allclose(jac[:, :, j], numeric, atol=1e-8)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(angles_4x5)
def test_leg_ik_lands_the_foot_on_its_target(angles: np.ndarray) -> None:
    # reachable targets: forward kinematics of the standing pose moved by random angles
    q = SKELETON.stand_angles()[LEG_IDX] + 0.3 * angles
    q[:, 2] = np.where(BEND < 0, -np.abs(q[:, 2]) - 0.1, np.abs(q[:, 2]) + 0.1)
    pos, _ = LEGS.forward(q)
    cannon = q[:, 1] + q[:, 2] + q[:, 3]
    toe = cannon + q[:, 4]
    solved = leg_ik(pos[:, 4], LEGS.hip, LEGS.lengths, cannon, toe, BEND, max_reach=1.0)
    again, _ = LEGS.forward(solved)
    assert np.allclose(again[:, 4], pos[:, 4], atol=1e-9)
    assert np.allclose(solved, q, atol=1e-7)  # the anatomical branch is the one it came from


def test_swing_gravity_compensation_is_the_gradient_of_potential_energy() -> None:
    ctrl = Controller(SKELETON, GaitParams.load("trot"))
    rng = np.random.default_rng(1)
    q = rng.normal(0.0, 0.3, (4, 5))
    quat = np.array([0.1, 0.05, 0.2, 0.97])
    R = quat_to_matrix(np.tile(quat / np.linalg.norm(quat), (4, 1)))

    def potential(qq: np.ndarray) -> np.ndarray:
        p, _ = ctrl.legs.forward(qq)
        pw = np.einsum("kij,ksj->ksi", R, p)
        return (ctrl.seg_mass * GRAVITY_MPS2 * 0.5 * (pw[:, :4, 2] + pw[:, 1:, 2])).sum(axis=1)

    ctrl.chains.update(q, R, np.zeros((4, 3)))  # the controller's legs, with its masses
    tau = np.array(ctrl.chains.swing_gravity([True] * 4))
    for j in range(5):
        d = np.zeros_like(q)
        d[:, j] = 1e-6
        assert np.allclose(tau[:, j], (potential(q + d) - potential(q - d)) / 2e-6, atol=1e-6)


def test_jt_force_does_the_work_of_the_force() -> None:
    rng = np.random.default_rng(2)
    jac, force, qdot = rng.normal(size=(3, 5)), rng.normal(size=3), rng.normal(size=5)
    assert jt_force(jac, force) @ qdot == pytest.approx(force @ (jac @ qdot))  # virtual work


def test_rotation_error_turns_r_into_r_desired() -> None:
    R = rot_x(np.array(0.3)) @ rot_y(np.array(-0.2))
    err = rotation_error(np.eye(3), R)
    angle = np.linalg.norm(err)
    axis = err / angle
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    turn = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
    assert np.allclose(turn @ R, np.eye(3), atol=1e-12)


def test_yaw_forces_make_the_asked_torque_and_no_net_force() -> None:
    lever = np.array([[0.3, 0.1], [0.3, -0.1], [-0.3, 0.1], [-0.3, -0.1]])
    stance = np.array([True, False, False, True])
    f = yaw_forces(12.0, lever, stance)
    torque = np.sum(lever[:, 0] * f[:, 1] - lever[:, 1] * f[:, 0])
    assert torque == pytest.approx(12.0)
    assert np.allclose(f[~stance], 0.0)


def test_frame_force_pulls_the_frame_down_by_at_most_its_limit() -> None:
    # a frame 2 cm above its height and rising: the height PD asks for a net pull
    args = (-0.02, 0.3, np.array([5.0, -1.0]), 150.0, 10000.0, 900.0)
    want = -0.02 * 10000.0 - 0.3 * 900.0 + 150.0
    assert want < -300.0
    assert frame_force(*args) == pytest.approx([5.0, -1.0, want])
    assert frame_force(*args, max_pull=100.0) == pytest.approx([5.0, -1.0, -100.0])
    assert frame_force(*args, max_pull=0.0)[2] == 0.0  # the feet only push
    # a push is left alone
    assert frame_force(0.01, 0.0, np.zeros(2), 150.0, 10000.0, 900.0, 0.0)[2] == 250.0


@pytest.mark.parametrize(("front", "back"), [(0.0, 0.5), (PULL_UNLIMITED, 1.0)])
def test_each_frame_pulls_its_stance_feet_by_at_most_its_gaits_limit(
    front: float, back: float
) -> None:
    gait = GaitParams.load("trot")
    values = {**gait.values, "stance_pull_max.front": front, "stance_pull_max.back": back}
    with World() as world:
        ctrl = Controller(world.skeleton, replace(gait, values=values))
        ctrl.command.speed_mps = 2.0
        state = world.read_state()  # standing: every foot on the ground
        # the pelvis and chest 5 cm above their heights and rising: the height PD asks for
        # a pull far beyond either limit but the unlimited one
        state.base_pos[2] += 0.05
        state.link_pos[CHEST, 2] += 0.05
        state.base_vel[2] = state.link_vel[CHEST, 2] = 0.5
        ctrl.step(state)
    weight = ctrl.frame_weight
    # the unlimited bound passes no limit at all, so that older gait files run as before
    want = [
        math.inf if share == PULL_UNLIMITED else share * w
        for share, w in zip((front, back), weight, strict=True)
    ]
    assert ctrl.gait.max_pull == want
    # each frame's supporting feet together pull by at most its limit, and the unlimited
    # frame's feet pull by more than any finite limit here
    pull = -ctrl.leg_frames.leg_force[:, 2].reshape(2, 2).sum(axis=1)
    for f, limit in enumerate(want):
        assert pull[f] <= limit * (1 + 1e-12)
        if limit == math.inf:
            assert pull[f] > weight[f]


def test_stance_hips_together_give_the_leg_frame_its_torque() -> None:
    axes = np.array([[[1.0, 0, 0], [0, 1.0, 0]], [[1.0, 0, 0], [0, 1.0, 0]]])
    want = np.array([3.0, -5.0, 0.0])
    out = share_frame_torque(want, axes, np.array([True, True]))
    on_frame = -np.einsum("ka,kaj->j", out, axes)  # a joint acts on its parent with -tau
    assert np.allclose(on_frame, want)
    assert np.allclose(share_frame_torque(want, axes, np.array([False, False])), 0.0)


def compose_spine(back: np.ndarray, targets: np.ndarray) -> np.ndarray:
    total = back
    for pitch, yaw in targets:  # each joint: pitch about y, then yaw about z
        total = quat_multiply(
            total, quat_multiply(quat_from_pitch_yaw(pitch, 0.0), quat_from_pitch_yaw(0.0, yaw))
        )
    return total


@pytest.mark.parametrize(("pitch", "yaw"), [(0.0, 0.4), (-0.2, 0.0), (0.1, -0.3)])
def test_spine_split_shares_the_leg_frame_difference_evenly(pitch: float, yaw: float) -> None:
    back = quat_from_pitch_yaw(0.05, 0.2)
    front = quat_multiply(back, quat_from_pitch_yaw(pitch, yaw))
    targets = split_spine(back, front, 4)
    assert np.allclose(targets, targets[0])  # the same share at every joint
    composed = quat_to_matrix(compose_spine(back, targets))
    err = np.linalg.norm(rotation_error(quat_to_matrix(front), composed))
    if pitch == 0.0 or yaw == 0.0:
        assert targets[0] == pytest.approx([pitch / 4, yaw / 4], abs=1e-12)
        assert err < 1e-12
    else:  # pitch-yaw joints cannot roll: the split is exact only to second order
        assert err < 0.02


def test_swing_path_starts_at_lift_off_and_ends_at_the_landing_point() -> None:
    lift, land = np.zeros((4, 2)), np.full((4, 2), 0.3)
    ground, height = np.zeros(4), np.full(4, 0.1)

    def at(progress: float) -> np.ndarray:
        return swing_path(lift, land, np.full(4, progress), height, ground, touch_at=0.8)

    assert np.allclose(at(0.0)[:, :2], lift) and np.allclose(at(0.0)[:, 2], 0.0)
    assert np.allclose(at(0.4)[:, 2], 0.1)  # the top of the step half-way to touch-down
    assert np.allclose(at(0.8)[:, :2], land) and np.allclose(at(0.8)[:, 2], 0.0)
    assert np.all(at(1.0)[:, 2] < 0.0)  # then reaches into the ground: it strikes
    # it arrives slowly: the height changes little just before touch-down
    assert np.all(at(0.78)[:, 2] < 0.01)


def test_foot_placement_centres_the_stance_under_the_hip() -> None:
    hip = np.zeros((4, 2))
    v = np.tile([2.0, 0.0], (4, 1))
    p = foot_placement(hip, v, np.zeros(4), np.full(4, 0.2), np.zeros((4, 2)), np.zeros((4, 2)))
    # the hip travels 0.4 m over the stance: the foot lands 0.2 m ahead of it
    assert np.allclose(p[:, 0], 0.2) and np.allclose(p[:, 1], 0.0)


def test_foot_angles_ramp_into_toe_off_and_strike() -> None:
    args = dict(
        stance_value=np.zeros(4),
        swing_value=np.full(4, 1.0),
        off_value=np.full(4, 0.5),
        strike_value=np.full(4, -0.2),
        lead_off=np.full(4, 0.1),
        lead_strike=np.full(4, 0.1),
    )
    stance_far = foot_angles(
        swing_progress=-np.ones(4),
        time_to_liftoff=np.full(4, 0.3),
        time_to_strike=np.zeros(4),
        **args,
    )
    stance_near = foot_angles(
        swing_progress=-np.ones(4),
        time_to_liftoff=np.full(4, 0.05),
        time_to_strike=np.zeros(4),
        **args,
    )
    strike = foot_angles(
        swing_progress=np.full(4, 0.999),
        time_to_liftoff=np.zeros(4),
        time_to_strike=np.zeros(4),
        **args,
    )
    assert np.allclose(stance_far, 0.0)
    assert np.allclose(stance_near, 0.25)  # half-way into toe-off
    assert np.allclose(strike, -0.2)


def _stepped(values: dict[str, float], prepare=None) -> tuple[Controller, object, object]:
    """A trot controller with `values` changed, after one step from standing (the state
    changed by `prepare`), its servo command and the state it stepped from."""
    gait = GaitParams.load("trot")
    with World() as world:
        ctrl = Controller(world.skeleton, replace(gait, values={**gait.values, **values}))
        ctrl.command.speed_mps = 2.0
        state = world.read_state()
    if prepare is not None:
        prepare(ctrl, state)
    return ctrl, ctrl.step(state), state


def test_the_spine_applies_its_share_of_the_chests_pitch_and_yaw_torque() -> None:
    def spinning_chest(ctrl: Controller, state) -> None:  # the orientation PD has work
        state.link_angvel[CHEST] = [0.4, -0.9, 0.7]

    damped = {"kd_orient_Nms_per_rad.front": 40.0}  # not the preset's, which may be low
    full, full_command, _ = _stepped(damped | {"spine_torque_share": 0.0}, spinning_chest)
    split, split_command, state = _stepped(damped | {"spine_torque_share": 0.6}, spinning_chest)
    wanted = full.leg_frames.frame_torque[0]
    assert np.linalg.norm(wanted) > 10.0
    spine = split.spine_idx
    pitch = split_command.tau_ff[spine[:, 0]] - full_command.tau_ff[spine[:, 0]]
    yaw = split_command.tau_ff[spine[:, 1]] - full_command.tau_ff[spine[:, 1]]
    assert np.allclose(pitch, pitch[0]) and np.allclose(yaw, yaw[0])  # every spine joint
    # the spine's axes: the chest's and the pelvis's, halfway
    R = [quat_to_matrix(state.link_quat[CHEST]), quat_to_matrix(state.base_quat)]
    axes = [(R[0][:, k] + R[1][:, k]) / np.linalg.norm(R[0][:, k] + R[1][:, k]) for k in (1, 2)]
    assert pitch[0] == pytest.approx(0.6 * axes[0] @ wanted, rel=1e-9)
    assert yaw[0] == pytest.approx(0.6 * axes[1] @ wanted, rel=1e-9)
    # the fore legs are left the rest: together with the spine, the chest gets its torque
    by_spine = pitch[0] * axes[0] + yaw[0] * axes[1]
    np.testing.assert_allclose(split.leg_frames.frame_torque[0] + by_spine, wanted, atol=1e-9)


def test_stance_feet_add_their_push_as_a_half_sine_over_their_stance() -> None:
    phase = 0.25  # the trot's RF and LH in stance, LF and RH swinging

    def at_phase(ctrl: Controller, state) -> None:
        ctrl.reset(state)
        ctrl.state.phase = phase

    push = {f"stance_push_fwd.{leg}": 0.2 for leg in LEG_NAMES}
    push |= {f"stance_push_up.{leg}": -0.1 for leg in LEG_NAMES}
    plain, _, _ = _stepped({}, at_phase)
    pushed, _, _ = _stepped(push, at_phase)
    swing, stance_progress = GaitParams.load("trot").graph().progress(phase)
    added = pushed.leg_frames.leg_force - plain.leg_frames.leg_force
    for k in range(4):
        if swing[k] >= 0.0:
            assert np.allclose(added[k], 0.0)
            continue
        weight = pushed.frame_weight[k // 2] * np.sin(np.pi * stance_progress[k])
        assert 0.0 < stance_progress[k] < 1.0
        np.testing.assert_allclose(added[k], [0.2 * weight, 0.0, -0.1 * weight], atol=1e-9)


def test_the_ground_pitch_is_the_slope_the_feet_stand_on() -> None:
    slope = math.radians(10.0)
    feet = np.array([[0.9, 0.1, 0.0], [0.8, -0.1, 0.0], [0.1, 0.1, 0.0], [0.0, -0.1, 0.0]])
    up_front, up_back = 0.85 * math.tan(slope), 0.05 * math.tan(slope)
    assert ground_pitch(feet, up_front, up_back) == pytest.approx(-slope)  # uphill: nose up
    assert ground_pitch(feet, up_back, up_front) == pytest.approx(slope)
    turned = feet @ rot_z_rows(0.7)  # the heading does not matter, only the distance
    assert ground_pitch(turned, up_front, up_back) == pytest.approx(-slope)
    assert ground_pitch(feet, 0.02, 0.02) == 0.0


def test_pitch_of_a_quaternion_is_its_nose_down_pitch_whatever_its_yaw() -> None:
    for pitch in (-0.6, -0.1, 0.0, 0.3, 1.2):
        for yaw in (0.0, 0.9, -2.5):
            quat = np.array(pitch_yaw_quat(pitch, math.cos(yaw / 2), math.sin(yaw / 2)))
            assert pitch_of(quat) == pytest.approx(pitch, abs=1e-12)
            rows = quat_to_matrix(quat)
            assert pitch_of(quat) == pytest.approx(math.asin(-rows[2, 0]), abs=1e-12)


def rot_z_rows(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])


def _trot_standing_on(terrain: str | None) -> tuple[Controller, object]:
    """A trot controller under a 2 m/s command, reset on the standing dog's state (returned)
    in a World of `terrain` (flat if None), which it reads."""
    with World() as world:
        if terrain is not None:
            world.add_terrain(parse_terrain(terrain))
        ctrl = Controller(world.skeleton, GaitParams.load("trot"), ground_map=world.ground_map)
        ctrl.command.speed_mps = 2.0
        state = world.read_state()
    ctrl.reset(state)
    return ctrl, state


def _early_strike_targets(liftoff_x: float) -> np.ndarray:
    """The trot's joint targets one step after its LF foot, late in its swing, struck the
    ground where it stands, having lifted off at x = liftoff_x on 6 cm steps."""
    graph = GaitParams.load("trot").graph()
    phase = next(p for p in np.arange(0.0, 1.0, 0.001) if graph.progress(p)[0][0] > 0.9)
    ctrl, state = _trot_standing_on("steps:0.06:1")
    ctrl.state.phase = phase
    ctrl.state.liftoff[0] = (liftoff_x, state.foot_pos[0, 1])
    state.foot_contact[0] = True
    return ctrl.step(state).q_target[ctrl.leg_idx[0]]


def test_a_foot_that_strikes_early_stands_on_the_ground_it_struck() -> None:
    # lifted off on a block's top (x = 2 m, 6 cm up) or on the flat: the same stance
    on_block, on_flat = _early_strike_targets(2.0), _early_strike_targets(1.0)
    np.testing.assert_allclose(on_block, on_flat, atol=1e-12)


def _speed_integral_after(body_speed: float, integral: float, terrain: str | None) -> float:
    """The trot's speed integral [m] one 1 ms step after it stood at `integral` with its body
    at `body_speed` [m/s] along its heading (+x) under a 2 m/s command, on `terrain`."""
    ctrl, state = _trot_standing_on(terrain)
    ctrl.state.speed, ctrl.state.v_int = 2.0, integral
    state.base_vel[:] = state.link_vel[CHEST] = (body_speed, 0.0, 0.0)
    ctrl.step(state)
    assert ctrl.dt == 0.001
    return ctrl.state.v_int


def test_on_terrain_the_speed_integral_empties_fast_once_the_body_overshoots() -> None:
    # a climb's shortfall filled the integral; past the command by more than its band (10%
    # of 2 m/s), it empties V_INT_UNWIND times faster than it filled
    filled, dt = 0.25, 0.001
    for body_speed, rate in ((1.6, 1.0), (2.1, 1.0), (2.4, V_INT_UNWIND), (2.8, V_INT_UNWIND)):
        after = _speed_integral_after(body_speed, filled, "slope:10")
        assert after - filled == pytest.approx(rate * (2.0 - body_speed) * dt, rel=1e-9)
    # an empty or negative integral charges at the plain rate
    after = _speed_integral_after(2.4, -0.1, "slope:10")
    assert after + 0.1 == pytest.approx(-0.4 * dt, rel=1e-9)
    # flat ground runs none of the terrain's code: the plain rate
    after = _speed_integral_after(2.4, filled, None)
    assert after - filled == pytest.approx(-0.4 * dt, rel=1e-9)
    # a shortfall fills it up to a lower bound on terrain than on flat ground
    assert _speed_integral_after(1.0, V_INT_MAX_TERRAIN, "slope:10") == V_INT_MAX_TERRAIN
    assert _speed_integral_after(1.0, V_INT_MAX_TERRAIN, None) > V_INT_MAX_TERRAIN


@pytest.mark.parametrize("sideways", [0.2, 0.6, 1.5])
def test_a_pushed_gait_quickens_its_stride_clock_by_its_velocity_error(sideways: float) -> None:
    gain, deadband = 1.5, 0.3
    quick = {"quicken_s_per_m": gain, "quicken_deadband_mps": deadband}
    plain, _, _ = _stepped({"quicken_s_per_m": 0.0})
    quickened, _, _ = _stepped(quick)
    # the pelvis flung sideways, as by a push, while it should go 1 m/s forward
    frames = SimpleNamespace(frames=np.zeros((2, 3, 3)), v_d=np.array([[1.0, 0.0], [1.0, 0.0]]))
    frames.frames[:, 1] = [1.0, sideways, 0.0]
    straight = SimpleNamespace(turn_rate=0.0)
    want = min(1.0 + gain * max(sideways - deadband, 0.0), 2.0)
    assert plain.cadence(frames, straight) == 1.0  # a gait without the gain never quickens
    assert quickened.cadence(frames, straight) == pytest.approx(want, rel=1e-12)
    frames.frames[FRONT, 1] = [3.0, 2.0, 0.0]  # the chest's error does not count
    assert quickened.cadence(frames, straight) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("turn_rate", [-0.8, -0.3, 0.5, 1.2])
def test_a_turning_gait_quickens_its_stride_clock_by_its_turn_rate(turn_rate: float) -> None:
    gain = 0.4
    plain, _, _ = _stepped({"quicken_s_per_m": 0.0, "turn_quicken_s_per_rad": 0.0})
    turning, _, _ = _stepped({"quicken_s_per_m": 0.0, "turn_quicken_s_per_rad": gain})
    both, _, _ = _stepped(
        {"quicken_s_per_m": 1.5, "quicken_deadband_mps": 0.3, "turn_quicken_s_per_rad": gain}
    )
    frames = SimpleNamespace(frames=np.zeros((2, 3, 3)), v_d=np.array([[1.0, 0.0], [1.0, 0.0]]))
    frames.frames[:, 1] = [1.0, 0.0, 0.0]  # on its desired velocity: no push to quicken for
    heading = SimpleNamespace(turn_rate=turn_rate)
    assert plain.cadence(frames, heading) == 1.0  # a gait without the gain keeps its clock
    assert turning.cadence(frames, heading) == pytest.approx(1.0 + gain * abs(turn_rate))
    assert turning.cadence(frames, SimpleNamespace(turn_rate=0.0)) == 1.0  # straight
    frames.frames[:, 1] = [1.0, 0.7, 0.0]  # pushed 0.7 m/s sideways while turning: the sum
    want = min(1.0 + gain * abs(turn_rate) + 1.5 * (0.7 - 0.3), 2.0)
    assert both.cadence(frames, heading) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("speed", [0.0, 0.8, 1.6, 2.0, 3.1, 5.0])
def test_the_stride_period_falls_with_speed_as_the_gait_asks(speed: float) -> None:
    ref, exponent = 2.0, 0.8
    plain, _, _ = _stepped({"quicken_s_per_m": 0.0})
    scaled, _, _ = _stepped(
        {"quicken_s_per_m": 0.0, "stride_speed_exponent": exponent, "stride_speed_ref_mps": ref}
    )
    turned, _, _ = _stepped(
        {
            "quicken_s_per_m": 0.0,
            "stride_speed_exponent": exponent,
            "stride_speed_ref_mps": ref,
            "turn_quicken_s_per_rad": 0.5,
        }
    )
    frames = SimpleNamespace(frames=np.zeros((2, 3, 3)), v_d=np.array([[1.0, 0.0], [1.0, 0.0]]))
    heading = SimpleNamespace(turn_rate=0.0, speed=speed)
    rate = min(max(speed / ref, 1.0), 2.0) ** exponent  # slower: period_s; at most 2 v_ref
    assert plain.cadence(frames, heading) == 1.0  # without the exponent, one period
    assert scaled.cadence(frames, heading) == pytest.approx(rate, rel=1e-12)
    # the stride lasts period_s up to the reference speed
    assert scaled.cadence(frames, SimpleNamespace(turn_rate=0.0, speed=0.9 * ref)) == 1.0
    # a turn's quickening multiplies the speed's rate
    heading.turn_rate = 0.6
    assert turned.cadence(frames, heading) == pytest.approx(rate * 1.3, rel=1e-12)


def test_the_stride_clock_runs_at_the_cadence_of_the_step() -> None:
    def knocked(ctrl: Controller, state) -> None:
        state.base_vel[:] = [0.0, 1.2, 0.0]

    ctrl, _, _ = _stepped({"quicken_s_per_m": 2.0, "quicken_deadband_mps": 0.3}, knocked)
    assert ctrl.state.cadence > 1.5  # the pelvis's error is about 1.2 m/s
    period = ctrl.params.graph().period_s
    assert ctrl.state.phase == pytest.approx(ctrl.state.cadence * ctrl.dt / period, rel=1e-12)
