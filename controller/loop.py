"""The Coros et al. (2011) control step.

`Controller.step` reads top to bottom as the paper, one function per phase:

1. commands: the speed ramps at the acceleration limit, the heading turns at the turn rate;
2. gait phase and stance: the gait graph's plan per leg, amended by the feet's contacts;
3. leg-frame targets: where the chest and pelvis frames should be, with the stride waves;
   then the cadence: the stride clock quickens with speed, a push or a turn (not in the paper);
4. virtual forces through J^T: what the frames want of their supporting feet;
5. swing legs and IK: foot placement, swing paths, stance feet, the analytic leg IK;
6. spine split: the frames' orientation difference split along the spine (quaternions);
7. PD plus feed-forward: the joint servo command.

Everything the controller carries from step to step is one ControllerState; the compiled
kernels (controller/legchain.pyx) hold arithmetic only, every decision is made here. No
pybullet: the World reads the DogState and applies the ServoCommand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from quadsim.controller.footing import Footing
from quadsim.controller.kinematics import quat_rows, wrap_angle
from quadsim.controller.pd import ServoCommand, gain_arrays
from quadsim.controller.spine import pitch_yaw_quat
from quadsim.controller.stand import leg_kinematics
from quadsim.controller.state import TRACKED_LINKS, ControllerState, DogState
from quadsim.controller.terrain import GroundMap
from quadsim.gaits.graph import GaitGraph
from quadsim.gaits.params import PULL_UNLIMITED, SCHEMA, GaitParams
from quadsim.gaits.waves import WAVES, StrideWaves, amplitude_name, phase_name
from quadsim.models import FORE, GRAVITY_MPS2, HIND, LEGS, Skeleton

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
# on terrain, the integral discharges V_INT_UNWIND times faster than it charges once the
# speed is past the command by more than V_INT_BAND of it (at least 0.1 m/s): a hill's
# climb, where the integral fills, is not repaid as a runaway on its descent
V_INT_UNWIND, V_INT_BAND = 5.0, 0.1
# on terrain a lower bound: a climb at its 0.6 m bound drove the walk's feet into slipping and
# its frames into bouncing (2-3 falls in 8 up the 10 degree hill; notebook 2026-12-06 night)
V_INT_MAX_TERRAIN = 0.3  # [m]
YAW_INT_TIME_S = 1.0  # [s] integral time of the heading loop while turning
YAW_INT_MAX = 0.3  # [rad s] bound on the integrated heading error (anti-windup)
MAX_FP_ERROR = 0.5  # [m/s] velocity error the foot-placement feedback acts on at most
MAX_CADENCE = 2.0  # a quickened stride clock (a push, a turn) runs at most twice its own rate
# the stride period falls with speed from the gait's reference speed to twice it; below it
# the period stays (a long-striding trot fell starting from standing on longer strides)
SPEED_RATIO_MAX = 2.0
MAX_STEER_RPS = 1.0  # [rad/s] bound on the turn rate that steers back onto the heading
PITCH_ENDS = (-1.0, 1.0)  # nose down: the front end sinks, the back end rises
SWING_LEG_TERMS = (
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


@dataclass
class Command:
    """What the dog is asked to do: forward speed [m/s] and heading [rad] (world yaw)."""

    speed_mps: float = 0.0
    heading_rad: float = 0.0
    turn_rate_rps: float = 0.0


@dataclass(slots=True)
class Heading:
    """Phase 1's result: the heading [rad] now, its rotation H2 (2, 2) on the ground, its
    forward and left directions there, the step offsets (4 rows of x, y) [m] turned to it;
    the ramped speed [m/s] and the turn rate [rad/s]."""

    yaw: float
    H2: np.ndarray
    forward: tuple[float, float]
    left: tuple[float, float]
    step_offset: list[list[float]]
    speed: float = 0.0
    turn_rate: float = 0.0

    @classmethod
    def of(cls, yaw: float, step_offset: np.ndarray) -> Heading:
        """The heading `yaw` [rad], with the gait's step offsets (2, 4) turned to it."""
        c, s = math.cos(yaw), math.sin(yaw)
        H2 = np.array([[c, -s], [s, c]])
        return cls(yaw, H2, (c, s), (-s, c), (H2 @ step_offset).T.tolist())


@dataclass(slots=True)
class LegPhase:
    """Phase 2's result, per leg (lists of 4): progress through swing (-1 in stance), the
    time to lift-off and to the strike [s], stance and support (a stance foot on the ground)
    and whether the leg lifted off at this step."""

    swing: list[float]
    to_liftoff: list[float]
    to_strike: list[float]
    stance: list[bool]
    support: list[bool]
    lifted: list[bool]


@dataclass(slots=True)
class FrameTargets:
    """Phase 3's result for the two leg frames (front: chest, back: pelvis).

    frames (2, 3, 3): position, velocity, angular velocity now; R (2, 3, 3) their rotation;
    pitch (2,) their nose-down pitch [rad]; R_d_per_frame (2, 3, 3), pitch_d: the desired
    orientation (the same for both frames) and pitch; height_d (2, 3): desired height [m],
    its rate and acceleration; v_d (2, 2) [m/s]: desired ground velocity; yaw_err (2,)
    [rad]; w_d (3,) [rad/s] the desired angular velocity; head, tail, flex, bend: the head,
    tail, spine flexion and bend waves [rad]."""

    frames: np.ndarray
    R: np.ndarray
    pitch: list[float]
    R_d_per_frame: np.ndarray
    pitch_d: float
    height_d: np.ndarray
    v_d: np.ndarray
    yaw_err: list[float]
    w_d: np.ndarray
    head: float
    tail: float
    flex: float
    bend: float


@dataclass(slots=True)
class GaitTerms:
    """What the step reads of a gait, worked out once per change of params: its graph, its
    scalar parameters by name, each leg's swing and stance time [s], the step offsets (2, 4)
    [m] along and across the heading, the stride waves, the swing plan (kernel), the most
    each frame's feet may pull down [N], the PD gains, the stance hips' share of their PD
    per leg, each leg's stance push forward and up at mid-stance [N] (None: no pushes),
    the frames' heights [m]; and the gains per pattern of supporting legs, made the first
    time a pattern occurs (a gait uses few of the 16)."""

    graph: GaitGraph
    scalar: dict[str, float]
    t_swing: list[float]
    t_stance: list[float]
    step_offset: np.ndarray
    waves: StrideWaves
    swing_plan: legchain.SwingPlan
    max_pull: list[float]
    kp: np.ndarray
    kd: np.ndarray
    hip_pd: np.ndarray
    stance_push: list[tuple[float, float]] | None
    height_d: tuple[float, float]
    gains_by_support: dict[tuple[bool, ...], np.ndarray] = field(default_factory=dict)


class Controller:
    """The per-step controller of one skeleton and gait. dt: the control step [s];
    ground_map: the terrain's heights (World.ground_map), which the feet and frames read
    (controller/footing.py; on flat ground it needs none)."""

    def __init__(
        self,
        skeleton: Skeleton,
        params: GaitParams,
        dt: float = 1e-3,
        accel_limit_mps2: float = 1.0,
        ground_map: GroundMap | None = None,
    ) -> None:
        self.skeleton = skeleton
        self.dt = dt
        self.accel_limit = accel_limit_mps2
        self.command = Command()
        names = skeleton.joint_names
        self.lower, self.upper, _ = skeleton.limits()
        self.legs, leg_idx = leg_kinematics(skeleton)
        self.leg_idx = np.ascontiguousarray(leg_idx, dtype=np.intp)
        self.hip_idx = self.leg_idx[:, :2].copy()  # hip/shoulder roll and pitch of each leg
        self.spine_idx = np.array(
            [[names.index(p), names.index(y)] for p, y in skeleton.spine_joints]
        )
        self.head_pitch_idx = names.index(skeleton.head_joints[0])
        self.tail_pitch_idx = names.index(skeleton.tail_joints[0][0])
        self.kp0, self.kd0 = gain_arrays(skeleton)
        self.hanging = self._hanging_chains()
        self.frame_weight = self._frame_weights()
        mass = {k.name: k.mass for k in skeleton.links}
        self.seg_mass = np.array([[mass[n] for n in skeleton.legs[leg].links] for leg in LEGS])
        self.foot_radius = skeleton.spec.foot_radius
        on_terrain = ground_map is not None and not ground_map.flat
        self.footing = Footing(ground_map, self.foot_radius) if on_terrain else None
        # the speed integral's terrain rules, a lower bound and a fast discharge (1: none)
        self.v_int_max, self.v_int_unwind = (
            (V_INT_MAX_TERRAIN, V_INT_UNWIND) if on_terrain else (V_INT_MAX, 1.0)
        )
        self.chains = legchain.LegChains(
            self.legs.hip, self.legs.lengths, BEND, self.seg_mass * GRAVITY_MPS2
        )
        self.leg_frames = legchain.LegFrames(self.frame_weight.tolist(), GRAVITY_MPS2)
        self.state = ControllerState(n_joints=len(names))
        self.set_params(params)

    def _hanging_chains(self) -> legchain.HangingChains:
        """The neck with the head (off the chest) and the tail (off the pelvis), whose
        gravity the servo holds up each step in the pose they are in."""
        sk = self.skeleton
        names = sk.joint_names
        root, origin, centre, mass, joint = [], [], [], [], []
        for frame, chain in ((FRONT, [*sk.neck_joints, sk.head_joints]), (BACK, sk.tail_joints)):
            for n, (pitch, _) in enumerate(chain):
                link = next(k for k in sk.links if k.joints and k.joints[0].name == pitch)
                root.append(frame if n == 0 else -1)
                origin.append(link.origin)
                centre.append(link.center)
                mass.append(link.mass)
                joint.append([names.index(j.name) for j in link.joints])
        return legchain.HangingChains(root, origin, centre, mass, joint, GRAVITY_MPS2)

    def _frame_weights(self) -> np.ndarray:
        """Weight [N] carried by each leg frame: its own links, its legs, neck and head or
        tail, and its share of the spine by fractional distance (w = 1/2 for a uniform
        spine); scaled so that the two carry the whole dog."""
        sk = self.skeleton
        mass = {k.name: k.mass for k in sk.links}
        spine = sum(mass[n] for n in sk.spine_links)
        spine += sk.spec.connector_mass * 2 * len(sk.spine_joints)
        front = ["chest", "head", *[n for n in mass if n.startswith("neck") or n[:2] in FORE]]
        back = ["pelvis", *[n for n in mass if n.startswith("tail") or n[:2] in HIND]]
        weight = GRAVITY_MPS2 * np.array(
            [sum(mass[n] for n in front) + 0.5 * spine, sum(mass[n] for n in back) + 0.5 * spine]
        )
        return weight * (self.skeleton.total_mass * GRAVITY_MPS2 / weight.sum())

    def set_params(self, params: GaitParams) -> None:
        """Use `params` from now on (the phase carries over)."""
        self.params = params
        self.gait = self._gait_terms(params)
        self.heading_terms = Heading.of(self.state.heading, self.gait.step_offset)
        p = params
        kv = np.array([p.frames("kv_sagittal_Ns_per_m"), p.frames("kv_coronal_Ns_per_m")]).T
        gains = ("kp_height_N_per_m", "kd_height_Ns_per_m", "kp_orient_Nm_per_rad")
        gains += ("kd_orient_Nms_per_rad", "kp_yaw_Nm_per_rad", "kd_yaw_Nms_per_rad")
        self.leg_frames.set_gains(kv, *(p.frames(name) for name in gains))

    def _gait_terms(self, p: GaitParams) -> GaitTerms:
        """What the step reads of the gait, worked out once per change of params."""
        graph = p.graph()
        leg = {name: p.leg(name) for name in SWING_LEG_TERMS}
        swing_dur = np.asarray(graph.swing_duration)
        t_stance = ((1.0 - swing_dur) * graph.period_s).tolist()
        swing_plan = legchain.SwingPlan(
            leg["swing_height_m"],
            leg["swing_lift_skew"],
            leg["swing_reach_early"],
            leg["toe_off_lead_s"],
            leg["strike_lead_s"],
            leg["stance_cannon_rad"],
            leg["swing_cannon_rad"],
            leg["toe_off_rad"],
            leg["foot_strike_rad"],
            t_stance,
            np.stack([p.leg("fp_sagittal_s"), p.leg("fp_coronal_s")], axis=1),
            max_fp_error=MAX_FP_ERROR,
            reach_below_m=REACH_BELOW_M,
            max_extend_m=p["stance_extend_max_m"],
        )
        kp, kd = self.kp0.copy(), self.kd0.copy()
        kp[self.spine_idx] *= p["spine_stiffness"]
        kd[self.spine_idx] *= min(p["spine_stiffness"], 1.0)
        return GaitTerms(
            graph=graph,
            scalar={spec.name: p[spec.name] for spec in SCHEMA if not spec.keyed},
            t_swing=(swing_dur * graph.period_s).tolist(),
            t_stance=t_stance,
            step_offset=np.stack([leg["step_offset_x_m"], SIDE * leg["step_offset_y_m"]]),
            waves=StrideWaves(
                np.array([p.harmonics(amplitude_name(w)) for w, *_ in WAVES]),
                np.array([p.harmonics(phase_name(w)) for w, *_ in WAVES]),
            ),
            swing_plan=swing_plan,
            # at the bound, no limit (older gait files)
            max_pull=[
                math.inf if share >= PULL_UNLIMITED else share * w
                for share, w in zip(p.frames("stance_pull_max"), self.frame_weight, strict=True)
            ],
            kp=kp,
            kd=kd,
            hip_pd=np.repeat(p.frames("stance_hip_pd"), 2),
            stance_push=self._stance_push(p),
            height_d=(p["height_front_m"], p["height_back_m"]),
        )

    def _stance_push(self, p: GaitParams) -> list[tuple[float, float]] | None:
        """Each leg's stance push forward and up at mid-stance [N], or None if the gait has
        none (the step then skips them)."""
        push = np.stack([p.leg("stance_push_fwd"), p.leg("stance_push_up")], axis=1)
        if not push.any():
            return None
        return [tuple(row) for row in (push * self.frame_weight[FRAME_OF_LEG, None]).tolist()]

    # ------------------------------------------------------------------ the step
    def step(self, state: DogState) -> ServoCommand:
        """The joint servo command until the next control step."""
        if not self.state.started:
            self.reset(state)
        heading = self.commands()
        legs = self.gait_phase_and_stance(state)
        frames = self.leg_frame_targets(state, heading, legs)
        self.state.cadence = self.cadence(frames, heading)
        spine_torque = self.virtual_forces(state, heading, frames, legs)
        q_target = self.swing_legs_and_ik(state, heading, frames, legs)
        self.spine_split(q_target, heading, frames)
        command = self.pd_plus_feed_forward(state, q_target, legs, frames, spine_torque)
        s = self.state
        s.phase = (s.phase + s.cadence * self.dt / self.gait.graph.period_s) % 1.0
        s.t += self.dt
        return command

    def reset(self, state: DogState) -> None:
        """Start from `state`: every foot down where it stands, targets at the standing pose;
        legs whose swing is under way at phase 0 stay down until it is over."""
        s = self.state
        s.started = True
        s.q_target_prev[:] = self.skeleton.stand_angles()
        s.qd_target[:] = 0.0
        s.heading = self.command.heading_rad
        s.ground[:] = state.foot_pos[:, 2] - self.foot_radius
        if self.footing is not None:
            for k in range(4):
                s.ground_offset[k] = self.footing.strike_offset(s.ground[k], state.foot_pos[k])
        s.liftoff[:] = state.foot_pos[:, :2]
        s.anchor[:] = state.foot_pos[:, :2]
        s.stance[:] = True
        s.support[:] = True
        s.hold[:] = [sw >= 0.0 for sw in self.gait.graph.progress(s.phase)[0]]

    def commands(self) -> Heading:
        """Phase 1: the speed ramps toward the command at the acceleration limit; the
        heading turns at the commanded rate, on the radius of the commanded speed while the
        dog speeds up."""
        s, cmd = self.state, self.command
        max_dv = self.accel_limit * self.dt
        s.speed += min(max(cmd.speed_mps - s.speed, -max_dv), max_dv)
        ramp = min(s.speed / cmd.speed_mps, 1.0) if cmd.speed_mps > 0.0 else 1.0
        turn_rate = cmd.turn_rate_rps * ramp
        s.heading += turn_rate * self.dt
        if s.heading != self.heading_terms.yaw:  # it stays put unless the dog turns
            self.heading_terms = Heading.of(s.heading, self.gait.step_offset)
        h = self.heading_terms  # (not dataclasses.replace: it costs more than the step's maths)
        return Heading(h.yaw, h.H2, h.forward, h.left, h.step_offset, s.speed, turn_rate)

    def gait_phase_and_stance(self, state: DogState) -> LegPhase:
        """Phase 2: the gait graph says which legs swing; contacts amend it. A swing foot
        striking late in its swing ends it; legs held down at the start join after their
        swing; a stance foot supports the body from its strike until lift-off, unless it
        has lost the ground for longer than a bounce."""
        s = self.state
        swing, stance_progress = self.gait.graph.progress(s.phase)
        contact = state.foot_contact.tolist()
        in_swing = [sw >= 0.0 for sw in swing]
        s.planned_stance[:] = [not sw for sw in in_swing]
        stance, support, lifted, to_strike, to_liftoff = [], [], [], [], []
        clock = 1.0 / s.cadence  # seconds of the gait's time per second now
        for k in range(4):
            s.hold[k] = s.hold[k] and in_swing[k]
            s.early[k] = (s.early[k] or (contact[k] and swing[k] > EARLY_CONTACT)) and in_swing[k]
            now = not in_swing[k] or s.hold[k] or s.early[k]
            lifted.append(bool(s.stance[k]) and not now)
            s.since_contact[k] = 0.0 if contact[k] else s.since_contact[k] + self.dt
            touchdown = now and contact[k] and not s.support[k]
            if touchdown:  # the foot fixes its anchor and the ground height under it
                s.ground[k] = state.foot_pos[k, 2] - self.foot_radius
                s.anchor[k] = state.foot_pos[k, :2]
                if self.footing is not None:
                    s.ground_offset[k] = self.footing.strike_offset(s.ground[k], s.anchor[k])
            if lifted[k]:
                s.liftoff[k] = state.foot_pos[k, :2]
            support.append(
                bool(s.support[k] or touchdown) and now and s.since_contact[k] < BOUNCE_S
            )
            stance.append(now)
            if in_swing[k]:
                to_strike.append((1.0 - swing[k]) * self.gait.t_swing[k] * clock)
                to_liftoff.append(0.0)
            else:
                to_strike.append(0.0)
                to_liftoff.append((1.0 - stance_progress[k]) * self.gait.t_stance[k] * clock)
        if self.footing is not None:
            for k in range(4):  # a foot down that has not found the ground: the map's
                if stance[k] and not support[k]:
                    s.ground[k] = self.footing.ground_at(s.ground_offset[k], s.anchor[k])
        s.stance[:], s.support[:] = stance, support
        return LegPhase(swing, to_liftoff, to_strike, stance, support, lifted)

    def leg_frame_targets(self, state: DogState, heading: Heading, legs: LegPhase) -> FrameTargets:
        """Phase 3: the frames now (the legs posed on them), and where they should be: the
        desired heights over the ground under their feet (on a hill, by hip_ground_share, over
        the land under their hips) and the pitch, moved by the stride waves; the desired
        velocities, each frame's own on a turning body; the heading errors, with the slow
        integrals of the speed and heading errors."""
        s, p = self.state, self.gait.scalar
        frames = np.array(
            [
                [state.link_pos[CHEST], state.link_vel[CHEST], state.link_angvel[CHEST]],
                [state.base_pos, state.base_vel, state.base_angvel],
            ]
        )
        rows = [quat_rows(*state.link_quat[CHEST].tolist()), quat_rows(*state.base_quat.tolist())]
        R = np.array(rows)
        self.chains.update(
            state.q.take(self.leg_idx), R.take(FRAME_OF_LEG, axis=0), frames[FRAME_OF_LEG, 0]
        )
        wave, rate, accel = self.gait.waves(s.phase, self.gait.graph.period_s / s.cadence)
        # the body pitches about its middle: its ends sink and rise with the pitch wave
        (x0, y0, _), (x1, y1, _) = frames[FRONT, 0].tolist(), frames[BACK, 0].tolist()
        half_body = 0.5 * math.hypot(x0 - x1, y0 - y1)
        for k, end in enumerate(PITCH_ENDS):
            wave[k] += half_body * end * wave[2]
            rate[k] += half_body * end * rate[2]
            accel[k] += half_body * end * accel[2]
        dz_front, dz_back, dpitch, head, tail, flex, bend = wave
        ground, climb, lift = s.ground.tolist(), [0.0, 0.0], [0.0, 0.0]
        if self.footing is not None:
            footing, hips_share = self.footing, p["hip_ground_share"]
            # where the feet's grounds are read: only a gait standing on its hips' land needs it
            where = s.anchor.copy() if hips_share else None
            for k, sw in enumerate(legs.swing):  # on to its landing's ground as it swings
                if not legs.stance[k]:
                    swung = min(sw, 1.0)
                    start = footing.ground_at(s.ground_offset[k], s.liftoff[k])
                    end = footing.ground_at(s.ground_offset[k], s.anchor[k])
                    ground[k] = start + (end - start) * swung
                    if where is not None:
                        where[k] = s.liftoff[k] + (s.anchor[k] - s.liftoff[k]) * swung
            climb = [footing.climb_rate(frames[f, 0], frames[f, 1]) for f in (FRONT, BACK)]
            if where is not None:  # a hill under the hips, not under the feet ahead or behind
                lift = [
                    hips_share * footing.under_frame(frames[f, 0], where[2 * f : 2 * f + 2])
                    for f in (FRONT, BACK)
                ]
        ground_front, ground_back = (ground[0] + ground[1]) / 2, (ground[2] + ground[3]) / 2
        height_d = np.array(
            [
                [
                    ground_front + lift[0] + self.gait.height_d[0] + dz_front,
                    rate[0] + climb[0],
                    accel[0],
                ],
                [
                    ground_back + lift[1] + self.gait.height_d[1] + dz_back,
                    rate[1] + climb[1],
                    accel[1],
                ],
            ]
        )
        pitch_d = p["body_pitch_rad"] + dpitch
        if self.footing is not None and p["ground_pitch_share"]:
            slope = ground_pitch(state.foot_pos, ground_front, ground_back)
            pitch_d += p["ground_pitch_share"] * slope
        R_d_rows = quat_rows(*pitch_yaw_quat(pitch_d, *_half_angle(heading.yaw)))
        R_d_per_frame = np.array([R_d_rows, R_d_rows])
        yaw_err = [wrap_angle(heading.yaw - math.atan2(r[1][0], r[0][0])) for r in rows]
        # the speed's slow integral: k_v alone leaves a steady shortfall against the legs'
        # losses; it adds to the desired velocity along the heading
        (fx, fy), (lx, ly) = heading.forward, heading.left
        (vx0, vy0, _), (vx1, vy1, _) = frames[FRONT, 1].tolist(), frames[BACK, 1].tolist()
        body_v = 0.5 * (vx0 + vx1) * fx + 0.5 * (vy0 + vy1) * fy
        speed_err = heading.speed - body_v
        if speed_err * s.v_int < 0.0 and abs(speed_err) > max(0.1, V_INT_BAND * heading.speed):
            speed_err *= self.v_int_unwind
        s.v_int = min(max(s.v_int + speed_err * self.dt, -self.v_int_max), self.v_int_max)
        steer = heading.turn_rate
        if p["steer_fp_per_s"]:  # steering by foot placement: turn back onto the heading
            err = p["steer_fp_per_s"] * 0.5 * (yaw_err[FRONT] + yaw_err[BACK])
            steer += min(max(err, -MAX_STEER_RPS), MAX_STEER_RPS)
        # a body turning at the rate: its ends move sideways, +-w d
        side = steer * 0.5 * ((x0 - x1) * fx + (y0 - y1) * fy)
        v = heading.speed
        v_d = np.array(
            [[v * fx + side * lx, v * fy + side * ly], [v * fx - side * lx, v * fy - side * ly]]
        )
        w_d = np.array(
            [lx * rate[2], ly * rate[2], 0.0]
        )  # the pitch wave's rate, about the heading's y
        pitch = [math.atan2(-r[2][0], math.hypot(r[0][0], r[1][0])) for r in rows]
        return FrameTargets(
            frames,
            R,
            pitch,
            R_d_per_frame,
            pitch_d,
            height_d,
            v_d,
            yaw_err,
            w_d,
            head,
            tail,
            flex,
            bend,
        )

    def cadence(self, frames: FrameTargets, heading: Heading) -> float:
        """Phase 3b: how fast the stride clock runs from now on (the swing and stance times
        of the next step shrink with it): 1 unless the gait quickens, by quicken_s_per_m per
        m/s of the pelvis's velocity error (against its own desired velocity, turning or not)
        beyond quicken_deadband_mps, so that a pushed dog's feet step out of the push before
        it topples, and by turn_quicken_s_per_rad per rad/s of turn, so that a long-striding
        gait steps more often while it turns (a controller's aid: greyhounds keep their
        stride timing in a bend, Usherwood & Wilson 2005); together at most MAX_CADENCE.
        All of it times the speed's rate (v / stride_speed_ref_mps)^stride_speed_exponent
        of the ramped speed command v above the reference speed: dogs shorten their stride
        period as they speed up within a gait (Heglund & Taylor 1988)."""
        p = self.gait.scalar
        quicker = p["turn_quicken_s_per_rad"] * abs(heading.turn_rate)
        if p["quicken_s_per_m"]:
            ex, ey = (frames.frames[BACK, 1, :2] - frames.v_d[BACK]).tolist()
            excess = math.hypot(ex, ey) - p["quicken_deadband_mps"]
            quicker += p["quicken_s_per_m"] * max(excess, 0.0)
        rate = 1.0 + min(quicker, MAX_CADENCE - 1.0)
        if p["stride_speed_exponent"]:
            ratio = heading.speed / p["stride_speed_ref_mps"]
            rate *= min(max(ratio, 1.0), SPEED_RATIO_MAX) ** p["stride_speed_exponent"]
        return rate

    def virtual_forces(
        self, state: DogState, heading: Heading, frames: FrameTargets, legs: LegPhase
    ) -> tuple[float, float]:
        """Phase 4: each frame's virtual force (velocity, height) and torque (orientation,
        heading), shared among its supporting feet; tau = J^T (-F) in phase 7. A frame's feet
        pull it down by at most its gait's limit; while turning, the heading loop gains
        integral action (a turn meets a steady yaw resistance). Each stance foot adds its
        gait's push, a half sine over its stance. The spine takes its share of the chest's
        pitch and yaw torque: returned as the torque [N*m] of each spine pitch and yaw joint."""
        s = self.state
        yaw_err = np.array(frames.yaw_err)
        if heading.turn_rate != 0.0:
            s.yaw_int[:] = np.clip(s.yaw_int + yaw_err * self.dt, -YAW_INT_MAX, YAW_INT_MAX)
            yaw_err += s.yaw_int / YAW_INT_TIME_S
        fx, fy = heading.forward
        pull = s.v_int / V_INT_TIME_S
        v_d = frames.v_d + (fx * pull, fy * pull)
        lf = self.leg_frames
        lf.wrenches(
            frames.frames,
            frames.R,
            frames.R_d_per_frame[0],
            heading.H2,
            v_d,
            frames.height_d,
            yaw_err,
            frames.w_d,
            heading.speed,
            heading.turn_rate,
        )
        for f in (FRONT, BACK):
            lf.frame_force[f, 2] = max(lf.frame_force[f, 2], -self.gait.max_pull[f])
        lf.share(lf.frame_force, lf.yaw_torque, state.foot_pos, frames.frames, legs.support)
        if self.gait.stance_push is not None:
            for k, (forward, up) in enumerate(self.gait.stance_push):
                if legs.support[k] and legs.swing[k] < 0.0:
                    stance_left = legs.to_liftoff[k] * self.state.cadence / self.gait.t_stance[k]
                    bump = math.sin(math.pi * (1.0 - stance_left))
                    lf.leg_force[k] += (bump * forward * fx, bump * forward * fy, bump * up)
        return self._spine_share(frames.R)

    def _spine_share(self, R: np.ndarray) -> tuple[float, float]:
        """The chest's torque the spine applies (spine_torque_share of its pitch and yaw
        parts), taken off what the fore legs must apply; the spine's joint axes taken as
        the mean of the chest's and the pelvis's (the split bends it little)."""
        share = self.gait.scalar["spine_torque_share"]
        if not share:
            return 0.0, 0.0
        pitch_axis, yaw_axis = R[FRONT, :, 1] + R[BACK, :, 1], R[FRONT, :, 2] + R[BACK, :, 2]
        pitch_axis /= np.linalg.norm(pitch_axis)
        yaw_axis /= np.linalg.norm(yaw_axis)
        torque = self.leg_frames.frame_torque[FRONT]
        pitch, yaw = share * float(pitch_axis @ torque), share * float(yaw_axis @ torque)
        torque -= pitch * pitch_axis + yaw * yaw_axis
        return pitch, yaw

    def swing_legs_and_ik(
        self, state: DogState, heading: Heading, frames: FrameTargets, legs: LegPhase
    ) -> np.ndarray:
        """Phase 5: the joint targets of the legs. Each swinging foot aims where it will
        land (the paper's foot placement); stance feet hold the point where they struck, on
        the ground under them (reaching below it until they bear weight), posed as if their
        frame already stood at its desired height and orientation, and never pulled off the
        ground; swing feet follow their path. The leg's plane pitches with the desired pitch
        in stance and its frame's in swing; the analytic two-link IK poses each leg."""
        s, plan = self.state, self.gait.swing_plan
        planned_swing = [sw >= 0.0 for sw in legs.swing]  # early strikes keep aiming
        if any(planned_swing):
            plan.place_feet(
                self.chains,
                frames.frames[:, 1],
                frames.v_d,
                heading.H2,
                self.leaning_offsets(heading),
                legs.to_strike,
                planned_swing,
                s.anchor,
                1.0 / s.cadence,
            )
            if self.footing is not None:
                for k in range(4):
                    if planned_swing[k]:
                        self.footing.off_edges(s.anchor[k], heading.forward)
        ground = (s.ground + self.foot_radius).tolist()  # the foot sphere's centre
        landing, floor = ground, None
        if self.footing is not None:  # from the ground it left to the ground it lands on
            footing, r, landing = self.footing, self.foot_radius, list(ground)
            floor = [-math.inf] * 4
            for k in range(4):
                # a foot that struck early stands on the ground it struck, not its lift-off's
                if not legs.stance[k]:  # swinging now (stance: planned, held or struck)
                    off = s.ground_offset[k]
                    ground[k] = footing.ground_at(off, s.liftoff[k]) + r
                    if footing.uneven(s.liftoff[k], s.anchor[k]):  # a rise to clear
                        landing[k] = footing.landing_ground(off, s.anchor[k], heading.forward) + r
                        floor[k] = footing.swing_floor(state.foot_pos[k], s.anchor[k])
                    else:
                        landing[k] = footing.ground_at(off, s.anchor[k]) + r
        target = plan.leg_targets(
            legs.swing,
            legs.stance,
            legs.support,
            s.liftoff,
            s.anchor,
            ground,
            landing,
            floor,
            frames.frames,
            frames.R,
            frames.height_d,
            frames.R_d_per_frame,
            state.foot_pos,
        )
        plane = [
            frames.pitch_d if st else frames.pitch[f]
            for st, f in zip(legs.stance, (FRONT, FRONT, BACK, BACK), strict=True)
        ]
        cannon, toe = plan.foot_angles(legs.swing, legs.to_liftoff, legs.to_strike)
        q_target = s.q_target_prev.copy()
        q_target[self.leg_idx] = self.chains.solve_ik(
            target.tolist(),
            [c - p for c, p in zip(cannon, plane, strict=True)],
            [t - p for t, p in zip(toe, plane, strict=True)],
        )
        return q_target

    def leaning_offsets(self, heading: Heading) -> list[list[float]]:
        """The step offsets (4 rows of x, y) [m], in a turn moved outward by the gait's
        turn_lean share of h v w / g (h its frame's height): where feet must land for the
        centripetal force to lean the body into the turn. Without it only a sideslip puts
        them there (the velocity feedback), and the dog crabs outward."""
        share = self.gait.scalar["turn_lean"]
        if not (heading.turn_rate and share):
            return heading.step_offset
        lx, ly = heading.left
        lean = share * heading.speed * heading.turn_rate / GRAVITY_MPS2
        front, back = self.gait.height_d
        return [
            [ox - lean * h * lx, oy - lean * h * ly]
            for (ox, oy), h in zip(heading.step_offset, (front, front, back, back), strict=True)
        ]

    def spine_split(self, q_target: np.ndarray, heading: Heading, frames: FrameTargets) -> None:
        """Phase 6: the chest's target is the pelvis's, flexed and bent sideways by the
        spine's waves; the rotation between them is split evenly along the spine joints
        (quaternions). The head keeps its pitch in the world, the tail its own."""
        pitch_d = frames.pitch_d
        q_target[self.spine_idx] = legchain.spine_pitch_yaw(
            pitch_d,
            pitch_d + frames.flex,
            *_half_angle(heading.yaw),
            *_half_angle(heading.yaw + frames.bend),
            len(self.spine_idx),
        )
        p = self.gait.scalar
        q_target[self.head_pitch_idx] = p["head_pitch_rad"] + frames.head - frames.pitch[FRONT]
        q_target[self.tail_pitch_idx] = p["tail_pitch_rad"] + frames.tail

    def pd_plus_feed_forward(
        self,
        state: DogState,
        q_target: np.ndarray,
        legs: LegPhase,
        frames: FrameTargets,
        spine_torque: tuple[float, float],
    ) -> ServoCommand:
        """Phase 7: PD on every joint toward its target, on the supporting hips scaled by
        stance_hip_pd (0: the paper's torque-only stance hips), plus the feed-forward
        torques: gravity compensation of neck, head and tail in their pose now, the spine's
        share of the chest's torque, J^T (-F) of the supporting feet, the frame torque the
        swinging hips leave shared by the supporting hips, and the swing legs carrying
        their own weight.

        The targets are clipped to the joints' ranges; their rates come from their own
        motion, so damping resists only a swinging leg's tracking error (a leg in stance or
        just lifted off is held at rest)."""
        s = self.state
        still = [st or up for st, up in zip(legs.stance, legs.lifted, strict=True)]
        legchain.track_targets(
            q_target,
            self.lower,
            self.upper,
            s.q_target_prev,
            s.qd_target,
            self.leg_idx,
            still,
            self.dt,
            MAX_TARGET_RATE,
            TARGET_RATE_FILTER,
        )
        gains = self._gains_for(tuple(legs.support))
        hip_servo = np.zeros((4, 2))
        legchain.hip_servo(gains, q_target, state.q, s.qd_target, state.qd, self.hip_idx, hip_servo)
        tau = np.zeros(len(q_target))
        self.hanging.torques(frames.R, state.q, tau)
        if spine_torque != (0.0, 0.0):
            tau[self.spine_idx[:, 0]] += spine_torque[0]
            tau[self.spine_idx[:, 1]] += spine_torque[1]
        swinging = [not st for st in legs.stance]
        lf = self.leg_frames
        tau[self.leg_idx] = self.chains.leg_torques(
            lf.leg_force, lf.frame_torque, hip_servo, legs.support, swinging
        )
        return ServoCommand(tau, q_target, s.qd_target.copy(), *gains)

    def _gains_for(self, support: tuple[bool, ...]) -> np.ndarray:
        """kp and kd (2, n_joints) with the supporting hips' scaled by stance_hip_pd; made the
        first time a pattern of supporting legs occurs under these params (a gait uses few of
        the 16). Read-only: the servo commands of many steps share them."""
        gains = self.gait.gains_by_support.get(support)
        if gains is None:
            gains = np.stack([self.gait.kp, self.gait.kd])
            for k in np.flatnonzero(support):
                gains[:, self.hip_idx[k]] *= self.gait.hip_pd[k]
            gains.setflags(write=False)
            self.gait.gains_by_support[support] = gains
        return gains

    def log_fields(self, state: DogState) -> dict[str, float | np.ndarray]:
        """What the run log records of the controller besides the state; `planned_stance`
        (4,) is the gait graph's stance of each foot at this step (before contacts amend it);
        `cadence` how fast the stride clock runs (1: at period_s)."""
        return {
            "speed_cmd": self.state.speed,
            "heading_cmd": self.state.heading,
            "chest_height": float(state.link_pos[CHEST, 2]),
            "gait_phase": self.state.phase,
            "cadence": self.state.cadence,
            "planned_stance": self.state.planned_stance.copy(),
        }

    @property
    def speed_now(self) -> float:
        """The ramped speed command [m/s] now."""
        return self.state.speed


def ground_pitch(foot_pos: np.ndarray, ground_front: float, ground_back: float) -> float:
    """The nose-down pitch [rad] of the ground the feet (foot_pos (4, 3) [m]) stand on: from
    the fore feet's ground to the hind feet's [m], over the distance between their midpoints."""
    (fx, fy), (hx, hy) = foot_pos[:2, :2].mean(axis=0), foot_pos[2:, :2].mean(axis=0)
    return math.atan2(ground_back - ground_front, math.hypot(fx - hx, fy - hy))


def _half_angle(angle: float) -> tuple[float, float]:
    return math.cos(angle / 2), math.sin(angle / 2)
