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

from controller.kinematics import SEG_OF_JOINT, quat_rows, static_gravity_torques
from controller.legframe import frame_force_floats, share_frame_torque_rows, yaw_force_rows
from controller.legik import LegIK
from controller.pd import ServoCommand, gain_arrays
from controller.sim import TRACKED_LINKS
from controller.spine import pitch_yaw_quat, split_spine
from controller.stand import GRAVITY, leg_kinematics
from controller.state import DogState
from controller.swing import FootAngles, SwingPath, foot_placement_rows
from controller.virtual_force import jt_force_row, rotation_vector
from gaits.params import PULL_UNLIMITED, SCHEMA, GaitParams
from gaits.waves import WAVES, StrideWaves, amplitude_name, phase_name
from models import FORE, HIND, LEGS, Skeleton

FRONT, BACK = 0, 1
FRAME_OF_LEG = np.array([FRONT, FRONT, BACK, BACK])
FRAME_OF_LEG_L = FRAME_OF_LEG.tolist()
SIDE = np.array([1.0 if leg[0] == "L" else -1.0 for leg in LEGS])
BEND = np.array([-1.0 if leg in FORE else 1.0 for leg in LEGS])  # elbows back, knees forward
CHEST = TRACKED_LINKS.index("chest")
SEG_OF_JOINT_L = SEG_OF_JOINT.tolist()
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
NO_TOE_ANGLE = np.zeros(4)  # the toes' angle in stance, before toe-off
NO_TOE_ANGLE.setflags(write=False)
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

    def __init__(self, skeleton: Skeleton, params: GaitParams, dt: float = 1e-3,
                 servo_dt: float = 2.5e-4, accel_limit_mps2: float = 1.0) -> None:  # fmt: skip
        self.skeleton = skeleton
        self.dt = dt
        self.accel_limit = accel_limit_mps2
        self.legs, self.leg_idx = leg_kinematics(skeleton)
        self.leg_ik = LegIK(self.legs.hip, self.legs.lengths, BEND)
        self._hip_idx = self.leg_idx[:, :2].copy()  # hip/shoulder roll and pitch of each leg
        self._joints_of_legs: dict[tuple[bool, ...], np.ndarray] = {}  # see _leg_joints
        # kp and kd are the rows of one array: the step scales the stance hips' in one go
        self._gains = np.stack(gain_arrays(skeleton, dt=servo_dt))
        self.kp, self.kd = self._gains
        names = skeleton.joint_names
        self.lower, self.upper, _ = skeleton.limits()
        self.spine_idx = np.array([[names.index(p), names.index(y)]
                                   for p, y in skeleton.spine_joints])  # fmt: skip
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
        self.frame_weight = GRAVITY * np.array([
            sum(mass[n] for n in front_parts) + 0.5 * spine,
            sum(mass[n] for n in back_parts) + 0.5 * spine,
        ])  # fmt: skip
        self.frame_weight *= skeleton.total_mass * GRAVITY / self.frame_weight.sum()
        self._frame_weight = self.frame_weight.tolist()
        self.seg_mass = np.array([[mass[n] for n in skeleton.legs[leg].links] for leg in LEGS])
        self._seg_weight = self.seg_mass * GRAVITY
        # half each segment's weight: its midpoint is half the sum of its ends (exactly)
        self._half_seg_weight = (0.5 * self._seg_weight).tolist()
        # weight below each leg joint (distal sums)
        below = np.cumsum(self._seg_weight[:, ::-1], axis=1)[:, ::-1][:, SEG_OF_JOINT]
        self._weight_below = below.tolist()
        self.foot_radius = skeleton.spec.foot_radius
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
        self._v_int = 0.0
        self._yaw_int = [0.0, 0.0]

    def set_params(self, params: GaitParams) -> None:
        """Use `params` from now on (the phase carries over)."""
        self.params = params
        p = params
        self.graph = p.graph()
        self.kp[self.spine_idx] = self.spine_kp0 * p["spine_stiffness"]
        self.kd[self.spine_idx] = self.spine_kd0 * min(p["spine_stiffness"], 1.0)
        self._leg = {name: p.leg(name) for name in (
            "swing_height_m", "step_offset_x_m", "step_offset_y_m", "stance_cannon_rad",
            "swing_cannon_rad", "toe_off_rad", "foot_strike_rad", "toe_off_lead_s",
            "strike_lead_s", "swing_lift_skew", "swing_reach_early")}  # fmt: skip
        # what the step reads of the params, looked up once per change of params
        self._scalar = {spec.name: p[spec.name] for spec in SCHEMA if not spec.keyed}
        # the cannons hold their stance pitch but in swing; the toes flex off and strike
        stance_cannon, swing_cannon = self._leg["stance_cannon_rad"], self._leg["swing_cannon_rad"]
        self._foot_angles = FootAngles(
            (self._leg["toe_off_lead_s"], self._leg["strike_lead_s"]),
            [(stance_cannon, swing_cannon, stance_cannon, stance_cannon),
             (NO_TOE_ANGLE, swing_cannon, self._leg["toe_off_rad"], self._leg["foot_strike_rad"])],
        )  # fmt: skip
        shape = (self._leg["swing_lift_skew"], self._leg["swing_reach_early"])
        self._swing_path = SwingPath(self._leg["swing_height_m"], reach_below_m=REACH_BELOW_M,
                                     shape=shape if np.any(shape) else (None, None))  # fmt: skip
        self._waves = StrideWaves(np.array([p.harmonics(amplitude_name(w)) for w, *_ in WAVES]),
                                  np.array([p.harmonics(phase_name(w)) for w, *_ in WAVES]))
        swing_dur = np.asarray(self.graph.swing_duration)
        period = self.graph.period_s
        self._t_swing, self._t_stance = swing_dur * period, (1.0 - swing_dur) * period
        self._t_swing_l, self._t_stance_l = self._t_swing.tolist(), self._t_stance.tolist()
        self._offset_heading = np.stack([self._leg["step_offset_x_m"],
                                         SIDE * self._leg["step_offset_y_m"]])  # fmt: skip
        self._s_fp = np.stack([p.leg("fp_sagittal_s"), p.leg("fp_coronal_s")], axis=1)
        self._kv = np.array([p.frames("kv_sagittal_Ns_per_m"), p.frames("kv_coronal_Ns_per_m")]).T
        self._kv_rows = self._kv.tolist()
        self._gain = {name: p.frames(name) for name in (
            "kp_height_N_per_m", "kd_height_Ns_per_m", "kp_orient_Nm_per_rad",
            "kd_orient_Nms_per_rad", "kp_yaw_Nm_per_rad", "kd_yaw_Nms_per_rad")}  # fmt: skip
        self._max_pull = [math.inf if share >= PULL_UNLIMITED else share * w
                          for share, w in zip(p.frames("stance_pull_max"), self._frame_weight,
                                              strict=True)]  # fmt: skip
        self._hip_pd = np.repeat(p.frames("stance_hip_pd"), 2)  # per leg
        self._hip_pd_scale: dict[tuple[bool, ...], np.ndarray] = {}  # filled as patterns occur
        self._height_d = (p["height_front_m"], p["height_back_m"])
        self._terms_heading: float | None = None  # the step offsets changed: recompute them

    def _heading_terms(self, heading: float) -> tuple:
        """The heading's rotation H, its ground part H2 and H2^T, forward and left on the
        ground, the step offsets turned to the heading (per leg, 2 floats), the cosine and sine
        of half the heading [rad], and H2's rows as floats; worked out again only when the
        heading changes (it stays put unless the dog turns)."""
        if heading != self._terms_heading:
            ch, sh = math.cos(heading), math.sin(heading)
            H = np.array([[ch, -sh, 0.0], [sh, ch, 0.0], [0.0, 0.0, 1.0]])
            H2 = H[:2, :2]
            offsets = (H2 @ self._offset_heading).T.tolist()
            self._terms = (H, H2, H2.T, H[:2, 0], H[:2, 1], offsets,
                           (np.cos(heading / 2), np.sin(heading / 2)), H2.tolist())  # fmt: skip
            self._terms_heading = heading
        return self._terms

    def _hip_pd_factor(self, support: tuple[bool, ...]) -> np.ndarray:
        """The factor (2, n_joints) on kp and kd that scales the supporting hips' PD by
        stance_hip_pd and is 1 elsewhere (x * 1.0 is x, bit for bit); made the first time a
        pattern of supporting legs occurs under these params (set_params runs often in a
        gait blend, and a gait uses few of the 16 patterns)."""
        factor = self._hip_pd_scale.get(support)
        if factor is None:
            factor = np.ones_like(self._gains)
            for k in np.flatnonzero(support):
                factor[:, self._hip_idx[k]] = self._hip_pd[k]
            self._hip_pd_scale[support] = factor
        return factor

    def _leg_joints(self, legs: tuple[bool, ...]) -> np.ndarray:
        """The joint indices of the legs flagged in `legs` (LF, RF, LH, RH), looked up once
        per pattern."""
        joints = self._joints_of_legs.get(legs)
        if joints is None:
            joints = self._joints_of_legs[legs] = self.leg_idx[np.array(legs)].ravel()
        return joints

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
        H, H2, H2_T, forward_2d, left_2d, offset, half_heading, H2_rows = self._heading_terms(
            heading)  # fmt: skip

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
        self._early = [(e or (c and sw > EARLY_CONTACT)) and s for e, c, sw, s in zip(
            self._early, contact, swing_l, in_swing_l, strict=True)]  # fmt: skip
        stance_l = [not s or h or e for s, h, e in zip(in_swing_l, self._hold, self._early,
                                                          strict=True)]  # fmt: skip
        lifted_l = [was and not now for was, now in zip(self.stance.tolist(), stance_l,
                                                            strict=True)]  # fmt: skip
        strike_l = [(1.0 - sw) * t if sw >= 0.0 else 0.0
                    for sw, t in zip(swing_l, self._t_swing_l, strict=True)]  # fmt: skip
        liftoff_l = [0.0 if sw >= 0.0 else (1.0 - st) * t
                     for sw, st, t in zip(swing_l, stance_p_l, self._t_stance_l, strict=True)]

        # -------- leg frames
        frames = self._frames  # rows: front (chest), back (pelvis)
        frames[0, 0], frames[1, 0] = state.link_pos[CHEST], state.base_pos
        frames[0, 1], frames[1, 1] = state.link_vel[CHEST], state.base_vel
        frames[0, 2], frames[1, 2] = state.link_angvel[CHEST], state.base_angvel
        frame_pos, frame_vel = frames[:, 0], frames[:, 1]
        # the frames' positions, velocities and angular velocities as floats
        frame_p, frame_v, frame_w = zip(*frames.tolist(), strict=True)
        frame_rows = [quat_rows(*state.link_quat[CHEST].tolist()),
                      quat_rows(*state.base_quat.tolist())]  # fmt: skip
        frame_R = np.array(frame_rows)
        # take() is fancy indexing without its overhead (the same C-ordered arrays)
        R_leg = frame_R.take(FRAME_OF_LEG, axis=0)
        p_leg = frame_pos.take(FRAME_OF_LEG, axis=0)
        q_leg = state.q.take(self.leg_idx)
        pose = self.legs.pose(q_leg)
        axes_local = pose.axes
        _, jac_local = self.legs.foot_jacobian(q_leg, (pose.pos, pose.rots), axes_local)
        jac = np.einsum("kij,kjn->kin", R_leg, jac_local)
        hip_world = p_leg + np.einsum("kij,kj->ki", R_leg, self.legs.hip)
        foot = state.foot_pos
        # a foot that bears weight for the first time this stance fixes its anchor and the
        # ground height under it; a stance foot not yet down keeps reaching for the ground
        self._since_contact = [0.0 if c else t + dt
                               for c, t in zip(contact, self._since_contact, strict=True)]
        was_support = self.support.tolist()
        touchdown_l = [now and c and not sup for now, c, sup in zip(stance_l, contact, was_support,
                                                                       strict=True)]  # fmt: skip
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
        support_l = [(sup or td) and now and t < BOUNCE_S for sup, td, now, t in zip(
            was_support, touchdown_l, stance_l, self._since_contact, strict=True)]  # fmt: skip
        self.support = np.array(support_l)
        self.stance = np.array(stance_l)
        ground, foot_l = self.ground.tolist(), foot.tolist()  # as floats

        # stride waves: heights, pitch, head and tail over the stride (all 0 without waves)
        if self._waves.on:
            wave, rate, accel = self._waves(self.phase, period)
            # the body pitches about its middle: its ends sink and rise with the pitch
            half_body = 0.5 * math.dist(frame_p[FRONT][:2], frame_p[BACK][:2])
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
        R_desired_rows = quat_rows(*q_desired)
        R_desired = np.array(R_desired_rows)
        frame_pitch = [_pitch_of(R) for R in frame_rows]
        yaw_err = [_wrap(heading - _yaw_of(R)) for R in frame_rows]  # per frame, [rad]

        # -------- foot targets (world), then leg-frame coordinates
        v_d = forward_2d * self.speed_now  # H2 @ (speed, 0): its zero terms add nothing
        s_fp = self._s_fp
        # the paper's feedback (v - v_d) s_fp, sagittal and coronal gains in the heading frame
        v_legframe = frame_vel[:, :2].take(FRAME_OF_LEG, axis=0)
        frame_v_d = (v_d, v_d)
        steer = turn_rate
        if p["steer_fp_per_s"]:  # steering by foot placement: turn back onto the heading
            heading_err = 0.5 * (yaw_err[FRONT] + yaw_err[BACK])
            steer += min(max(p["steer_fp_per_s"] * heading_err, -MAX_STEER_RPS), MAX_STEER_RPS)
        if steer != 0.0:  # a body turning at the rate: its ends move sideways, +-w d
            half = 0.5 * float((frame_pos[FRONT, :2] - frame_pos[BACK, :2]) @ forward_2d)
            frame_v_d = (v_d + (steer * half) * left_2d, v_d - (steer * half) * left_2d)
        all_stance = all(stance_l)  # then no swing foot needs a landing point or a path
        if any(in_swing_l):
            if steer != 0.0:
                v_d_leg = np.array(frame_v_d).take(FRAME_OF_LEG, axis=0)
                v_err_h = ((v_legframe - v_d_leg) @ H2)
            else:
                v_err_h = ((v_legframe - v_d) @ H2)
            # minimum(maximum()) is clip without ndarray.clip's Python-level wrapper
            v_err_h = np.minimum(np.maximum(v_err_h, -MAX_FP_ERROR), MAX_FP_ERROR)
            feedback = (v_err_h * s_fp) @ H2_T
            v_legframe_l = [frame_v[f][:2] for f in FRAME_OF_LEG_L]
            landing = foot_placement_rows(hip_world[:, :2].tolist(), v_legframe_l, strike_l,
                                          self._t_stance_l, offset, feedback.tolist())  # fmt: skip
            if not all_stance:
                foot_ground = [g + self.foot_radius for g in ground]
                swing_target = self._swing_path(self.liftoff.tolist(), landing, swing_l,
                                                foot_ground)  # fmt: skip
            # until it bears weight, a foot aims where its swing was headed
            for k, swinging in enumerate(in_swing_l):
                if swinging:
                    self.anchor[k] = landing[k]
        # stance feet hold the point where they struck; the leg is posed as if its frame
        # already stood at the desired height and orientation
        g = ground  # each frame's ground: the mean under its two feet
        frame_z_d = ((g[0] + g[1]) / 2 + self._height_d[0] + dz_front,
                     (g[2] + g[3]) / 2 + self._height_d[1] + dz_back)  # fmt: skip
        # each stance foot's target (its anchor, on the ground or, until it bears weight, a
        # little below) from its frame at the desired height, in float math
        stance_rel = [[x - frame_p[f][0], y - frame_p[f][1],
                       g_k + self.foot_radius - (0.0 if on else REACH_BELOW_M) - frame_z_d[f]]
                      for (x, y), g_k, on, f in zip(self.anchor.tolist(), g, support_l,
                                                    FRAME_OF_LEG_L, strict=True)]  # fmt: skip
        # each leg's target in its frame's coordinates, in float math: R^T (target - frame),
        # stance legs with the desired orientation
        target_local = []
        for k, (f, now) in enumerate(zip(FRAME_OF_LEG_L, stance_l, strict=True)):
            R, origin = frame_rows[f], frame_p[f]
            if now:
                local = _rotate_back(R_desired_rows, stance_rel[k])
                # a stance leg may push its frame up but never pull its foot off the ground
                foot_rel = _minus(foot_l[k], origin)  # its height in the frame: (R^T v)[2]
                foot_local_z = R[0][2] * foot_rel[0] + R[1][2] * foot_rel[1] + R[2][2] * foot_rel[2]
                local[2] = min(local[2], foot_local_z)
            else:
                local = _rotate_back(R, _minus(swing_target[k], origin))
            target_local.append(local)
        # the pitch of each leg's plane, and the foot angles in it (float math per leg)
        plane_pitch = [pitch_d if now else frame_pitch[f]
                       for now, f in zip(stance_l, FRAME_OF_LEG_L, strict=True)]  # fmt: skip
        cannon, toe = self._foot_angles(swing_l, liftoff_l, strike_l)
        cannon_pitch = [a - b for a, b in zip(cannon, plane_pitch, strict=True)]
        toe_pitch = [a - b for a, b in zip(toe, plane_pitch, strict=True)]
        q_target = self.skeleton_targets
        q_target[self.leg_idx] = self.leg_ik.solve(target_local, cannon_pitch, toe_pitch)

        # -------- spine, head, tail
        # the chest's target is the pelvis's, flexed and bent sideways by the spine's waves
        chest_half_yaw = half_heading if bend == 0.0 else (
            math.cos(0.5 * (heading + bend)), math.sin(0.5 * (heading + bend)))
        n_spine = len(self.spine_idx)
        spine = split_spine(q_desired, pitch_yaw_quat(pitch_d + flex, *chest_half_yaw), n_spine)
        q_target[self.spine_idx] = spine
        q_target[self.head_pitch_idx] = p["head_pitch_rad"] + dhead - frame_pitch[FRONT]
        q_target[self.tail_pitch_idx] = p["tail_pitch_rad"] + dtail
        np.minimum(np.maximum(q_target, self.lower, out=q_target), self.upper, out=q_target)

        # -------- PD on every joint; on the supporting hips it is scaled by stance_hip_pd
        # (0: the paper's torque-only stance hips; the IK targets of a stance leg pose it for
        # the desired leg-frame orientation, so this PD is that frame's orientation PD in
        # joint space). Only stance legs that touch the ground support the body: a stance
        # foot in the air keeps its PD and takes no virtual force.
        # target rates from the targets' own motion, so that damping resists only the
        # tracking error of a swinging leg, not the swing itself
        raw = np.minimum(np.maximum((q_target - self._q_target_prev) / dt, -MAX_TARGET_RATE),
                         MAX_TARGET_RATE)  # fmt: skip
        self._q_target_prev[:] = q_target
        qd_target = self._qd_target
        qd_target += TARGET_RATE_FILTER * (raw - qd_target)  # low-pass: targets jitter
        # only swing legs track a moving target (a leg that just lifted off starts at rest)
        qd_target[self._leg_joints(tuple(map(operator.or_, stance_l, lifted_l)))] = 0.0
        kp, kd = self._gains * self._hip_pd_factor(tuple(support_l))
        servo_now = kp * (q_target - state.q) + kd * (qd_target - state.qd)
        tau = self._tau_hold.copy()  # the feed-forward part

        # -------- leg-frame virtual forces on the stance legs, and frame torques
        # float math for the forces (numpy's per-call cost dwarfs the arithmetic on two legs);
        # numpy sums a vector-matrix product's and a short dot product's terms in order, as
        # written out here (a matrix-vector product stays numpy's: BLAS fuses its terms)
        kv, gain = self._kv_rows, self._gain
        (h00, h01), (h10, h11) = H2_rows  # forward: (h00, h10), left: (h01, h11)
        # slow integral of the body's speed error along the heading: k_v alone leaves a
        # steady shortfall against the legs' losses
        body_v = (0.5 * (frame_v[FRONT][0] + frame_v[BACK][0]) * h00
                  + 0.5 * (frame_v[FRONT][1] + frame_v[BACK][1]) * h10)  # fmt: skip
        v_int = self._v_int + (self.speed_now - body_v) * dt
        self._v_int = min(max(v_int, -V_INT_MAX), V_INT_MAX)
        v_d_l = v_d.tolist()
        v_int_push = self._v_int / V_INT_TIME_S
        v_d_push = [v_d_l[0] + h00 * v_int_push, v_d_l[1] + h10 * v_int_push]
        leg_force = [[0.0, 0.0, 0.0] for _ in LEGS]
        frame_torque = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
        supporting = support_l
        # each frame's rotation error: R_desired R^T, both frames in one matmul
        turn_to_desired = (R_desired @ frame_R.transpose(0, 2, 1)).tolist()
        for f, legs_f in ((FRONT, [0, 1]), (BACK, [2, 3])):
            st = [supporting[k] for k in legs_f]
            n_st = sum(st)
            if n_st == 0:
                continue
            # k_v acts on the velocity error along and across the heading
            v_d_frame = v_d_push
            if steer != 0.0:
                v_d_frame = [p + (fd - d) for p, fd, d in zip(
                    v_d_push, frame_v_d[f].tolist(), v_d_l, strict=True)]  # fmt: skip
            ex, ey = v_d_frame[0] - frame_v[f][0], v_d_frame[1] - frame_v[f][1]
            kv_along, kv_across = kv[f]
            push = (H2 @ np.array([kv_along * (ex * h00 + ey * h10),
                                   kv_across * (ex * h01 + ey * h11)])).tolist()  # fmt: skip
            if turn_rate != 0.0:  # the centripetal force of the turn, fed forward
                mass = self._frame_weight[f] / GRAVITY
                centripetal = mass * self.speed_now * turn_rate
                push = [push[0] + centripetal * h01, push[1] + centripetal * h11]
            height_err = frame_z_d[f] - frame_p[f][2]
            # a height wave: damping acts on the error against its rate, and the frame's
            # weight is fed its acceleration
            weight = self._frame_weight[f] * (1.0 + height_accel[f] / GRAVITY)
            kp_h, kd_h = gain["kp_height_N_per_m"][f], gain["kd_height_Ns_per_m"][f]
            F = frame_force_floats(height_err, frame_v[f][2] - height_rate[f], push, weight,
                                   kp_h, kd_h, self._max_pull[f])  # fmt: skip
            # damping acts on the yaw rate's error against the commanded turn rate
            yaw_rate_err = turn_rate - frame_w[f][2]
            yaw_torque = (gain["kp_yaw_Nm_per_rad"][f] * yaw_err[f]
                          + gain["kd_yaw_Nms_per_rad"][f] * yaw_rate_err)  # fmt: skip
            if turn_rate != 0.0:  # a turn meets a steady yaw resistance: integral action
                y_int = min(max(self._yaw_int[f] + yaw_err[f] * dt, -YAW_INT_MAX), YAW_INT_MAX)
                self._yaw_int[f] = y_int
                yaw_torque += gain["kp_yaw_Nm_per_rad"][f] * y_int / YAW_INT_TIME_S
            fx, fy, _ = frame_p[f]
            levers = [[foot_l[k][0] - fx, foot_l[k][1] - fy] for k in legs_f]
            forces = yaw_force_rows(yaw_torque, levers, st)
            F_each = [F_i / n_st for F_i in F]  # the stance legs share the frame's force
            for k, on, row in zip(legs_f, st, forces, strict=True):
                leg_force[k] = [r + s for r, s in zip(row, F_each, strict=True)] if on else row
            w_err = frame_w[f]
            if frame_w_d is not None:
                w_err = [w - w_d for w, w_d in zip(w_err, frame_w_d, strict=True)]
            kp_o, kd_o = gain["kp_orient_Nm_per_rad"][f], gain["kd_orient_Nms_per_rad"][f]
            frame_torque[f] = [kp_o * e - kd_o * w for e, w in zip(
                rotation_vector(turn_to_desired[f]), w_err, strict=True)]
        # the stance feet push on the ground with -F: tau = J^T (-F) (the rows of the legs
        # that do not support are zero); the legs' feed-forward torques add up in their own
        # (4, 5) rows of floats, written into tau at the end
        tau_leg = [jt_force_row(J, [-f for f in F]) for J, F in zip(jac.tolist(), leg_force,
                                                                 strict=True)]  # fmt: skip

        # hip axes in the world: roll about the frame's x, pitch about y after the roll
        roll_axis = R_leg[:, :, 0]
        pitch_axis = (R_leg @ pose.roll)[:, :, 1]
        axes = np.empty((4, 2, 3))
        axes[:, 0], axes[:, 1] = roll_axis, pitch_axis
        # what the swing hips already do to their frame (a joint acts on its parent with
        # -tau): needed = frame torque + sum tau a, per frame in float math, summed as
        # numpy's einsum "fka,fkaj->fj" sums (legs, then roll and pitch, in order)
        hip_servo = servo_now.take(self._hip_idx).tolist()
        swing_hip_tau = [[(t + s) * (0.0 if on else 1.0) for t, s in zip(
            tau_k[:2], servo_k, strict=True)] for tau_k, servo_k, on in zip(
            tau_leg, hip_servo, support_l, strict=True)]  # fmt: skip
        axes_l = axes.tolist()
        needed = []
        for f, torque in enumerate(frame_torque):
            legs_f = slice(2 * f, 2 * f + 2)
            (t0, t1), (a0, a1) = swing_hip_tau[legs_f], axes_l[legs_f]
            row = []
            for j, torque_j in enumerate(torque):
                by_hips = t0[0] * a0[0][j] + t0[1] * a0[1][j] + t1[0] * a1[0][j] + t1[1] * a1[1][j]
                row.append(torque_j + by_hips)
            needed.append(row)
        share = share_frame_torque_rows(np.array(needed), axes.reshape(2, 2, 2, 3),
                                        [support_l[:2], support_l[2:]])  # fmt: skip
        for tau_k, share_k in zip(tau_leg, share, strict=True):
            tau_k[0] += share_k[0]
            tau_k[1] += share_k[1]

        # -------- gravity compensation of the swing legs (base: their leg frame)
        if not all_stance:
            swinging = [not now for now in stance_l]
            gravity = self._swing_gravity_rows(pose.pos, R_leg, axes_local, swinging)
            for k, gravity_k in enumerate(gravity):
                if gravity_k is not None:
                    tau_leg[k] = [t + g for t, g in zip(tau_leg[k], gravity_k, strict=True)]
        tau[self.leg_idx] = tau_leg  # the legs hold no other feed-forward torque

        self.phase = (self.phase + dt / period) % 1.0
        self.t += dt
        return ServoCommand(tau, q_target.copy(), qd_target.copy(), kp, kd)

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

    def _swing_gravity(self, q_leg: np.ndarray, pos: np.ndarray, R_leg: np.ndarray,
                       axes_local: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """Joint torques (4, 5) holding each leg's segments up: sum_s J_s^T (m_s g z), with
        each segment's mass at its midpoint. pos: forward-kinematics joint positions;
        axes_local: the legs' joint_axes(q_leg) when already at hand."""
        if axes_local is None:
            axes_local = self.legs.joint_axes(q_leg)
        return np.array(self._swing_gravity_rows(pos, R_leg, axes_local, [True] * 4))

    def _swing_gravity_rows(self, pos: np.ndarray, R_leg: np.ndarray, axes_local: np.ndarray,
                            legs: list[bool]) -> list[list[float] | None]:  # fmt: skip
        """_swing_gravity's rows as floats for the legs flagged in `legs` (None for the
        others), the controller's per-step path."""
        # joint positions and axes turned to the world in one einsum (its per-call cost rules)
        world = np.einsum("kij,ksj->ksi", R_leg, np.concatenate([pos, axes_local], axis=1))
        rows: list[list[float] | None] = []
        # float math per leg (numpy's per-call cost dwarfs the arithmetic), only x and y (the
        # torques of upward forces need no more), in the order of the whole-array
        # expressions it stands for
        for on, leg_world, half_weight, weight_below in zip(
                legs, world.tolist(), self._half_seg_weight, self._weight_below, strict=True):
            if not on:
                rows.append(None)
                continue
            pos_w, axes = leg_world[:5], leg_world[5:]
            # weight times midpoint of each segment
            seg_mc = [[w * (a[0] + b[0]), w * (a[1] + b[1])]
                      for w, a, b in zip(half_weight, pos_w[:4], pos_w[1:], strict=True)]
            # first moment of everything below each segment's top (distal sums)
            below_mc = seg_mc[:]
            for s in (2, 1, 0):
                below_mc[s] = [below_mc[s + 1][0] + seg_mc[s][0], below_mc[s + 1][1] + seg_mc[s][1]]
            tau_k = []
            for j, w_below in enumerate(weight_below):
                s = SEG_OF_JOINT_L[j]
                mc, pivot = below_mc[s], pos_w[s]
                r_x, r_y = mc[0] - w_below * pivot[0], mc[1] - w_below * pivot[1]  # sum m (c - p)
                # torque about the axis from upward forces: (a x r) . z
                tau_k.append(axes[j][0] * r_y - axes[j][1] * r_x)
            rows.append(tau_k)
        return rows


def _minus(a: list[float], b: list[float]) -> list[float]:
    return [a_i - b_i for a_i, b_i in zip(a, b, strict=True)]


def _rotate_back(R: list[list[float]], v: list[float]) -> list[float]:
    """R^T v for the rows of R, in float math: the same sums, in the same order, as numpy's
    einsum over R's first index (which fuses no multiply-adds)."""
    return [R[0][i] * v[0] + R[1][i] * v[1] + R[2][i] * v[2] for i in range(3)]


def _pitch_of(R: list[list[float]]) -> float:
    """Nose-down pitch [rad] of a frame (rows of its rotation matrix): the angle of its x
    axis below the horizontal."""
    return math.atan2(-R[2][0], math.hypot(R[0][0], R[1][0]))


def _yaw_of(R: list[list[float]]) -> float:
    return math.atan2(R[1][0], R[0][0])


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi
