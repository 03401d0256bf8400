"""Controller: the Coros et al. (2011) control step, composed from the pure parts.

Per step: gait phase -> stance/swing per leg -> the stride waves' leg-frame heights and pitch,
head and tail (gaits/waves.py) -> foot targets (stance: hold the foot under the desired
leg-frame pose; swing: placement and swing path) -> leg IK -> PD on every joint but
the stance hips -> leg-frame virtual forces through J^T on the stance legs -> leg-frame
orientation torque shared by the stance hips -> gravity compensation of swing legs, neck,
head and tail -> the spine's quaternion split (flexed and bent sideways by its waves).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

from quadsim.controller.kinematics import quat_rows, static_gravity_torques
from quadsim.controller.pd import ServoCommand, gain_arrays
from quadsim.controller.sim import TRACKED_LINKS
from quadsim.controller.spine import pitch_yaw_quat
from quadsim.controller.stand import GRAVITY, leg_kinematics
from quadsim.controller.state import DogState
from quadsim.gaits.params import PULL_UNLIMITED, SCHEMA, GaitParams
from quadsim.gaits.waves import WAVES, StrideWaves, amplitude_name, phase_name
from quadsim.models import FORE, HIND, LEGS, Skeleton

try:
    from quadsim.controller import legchain
except ImportError as missing:  # a source tree run without installing
    raise ImportError(
        "controller/legchain.pyx is compiled when quadsim is installed: run "
        "`pip install -e .` (it needs a C compiler and the Python headers)"
    ) from missing

FRONT, BACK = 0, 1
FRAME_OF_LEG = np.array([FRONT, FRONT, BACK, BACK])
SIDE = np.array([1.0 if leg[0] == "L" else -1.0 for leg in LEGS])
BEND = np.array([-1.0 if leg in FORE else 1.0 for leg in LEGS])  # elbows back, knees forward
CHEST = TRACKED_LINKS.index("chest")
EARLY_CONTACT = 0.8  # a swing foot touching down after 80% of its swing counts as stance
BOUNCE_S = 0.03  # [s] a supporting foot may leave the ground this long (a bounce)
REACH_BELOW_M = 0.02  # a foot about to strike reaches this far under the expected ground
TARGET_RATE_FILTER = 0.1  # low-pass weight per control step of the target joint rates
MAX_TARGET_RATE = 30.0  # [rad/s] cap on the target joint rates fed to the PD damping
V_INT_TIME_S = 3.0  # [s] integral time of the forward-speed loop
V_INT_MAX = 0.6  # [m] bound on the integrated speed error (anti-windup)
YAW_INT_TIME_S = 1.0  # [s] integral time of the heading loop while turning
YAW_INT_MAX = 0.3  # [rad s] bound on the integrated heading error (anti-windup)
MAX_FP_ERROR = 0.5  # [m/s] velocity error the foot-placement feedback acts on at most
MAX_STEER_RPS = 1.0  # [rad/s] bound on the turn rate that steers back onto the heading
PITCH_ENDS = (-1.0, 1.0)  # nose down: the front end sinks, the back end rises
NO_WAVE = (0.0, 0.0)  # the leg-frame heights' rates and accelerations without stride waves


@dataclass
class Command:
    """What the dog is asked to do: forward speed [m/s] and heading [rad] (world yaw)."""

    speed_mps: float = 0.0
    heading_rad: float = 0.0
    turn_rate_rps: float = 0.0


class Controller:
    """The per-step controller. Holds only gait-phase state; everything else is read from
    the DogState each step. dt: the control step [s]; servo_dt: the physics step [s] at
    which the joint servo of the returned ServoCommand runs (it bounds the PD damping)."""

    def __init__(
        self,
        skeleton: Skeleton,
        params: GaitParams,
        dt: float = 1e-3,
        servo_dt: float = 2.5e-4,
        accel_limit_mps2: float = 1.0,
    ) -> None:
        self.skeleton = skeleton
        self.dt = dt
        self.accel_limit = accel_limit_mps2
        self.legs, self.leg_idx = leg_kinematics(skeleton)
        self.leg_idx = np.ascontiguousarray(self.leg_idx, dtype=np.intp)
        self._hip_idx = self.leg_idx[:, :2].copy()  # hip/shoulder roll and pitch of each leg
        self._hip_servo = np.zeros((4, 2))  # their PD torques now [N*m]
        # kp and kd are the rows of one array: the step scales the stance hips' in one go
        self._gains = np.stack(gain_arrays(skeleton, dt=servo_dt))
        self.kp, self.kd = self._gains
        names = skeleton.joint_names
        self.lower, self.upper, _ = skeleton.limits()
        self.spine_idx = np.array(
            [[names.index(p), names.index(y)] for p, y in skeleton.spine_joints]
        )
        self.neck_idx = [names.index(j) for pair in skeleton.neck_joints for j in pair]
        self.head_pitch_idx = names.index(skeleton.head_joints[0])
        self.tail_idx = [names.index(j) for pair in skeleton.tail_joints for j in pair]
        self.tail_pitch_idx = names.index(skeleton.tail_joints[0][0])
        self.spine_kp0, self.spine_kd0 = self.kp[self.spine_idx].copy(), self.kd[self.spine_idx]
        # neck, head and tail hold their own weight (virtual forces with the front frame
        # or the pelvis as base, evaluated once in the standing pose)
        upper_body = [j for pair in skeleton.neck_joints for j in pair]
        upper_body += list(skeleton.head_joints)
        upper_body += [j for pair in skeleton.tail_joints for j in pair]
        self.hold_idx = np.array([names.index(j) for j in upper_body])
        self.hold_tau = static_gravity_torques(skeleton, upper_body)
        self._tau_hold = np.zeros(len(names))  # the feed-forward torques but the legs'
        self._tau_hold[self.hold_idx] += self.hold_tau
        # mass carried by each leg frame (its own links, its legs, neck and head or tail,
        # and its share of the spine by fractional distance: w = 1/2 for a uniform spine)
        mass = {k.name: k.mass for k in skeleton.links}
        conn = skeleton.spec.connector_mass
        spine = sum(mass[n] for n in skeleton.spine_links) + conn * 2 * len(skeleton.spine_joints)
        front_parts = ["chest", "head", *[n for n in mass if n.startswith("neck")]]
        front_parts += [n for n in mass if n[:2] in FORE]
        back_parts = ["pelvis", *[n for n in mass if n.startswith("tail")]]
        back_parts += [n for n in mass if n[:2] in HIND]
        self.frame_weight = GRAVITY * np.array(
            [
                sum(mass[n] for n in front_parts) + 0.5 * spine,
                sum(mass[n] for n in back_parts) + 0.5 * spine,
            ]
        )
        self.frame_weight *= skeleton.total_mass * GRAVITY / self.frame_weight.sum()
        self._frame_weight = self.frame_weight.tolist()
        self.seg_mass = np.array([[mass[n] for n in skeleton.legs[leg].links] for leg in LEGS])
        # the legs' kinematics, Jacobians, swing gravity and IK, compiled (the step's
        # largest cost in numpy)
        self.chains = legchain.LegChains(
            self.legs.hip, self.legs.lengths, BEND, self.seg_mass * GRAVITY
        )
        self.foot_radius = skeleton.spec.foot_radius
        # the leg frames' virtual forces and torques, compiled, with the slow integrals of
        # the speed and heading errors
        self.leg_frames = legchain.LegFrames(
            self._frame_weight, GRAVITY, V_INT_MAX, V_INT_TIME_S, YAW_INT_MAX, YAW_INT_TIME_S
        )
        self.command = Command()
        self.set_params(params)
        self.phase = 0.0
        self.t = 0.0
        self.speed_now = 0.0
        self.heading_now: float | None = None
        self.stance = np.ones(4, dtype=bool)
        self.planned_swing = np.zeros(4, dtype=bool)
        self.support = np.ones(4, dtype=bool)
        self.liftoff = np.zeros((4, 2))
        self.anchor = np.zeros((4, 2))
        self._hold = [False] * 4  # per leg, as lists: the step works on them in float math
        self._early = [False] * 4
        self._since_contact = [0.0] * 4
        self.ground = np.zeros(4)
        self._started = False
        self._frames = np.zeros((2, 3, 3))

    def set_params(self, params: GaitParams) -> None:
        """Use `params` from now on (the phase carries over)."""
        self.params = params
        p = params
        self.graph = p.graph()
        self.kp[self.spine_idx] = self.spine_kp0 * p["spine_stiffness"]
        self.kd[self.spine_idx] = self.spine_kd0 * min(p["spine_stiffness"], 1.0)
        self._leg = {
            name: p.leg(name)
            for name in (
                "swing_height_m",
                "step_offset_x_m",
                "step_offset_y_m",
                "stance_cannon_rad",
                "swing_cannon_rad",
                "toe_off_rad",
                "foot_strike_rad",
                "toe_off_lead_s",
                "strike_lead_s",
                "swing_lift_skew",
                "swing_reach_early",
            )
        }
        # what the step reads of the params, looked up once per change of params
        self._scalar = {spec.name: p[spec.name] for spec in SCHEMA if not spec.keyed}
        # the cannons hold their stance pitch but in swing; the toes flex off and strike
        stance_cannon, swing_cannon = self._leg["stance_cannon_rad"], self._leg["swing_cannon_rad"]
        leg = self._leg
        self._waves = StrideWaves(
            np.array([p.harmonics(amplitude_name(w)) for w, *_ in WAVES]),
            np.array([p.harmonics(phase_name(w)) for w, *_ in WAVES]),
        )
        swing_dur = np.asarray(self.graph.swing_duration)
        period = self.graph.period_s
        self._t_swing, self._t_stance = swing_dur * period, (1.0 - swing_dur) * period
        self._t_swing_l, self._t_stance_l = self._t_swing.tolist(), self._t_stance.tolist()
        self._offset_heading = np.stack(
            [self._leg["step_offset_x_m"], SIDE * self._leg["step_offset_y_m"]]
        )
        self._swing_plan = legchain.SwingPlan(
            leg["swing_height_m"],
            leg["swing_lift_skew"],
            leg["swing_reach_early"],
            leg["toe_off_lead_s"],
            leg["strike_lead_s"],
            stance_cannon,
            swing_cannon,
            leg["toe_off_rad"],
            leg["foot_strike_rad"],
            self._t_stance,
            np.stack([p.leg("fp_sagittal_s"), p.leg("fp_coronal_s")], axis=1),
            max_fp_error=MAX_FP_ERROR,
            reach_below_m=REACH_BELOW_M,
        )
        kv = np.array([p.frames("kv_sagittal_Ns_per_m"), p.frames("kv_coronal_Ns_per_m")]).T
        max_pull = [
            math.inf if share >= PULL_UNLIMITED else share * w
            for share, w in zip(p.frames("stance_pull_max"), self._frame_weight, strict=True)
        ]
        self.leg_frames.set_gains(
            kv,
            *(
                p.frames(name)
                for name in (
                    "kp_height_N_per_m",
                    "kd_height_Ns_per_m",
                    "kp_orient_Nm_per_rad",
                    "kd_orient_Nms_per_rad",
                    "kp_yaw_Nm_per_rad",
                    "kd_yaw_Nms_per_rad",
                )
            ),
            max_pull,
        )
        self._hip_pd = np.repeat(p.frames("stance_hip_pd"), 2)  # per leg
        self._gains_by_support: dict[tuple[bool, ...], np.ndarray] = {}  # see _gains_for
        self._height_d = (p["height_front_m"], p["height_back_m"])
        self._terms_heading: float | None = None  # the step offsets changed: recompute them

    def _heading_terms(self, heading: float) -> tuple:
        """The heading's rotation H, its ground part H2, forward and left on the ground, the
        step offsets turned to the heading (per leg, 2 floats) and the cosine and sine of half
        the heading [rad]; worked out again only when the heading changes (it stays put
        unless the dog turns)."""
        if heading != self._terms_heading:
            ch, sh = math.cos(heading), math.sin(heading)
            H = np.array([[ch, -sh, 0.0], [sh, ch, 0.0], [0.0, 0.0, 1.0]])
            H2 = H[:2, :2]
            offsets = (H2 @ self._offset_heading).T.tolist()
            self._terms = (
                H,
                H2,
                H[:2, 0],
                H[:2, 1],
                offsets,
                (np.cos(heading / 2), np.sin(heading / 2)),
            )
            self._terms_heading = heading
        return self._terms

    def _gains_for(self, support: tuple[bool, ...]) -> np.ndarray:
        """kp and kd (2, n_joints) with the supporting hips' scaled by stance_hip_pd (x * 1.0
        is x, bit for bit); made the first time a pattern of supporting legs occurs under
        these params (set_params runs often in a gait blend, and a gait uses few of the 16
        patterns). Read-only: the servo commands of many steps share them."""
        gains = self._gains_by_support.get(support)
        if gains is None:
            factor = np.ones_like(self._gains)
            for k in np.flatnonzero(support):
                factor[:, self._hip_idx[k]] = self._hip_pd[k]
            gains = self._gains_by_support[support] = self._gains * factor
            gains.setflags(write=False)
        return gains

    # ------------------------------------------------------------------ the step
    def step(self, state: DogState) -> ServoCommand:
        """The joint servo command until the next control step."""
        p, dt = self._scalar, self.dt
        graph = self.graph
        if not self._started:
            self._start(state)
        # command: speed ramps at the acceleration limit; heading turns at the turn rate
        cmd = self.command
        max_dv = self.accel_limit * dt
        self.speed_now += min(max(cmd.speed_mps - self.speed_now, -max_dv), max_dv)
        # while the dog speeds up it turns on the radius of the commanded speed and rate
        ramp = min(self.speed_now / cmd.speed_mps, 1.0) if cmd.speed_mps > 0.0 else 1.0
        turn_rate = cmd.turn_rate_rps * ramp
        self.heading_now += turn_rate * dt
        heading = self.heading_now
        H, H2, forward_2d, left_2d, offset, half_heading = self._heading_terms(heading)

        # -------- gait phase and stance/swing
        period = graph.period_s
        # per leg in float math and lists (numpy's per-call cost dwarfs the arithmetic on four
        # legs); arrays only where numpy needs them
        swing_l, stance_p_l = graph.progress(self.phase)
        contact = state.foot_contact.tolist()
        in_swing_l = [sw >= 0.0 for sw in swing_l]
        in_swing = np.array(in_swing_l)
        self.planned_swing = in_swing  # the gait graph's plan, before contacts amend it
        # legs held down at the start join the gait after this swing
        self._hold = [h and sw for h, sw in zip(self._hold, in_swing_l, strict=True)]
        # an early strike ends the swing for good (contacts flicker as a foot lands)
        self._early = [
            (e or (c and sw > EARLY_CONTACT)) and s
            for e, c, sw, s in zip(self._early, contact, swing_l, in_swing_l, strict=True)
        ]
        stance_l = [
            not s or h or e for s, h, e in zip(in_swing_l, self._hold, self._early, strict=True)
        ]
        lifted_l = [
            was and not now for was, now in zip(self.stance.tolist(), stance_l, strict=True)
        ]
        strike_l = [
            (1.0 - sw) * t if sw >= 0.0 else 0.0
            for sw, t in zip(swing_l, self._t_swing_l, strict=True)
        ]
        liftoff_l = [
            0.0 if sw >= 0.0 else (1.0 - st) * t
            for sw, st, t in zip(swing_l, stance_p_l, self._t_stance_l, strict=True)
        ]

        # -------- leg frames
        frames = self._frames  # rows: front (chest), back (pelvis)
        frames[0, 0], frames[1, 0] = state.link_pos[CHEST], state.base_pos
        frames[0, 1], frames[1, 1] = state.link_vel[CHEST], state.base_vel
        frames[0, 2], frames[1, 2] = state.link_angvel[CHEST], state.base_angvel
        frame_pos, frame_vel = frames[:, 0], frames[:, 1]
        frame_rows = [
            quat_rows(*state.link_quat[CHEST].tolist()),
            quat_rows(*state.base_quat.tolist()),
        ]
        frame_R = np.array(frame_rows)
        # take() is fancy indexing without its overhead (the same C-ordered arrays)
        R_leg = frame_R.take(FRAME_OF_LEG, axis=0)
        p_leg = frame_pos.take(FRAME_OF_LEG, axis=0)
        chains = self.chains
        chains.update(state.q.take(self.leg_idx), R_leg, p_leg)
        foot = state.foot_pos
        # a foot that bears weight for the first time this stance fixes its anchor and the
        # ground height under it; a stance foot not yet down keeps reaching for the ground
        self._since_contact = [
            0.0 if c else t + dt for c, t in zip(contact, self._since_contact, strict=True)
        ]
        was_support = self.support.tolist()
        touchdown_l = [
            now and c and not sup
            for now, c, sup in zip(stance_l, contact, was_support, strict=True)
        ]
        # touchdowns and lift-offs are rare: skip the empty updates
        any_lifted = any(lifted_l)
        if any(touchdown_l):
            touchdown = np.array(touchdown_l)
            self.ground[touchdown] = foot[touchdown, 2] - self.foot_radius
            self.anchor[touchdown] = foot[touchdown, :2]
        if any_lifted:
            lifted = np.array(lifted_l)
            self.liftoff[lifted] = foot[lifted, :2]
        # a stance foot supports the body from its strike until lift-off, unless it has lost
        # the ground for longer than a bounce
        support_l = [
            (sup or td) and now and t < BOUNCE_S
            for sup, td, now, t in zip(
                was_support, touchdown_l, stance_l, self._since_contact, strict=True
            )
        ]
        self.support = np.array(support_l)
        self.stance = np.array(stance_l)
        ground = self.ground.tolist()  # as floats

        # stride waves: heights, pitch, head and tail over the stride (all 0 without waves)
        if self._waves.on:
            wave, rate, accel = self._waves(self.phase, period)
            # the body pitches about its middle: its ends sink and rise with the pitch
            half_body = 0.5 * math.dist(*frame_pos[:, :2].tolist())
            for k, end in enumerate(PITCH_ENDS):
                wave[k] += half_body * end * wave[2]
                rate[k] += half_body * end * rate[2]
                accel[k] += half_body * end * accel[2]
            dz_front, dz_back, dpitch, dhead, dtail, flex, bend = wave
            height_rate, height_accel = rate[:2], accel[:2]
            # the pitch wave's rate, about the heading's y
            frame_w_d = [rate[2] * h for h in H[:, 1].tolist()]
        else:
            dz_front = dz_back = dpitch = dhead = dtail = flex = bend = 0.0
            height_rate = height_accel = NO_WAVE
            frame_w_d = None
        pitch_d = p["body_pitch_rad"] + dpitch
        q_desired = pitch_yaw_quat(pitch_d, *half_heading)
        R_desired = np.array(quat_rows(*q_desired))
        frame_pitch = [_pitch_of(R) for R in frame_rows]
        yaw_err = [_wrap(heading - _yaw_of(R)) for R in frame_rows]  # per frame, [rad]

        # -------- foot targets (world), then leg-frame coordinates
        v_d = forward_2d * self.speed_now  # H2 @ (speed, 0): its zero terms add nothing
        frame_v_d = (v_d, v_d)
        steer = turn_rate
        if p["steer_fp_per_s"]:  # steering by foot placement: turn back onto the heading
            heading_err = 0.5 * (yaw_err[FRONT] + yaw_err[BACK])
            steer += min(max(p["steer_fp_per_s"] * heading_err, -MAX_STEER_RPS), MAX_STEER_RPS)
        if steer != 0.0:  # a body turning at the rate: its ends move sideways, +-w d
            half = 0.5 * float((frame_pos[FRONT, :2] - frame_pos[BACK, :2]) @ forward_2d)
            frame_v_d = (v_d + (steer * half) * left_2d, v_d - (steer * half) * left_2d)
        frame_v_d = np.array(frame_v_d)
        # each swinging foot aims where it will land; until it bears weight, it keeps aiming
        # where its swing was headed
        if any(in_swing_l):
            self._swing_plan.place_feet(
                chains, frame_vel, frame_v_d, H2, offset, strike_l, in_swing_l, self.anchor
            )
        # stance feet hold the point where they struck, on the ground under each frame (the
        # mean under its two feet), the leg posed as if its frame already stood at the
        # desired height and orientation; swing feet follow their path to the landing point
        g = ground
        frame_z_d = (
            (g[0] + g[1]) / 2 + self._height_d[0] + dz_front,
            (g[2] + g[3]) / 2 + self._height_d[1] + dz_back,
        )
        q_target = self.skeleton_targets
        q_target[self.leg_idx] = self._swing_plan.leg_angles(
            chains,
            swing_l,
            liftoff_l,
            strike_l,
            stance_l,
            support_l,
            self.liftoff,
            self.anchor,
            ground,
            foot,
            frame_R,
            frame_pos,
            R_desired,
            frame_z_d,
            pitch_d,
            frame_pitch,
            self.foot_radius,
        )

        # -------- spine, head, tail
        # the chest's target is the pelvis's, flexed and bent sideways by the spine's waves
        chest_half_yaw = (
            half_heading
            if bend == 0.0
            else (math.cos(0.5 * (heading + bend)), math.sin(0.5 * (heading + bend)))
        )
        q_target[self.spine_idx] = legchain.spine_pitch_yaw(
            pitch_d, pitch_d + flex, *half_heading, *chest_half_yaw, len(self.spine_idx)
        )
        q_target[self.head_pitch_idx] = p["head_pitch_rad"] + dhead - frame_pitch[FRONT]
        q_target[self.tail_pitch_idx] = p["tail_pitch_rad"] + dtail

        # -------- PD on every joint; on the supporting hips it is scaled by stance_hip_pd
        # (0: the paper's torque-only stance hips; the IK targets of a stance leg pose it for
        # the desired leg-frame orientation, so this PD is that frame's orientation PD in
        # joint space). Only stance legs that touch the ground support the body: a stance
        # foot in the air keeps its PD and takes no virtual force.
        # The targets are clipped to the joints' ranges; their rates come from their own
        # motion, so that damping resists only the tracking error of a swinging leg, not the
        # swing itself (only swing legs track a moving target; a leg that just lifted off
        # starts at rest).
        qd_target = self._qd_target
        legchain.track_targets(
            q_target,
            self.lower,
            self.upper,
            self._q_target_prev,
            qd_target,
            self.leg_idx,
            list(map(operator.or_, stance_l, lifted_l)),
            dt,
            MAX_TARGET_RATE,
            TARGET_RATE_FILTER,
        )
        gains = self._gains_for(tuple(support_l))
        legchain.hip_servo(
            gains, q_target, state.q, qd_target, state.qd, self._hip_idx, self._hip_servo
        )
        tau = self._tau_hold.copy()  # the feed-forward part

        # -------- leg-frame virtual forces on the supporting legs, and frame torques
        leg_frames = self.leg_frames
        leg_frames.forces(
            frame_pos,
            frame_vel,
            frames[:, 2],
            frame_R,
            R_desired,
            H2,
            self.speed_now,
            frame_v_d,
            turn_rate,
            frame_z_d,
            height_rate,
            height_accel,
            yaw_err,
            frame_w_d,
            foot,
            support_l,
            dt,
        )
        # the legs' feed-forward torques (compiled), their only ones: the supporting feet push
        # on the ground with -F (tau = J^T (-F)), the supporting hips share the frame torque
        # that the swinging hips leave, and the swing legs carry their own weight (base: their
        # leg frame)
        swinging = [not now for now in stance_l]
        tau[self.leg_idx] = chains.leg_torques(
            leg_frames.leg_force, leg_frames.frame_torque, self._hip_servo, support_l, swinging
        )

        self.phase = (self.phase + dt / period) % 1.0
        self.t += dt
        return ServoCommand(tau, q_target.copy(), qd_target.copy(), *gains)

    def log_fields(self, state: DogState) -> dict[str, float | np.ndarray]:
        """What the run log records of the controller besides the state; `planned_stance`
        (4,) is the gait graph's stance of each foot at this step (before contacts amend it)."""
        return {
            "speed_cmd": self.speed_now,
            "heading_cmd": self.heading_now if self.heading_now is not None else 0.0,
            "chest_height": float(state.link_pos[CHEST, 2]),
            "gait_phase": self.phase,
            "planned_stance": ~self.planned_swing,
        }

    # ------------------------------------------------------------------ helpers
    def _start(self, state: DogState) -> None:
        self._started = True
        self.skeleton_targets = self.skeleton.stand_angles().copy()
        self._q_target_prev = self.skeleton_targets.copy()
        self._qd_target = np.zeros_like(self.skeleton_targets)

        self.heading_now = self.command.heading_rad
        self.ground[:] = state.foot_pos[:, 2] - self.foot_radius
        self.liftoff[:] = state.foot_pos[:, :2]
        self.anchor[:] = state.foot_pos[:, :2]
        self.stance[:] = True
        self.support[:] = True
        # legs whose swing is under way at phase 0 stay down until it is over
        self._hold = [sw >= 0.0 for sw in self.graph.progress(self.phase)[0]]


def _pitch_of(R: list[list[float]]) -> float:
    """Nose-down pitch [rad] of a frame (rows of its rotation matrix): the angle of its x
    axis below the horizontal."""
    return math.atan2(-R[2][0], math.hypot(R[0][0], R[1][0]))


def _yaw_of(R: list[list[float]]) -> float:
    return math.atan2(R[1][0], R[0][0])


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi
