"""World: standing, torque limits, independence, determinism, falls and instability."""

from __future__ import annotations

import numpy as np
import pytest
from reference.servo import implicit_pd

from quadsim.controller.episode import run_episode
from quadsim.controller.pd import ServoCommand
from quadsim.controller.sim import Push, World
from quadsim.controller.stand import StandController
from quadsim.models import preset


def stand(world: World, seconds: float, seed: int | None = None) -> list:
    """Stand for `seconds`; with a seed, from a randomly perturbed start pose."""
    if seed is not None:
        rng = np.random.default_rng(seed)
        world.place_dog(world.skeleton.stand_angles() + rng.normal(0.0, 0.01, world.n_joints))
    ctrl = StandController(world.skeleton)
    states = []
    for _ in range(int(round(seconds / world.dt))):
        s = world.read_state()
        states.append(s)
        world.drive(ctrl.step(s), s.q, s.qd)
        world.step()
    return states


def test_dog_stands_ten_seconds_with_little_height_drift() -> None:
    with World() as world:
        result = run_episode(world, StandController(world.skeleton), 10.0)
    assert result.status == "ok"
    t, z = result.log["t"], result.log["base_pos"][:, 2]
    settled = z[np.searchsorted(t, 1.0)]
    assert np.max(np.abs(z[t >= 1.0] - settled)) < 0.02
    assert np.all(result.log["foot_contact"][t >= 1.0].mean(axis=0) > 0.95)


def test_torque_beyond_the_limit_is_applied_at_the_limit() -> None:
    k_name = "LH_knee"

    def knee_after(scale: float) -> tuple[np.ndarray, np.ndarray]:
        with World() as world:
            k = world.skeleton.joint_index(k_name)
            tau = np.zeros(world.n_joints)
            tau[k], tau[k + 1] = scale * world.torque_limit[k], -scale * world.torque_limit[k + 1]
            applied = world.apply(tau)
            world.step()
            return applied, world.read_state().qd

    applied_10x, qd_10x = knee_after(10.0)
    applied_1x, qd_1x = knee_after(1.0)
    _, qd_half = knee_after(0.5)
    assert np.array_equal(applied_10x, applied_1x)
    assert np.array_equal(qd_10x, qd_1x)  # the physics saw exactly the limit
    assert not np.array_equal(qd_1x, qd_half)


def test_two_worlds_in_one_process_are_independent_and_identical() -> None:
    with World() as a, World() as b:
        ctrl_a = StandController(a.skeleton)
        ctrl_b = StandController(b.skeleton)
        b.add_push(Push(0.0, (0.0, 50.0, 0.0), 0.05))  # only b is pushed
        for _ in range(300):
            sa, sb = a.read_state(), b.read_state()
            a.drive(ctrl_a.step(sa), sa.q, sa.qd)
            a.step()
            b.drive(ctrl_b.step(sb), sb.q, sb.qd)
            b.step()
        pushed_y = b.read_state().base_pos[1]
    with World() as c:
        alone = stand(c, 300 * c.dt)[-1]
    assert np.array_equal(sa.q, alone.q)  # a was not disturbed by b
    assert abs(pushed_y - alone.base_pos[1]) > 1e-4


def test_same_seed_gives_bit_identical_state_after_two_seconds() -> None:
    with World() as w1:
        s1 = stand(w1, 2.0, seed=3)[-1]
    with World() as w2:
        s2 = stand(w2, 2.0, seed=3)[-1]
    with World() as w3:
        s3 = stand(w3, 2.0, seed=4)[-1]
    assert np.array_equal(s1.q, s2.q) and np.array_equal(s1.base_pos, s2.base_pos)
    assert not np.array_equal(s1.q, s3.q)


def test_hard_push_makes_the_fall_detector_fire() -> None:
    with World() as world:
        world.add_push(Push(0.5, (0.0, 2500.0, 0.0), 0.2, link="chest"))
        result = run_episode(world, StandController(world.skeleton), 4.0)
    assert result.status == "fell"
    assert 0.5 < result.fall_time_s < 4.0


def test_nan_torque_is_reported_unstable_not_raised() -> None:
    class NaNController:
        def step(self, state):
            return np.full(len(state.q), np.nan)

    with World() as world:
        result = run_episode(world, NaNController(), 1.0)
    assert result.status == "unstable"
    assert result.fall_time_s is not None and result.fall_time_s < 0.01


def test_small_dog_stands_too() -> None:
    with World(preset("small")) as world:
        result = run_episode(world, StandController(world.skeleton), 3.0)
    assert result.status == "ok"


def test_platforms_and_boxes_are_solid_ground() -> None:
    with World() as world:
        world.add_platform(x_start=-1.0, length=2.0, height=0.2)
        world.place_dog(world.skeleton.stand_angles())
        result = run_episode(world, StandController(world.skeleton), 1.0)
        assert result.status == "ok"
        assert result.log["base_pos"][-1, 2] == pytest.approx(0.2 + world.stand_height, abs=0.02)


def test_flat_ground_reaches_far_beyond_the_plane_urdf_box() -> None:
    # plane.urdf's collision box ends at 100 m; a galloping dog gets there in about 20 s
    with World() as world:
        c = world.client
        for x, y in [
            (3.0, 5.0),
            (99.9, 0.0),
            (150.0, 3.0),
            (-150.0, 0.0),
            (20.0, 180.0),
            (-30.0, -250.0),
            (5000.0, -3000.0),
        ]:
            hit = c.rayTest([x, y, 1.0], [x, y, -1.0])[0]
            assert hit[0] >= 0, (x, y)  # something is there
            assert abs(hit[3][2]) < 1e-6, (x, y, hit[3])  # and its top is at z = 0


def test_the_servo_solves_its_implicit_damping_as_the_numpy_reference() -> None:
    rng = np.random.default_rng(5)
    with World() as world:
        n = world.n_joints
        kp, kd = np.full(n, 3000.0), np.full(n, 30.0)  # stiff: some torques hit their limits
        tau_prev, clipped = np.zeros(n), 0
        for step in range(200):
            if step % 4 == 0:  # a new command now and then, as from a slower controller
                command = ServoCommand(
                    rng.normal(0.0, 20.0, n),
                    world.skeleton.stand_angles() + rng.normal(0.0, 0.05, n),
                    rng.normal(0.0, 0.5, n),
                    kp,
                    kd,
                )
            q, qd = world.read_joints()
            want = implicit_pd(
                q,
                qd,
                tau_prev,
                command.tau_ff,
                command.q_target,
                command.qd_target,
                kp,
                kd,
                world._mobility,
                world.dt,
                world.torque_limit,
            )
            tau_prev = world.drive(command).copy()
            np.testing.assert_allclose(tau_prev, want, rtol=1e-9, atol=1e-9)
            clipped += int(np.sum(np.abs(want) == world.torque_limit))
            world.step()
        assert clipped > 0


def test_the_implicit_servo_holds_the_dog_where_explicit_damping_blows_up() -> None:
    # the same gains at the 1 kHz physics rate: the spine's short segments ring and grow
    # under explicit damping; the implicit servo stands still
    with World() as explicit, World() as implicit:
        ctrl = StandController(explicit.skeleton)
        for _ in range(500):
            s = explicit.read_state()
            explicit.apply(ctrl.step(s).torques(s.q, s.qd))
            explicit.step()
        states = stand(implicit, 0.5)
        blown_up = explicit.read_state()
        assert explicit.status(blown_up) != "ok" or np.max(np.abs(blown_up.qd)) > 20.0
        assert implicit.status(states[-1]) == "ok"
        assert np.max(np.abs(states[-1].qd)) < 1.0


def test_a_non_finite_servo_torque_is_not_applied_and_is_reported() -> None:
    with World() as world:
        state = world.read_state()
        n = world.n_joints
        command = ServoCommand(np.zeros(n), state.q, np.zeros(n), np.full(n, np.nan), np.zeros(n))
        assert np.all(world.drive(command) == 0.0)
        assert world.status(state) == "unstable"
