"""Playing a plan (skills/plan.py) in one run: gait steps through the gait controller, the
speed ramping under the automatic gaits' blend and the step's gait blended in once at speed;
before a skill the dog slows to a stop and stands; skills through the posture controller;
after a skill the dog stands and a fresh gait controller starts from standing."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from quadsim.controller.episode import RunResult, StepHook, run_episode, summarize
from quadsim.controller.kinematics import yaw_of
from quadsim.controller.loop import Controller
from quadsim.controller.pd import ServoCommand
from quadsim.controller.recording import DEFAULT_CAMERA, VideoRecorder
from quadsim.controller.sim import World
from quadsim.controller.state import DogState
from quadsim.controller.terrain import GroundMap
from quadsim.gaits.params import GaitParams
from quadsim.gaits.schedule import GaitSchedule, blend
from quadsim.skills import outcomes
from quadsim.skills.errors import PlanError
from quadsim.skills.getup import (
    GET_UP,
    GET_UP_WITHIN_S,
    get_up_timeline,
    place_on_side,
    standing_heights,
)
from quadsim.skills.jump import (
    Edge,
    JumpController,
    Platform,
    edges_for,
    ground_of,
    judge_jump,
)
from quadsim.skills.plan import PlanStep, parse_plan
from quadsim.skills.posture import STAND, Keyframe, PostureController, Skill, Timeline

CONTROL_DT = 1e-3
EASE_S = 0.5  # [s] from the pose the gait left to standing
SETTLE_S = 0.5  # [s] standing before a skill or a gait starts
BLEND_S = 1.0  # [s] from the automatic gaits' blend to the step's gait, once at speed
BLEND_STEP = 0.02  # the blend's weight moves on in steps this small
REBLEND_MPS = 0.01
AFTER_S = 1.5  # [s] a plan that ends in a skill stands this long after it, to see it stand
STOP_WAIT_S = 0.3  # [s] stepping in place before the legs may stop: it settles the sway
ACCEL_MPS2 = 1.0  # the gait controller's speed ramp
JUMP_BUDGET_S = 15.0  # [s] at most, for a jump step: the approach, the leap, the trot on


@dataclass
class Played:
    """A step as it was played: its times on the run's clock and the phases its outcome is
    judged on."""

    step: PlanStep
    start_s: float
    end_s: float = math.nan
    hold: tuple[float, float] | None = None
    stood: tuple[float, float] | None = None  # when it stands again, to be judged
    extra: dict = field(default_factory=dict)


class Scene:
    """The plan's driver: answers each state with a servo command, switching controllers."""

    def __init__(
        self,
        world: World,
        steps: list[PlanStep],
        edges: list[Edge] = (),
        use: Mapping[str, GaitParams] | None = None,
    ) -> None:
        self.world, self.steps = world, steps
        self.edges = list(edges)  # the edge of each jump step, in order
        self.jump: JumpController | None = None
        self._after_jump = False  # the jump's trot runs on in its own parameters
        self.schedule = GaitSchedule.auto(use=use)  # `use`: gaits in place of presets
        self.played: list[Played] = []
        self.gait: Controller | None = None
        self.posture: PostureController | None = None
        self.timeline: Timeline | None = None
        self.k = -1  # the step being played
        self.stopping = False
        self._blend_speed = math.nan
        self._at_speed_since: float | None = None
        self._blend_weight = -1.0
        self._stopped_since: float | None = None

    @property
    def resting(self) -> bool:
        """Whether the torso may rest on the ground now (a skill is playing)."""
        return self.posture is not None

    def rolling(self, t: float) -> bool:
        """Whether the dog may lie on its side at `t` [s]: a get-up rolling onto its chest."""
        return bool(self.played) and t < self.played[-1].extra.get("rolled_s", -math.inf)

    # ------------------------------------------------------------------ the control step

    def step(self, state: DogState) -> ServoCommand:
        if self.k < 0:
            self._begin(0, state)
        if self.k < len(self.steps) and self._step_over(state):
            self._end(state)
        if self.posture is not None:
            return self.posture.step(state)
        if self.jump is not None:
            return self.jump.step(state)
        return self._drive(state)

    def _step_over(self, state: DogState) -> bool:
        played = self.played[-1]
        if played.step.kind == "gait":
            return state.t >= played.start_s + played.step.duration_s
        if played.step.kind == "jump":
            return self.jump is None or self.jump.done(state.t)
        return state.t >= played.extra["done_s"]

    def _begin(self, k: int, state: DogState) -> None:
        """Start step k at state.t, from what the dog does now."""
        self.k = k
        if k >= len(self.steps):
            return
        step = self.steps[k]
        self.played.append(Played(step, state.t))
        if step.kind == "gait":
            if self.gait is None:  # from standing, after a skill or at the start
                self._start_gait(state)
            self._at_speed_since = None
            self.gait.command.speed_mps = step.speed_mps
        elif step.kind == "jump":  # from the trot (or from standing): to the next edge
            edge = self.edges[sum(p.step.kind == "jump" for p in self.played) - 1]
            self.jump = JumpController(
                self.world.skeleton,
                self.world.ground_map,
                step.name,
                edge.x_m,
                abs(edge.after_m - edge.before_m),
                gait=self.gait,
                source=step.source,
            )
            self.played[-1].extra |= {"edge": edge, "times": self.jump.times}
        else:
            self._play_skill(step, state)

    def _end(self, state: DogState) -> None:
        """Step k is over: go on to the next, stopping first where a skill follows."""
        played, nxt = self.played[-1], self._next()
        if self.jump is not None:  # landed and trotting: the trot goes on as a gait step's
            self.gait, self.jump, self._after_jump = self.jump.gait, None, True
        moving = played.step.kind in ("gait", "jump")
        if moving and nxt is not None and nxt.kind == "skill":
            if not self.stopping:  # slow down; the skill starts once the legs stand
                self.stopping = True
                self.gait.command.speed_mps = 0.0
                self._stopped_since = None
            if not self._stopped(state):
                return
            self.stopping = False
            self._to_posture(state)
        elif played.step.kind == "skill" and (nxt is None or nxt.kind == "gait"):
            if played.stood is None:  # back to standing first
                played.stood = self._stand_from(played.step, state.t)
                played.extra["done_s"] = played.stood[1]
                return
            if nxt is None:  # the plan's last step: it ends standing, the run stands on
                played.end_s = played.stood[0]
                self.k += 1
                return
            self.posture = self.timeline = None  # the gait controller takes over
        played.end_s = state.t
        self._begin(self.k + 1, state)

    def _next(self) -> PlanStep | None:
        return self.steps[self.k + 1] if self.k + 1 < len(self.steps) else None

    # ------------------------------------------------------------------ gaits

    def _start_gait(self, state: DogState) -> None:
        sk = self.world.skeleton
        c = Controller(
            sk, self.schedule.at(0.0).params, dt=CONTROL_DT, ground_map=self.world.ground_map
        )
        c.command.heading_rad = float(yaw_of(state.base_quat[None])[0])
        self.gait, self._blend_speed, self._after_jump = c, math.nan, False

    def _drive(self, state: DogState) -> ServoCommand:
        """The gait controller's step, its gait set by the ramped speed: the automatic gaits'
        blend while the speed ramps, then blended over BLEND_S into the step's own gait."""
        c = self.gait
        v, target = c.speed_now, c.command.speed_mps
        step = self.played[-1].step
        if self._after_jump and step.name in ("trot", "jump-onto", "jump-off"):
            return c.step(state)  # switching the jump's trot to the speed's blend fells it
        own = step.name if step.kind == "gait" and not self.stopping else None
        if own is not None and v == target:
            if self._at_speed_since is None:
                self._at_speed_since, self._blend_weight = state.t, -1.0
            w = min((state.t - self._at_speed_since) / BLEND_S, 1.0)
            if w - self._blend_weight >= BLEND_STEP or (w == 1.0 > self._blend_weight):
                gait = self.schedule.gaits[self.schedule.names.index(own)]
                c.set_params(blend(self.schedule.at(v).params, gait, w) if w < 1.0 else gait)
                self._blend_weight = w
            self._blend_speed = math.nan  # a later ramp starts from the automatic blend
            return c.step(state)
        self._at_speed_since = None
        if not abs(v - self._blend_speed) < REBLEND_MPS:  # (NaN: set it now)
            params = self.schedule.at(v).params
            c.set_params(square_stance(params) if self.stopping else params)
            self._blend_speed = v
        return c.step(state)

    def _stopped(self, state: DogState) -> bool:
        """Slowed to a stop, stepping in place long enough, and three feet down."""
        if self.gait.speed_now > 0.0:
            return False
        self._stopped_since = self._stopped_since if self._stopped_since is not None else state.t
        return state.t - self._stopped_since >= STOP_WAIT_S and state.foot_contact.sum() >= 3

    # ------------------------------------------------------------------ skills

    def _to_posture(self, state: DogState) -> None:
        """From the gait's last pose to standing, by the posture controller. The legs keep
        their roll, so the feet stay as wide as the gait left them: rolled to standing's
        they were dragged in while planted, and the dog tipped over later, standing up from
        a sit (the hand-tuned walk at 1.2 m/s on 2 of 3 seeds)."""
        sk = self.world.skeleton
        self.timeline = Timeline(sk, start_s=state.t, pose=state.q.copy())
        rolls = {j.name for j in sk.joints if j.kind in ("hip_roll", "shoulder_roll")}
        stand = {j: STAND for j in sk.joint_names if j not in rolls}
        self.timeline.add((Keyframe(EASE_S, 1.0, stand),), state.t)
        self.timeline.hold(SETTLE_S)
        self.posture = PostureController(sk, self.timeline)
        self.gait = None

    def _play_skill(self, step: PlanStep, state: DogState) -> None:
        """Put the skill on the timeline from where the last keyframe leaves the dog."""
        played = self.played[-1]
        if step.name == GET_UP:  # from lying on the side (skills/getup.py)
            plan = get_up_timeline(self.world.skeleton, state.q, state.base_quat, state.t)
            self.timeline = plan.timeline
            self.posture = PostureController(self.world.skeleton, plan.timeline)
            played.stood = (plan.up_s, self.timeline.hold(self._standing_tail()))
            played.extra.update(done_s=played.stood[1], up_from_s=state.t, rolled_s=plan.rolled_s)
            return
        if self.posture is None:  # the plan starts with a skill: from standing
            self._to_posture(state)
        start = max(self.timeline.end_s, state.t)
        skill = Skill.load(step.name)
        if skill.start_from:  # stand-up: its way out, from lying or sitting
            up = self.timeline.add(skill.out, start)
            played.stood = (up, self.timeline.hold(self._standing_tail()))
            played.extra["done_s"] = played.stood[1]
            played.extra["up_from_s"] = start
            return
        into_end = self.timeline.add(skill.into, start)
        played.hold = (into_end, into_end + step.hold_s)
        played.extra["done_s"] = self.timeline.hold(step.hold_s)

    def _stand_from(self, step: PlanStep, start_s: float) -> tuple[float, float]:
        """Append the skill's way back to standing; when it stands, and when it has stood
        long enough (_standing_tail)."""
        skill = Skill.load(step.name)
        out = Skill.load(skill.out_from).out if skill.out_from else skill.out
        up = self.timeline.add(out, max(start_s, self.timeline.end_s))
        return up, self.timeline.hold(self._standing_tail())

    def _standing_tail(self) -> float:
        """Standing after a skill: settled for the gait that follows, or the run's end."""
        return SETTLE_S if self._next() is not None else AFTER_S

    # ------------------------------------------------------------------ the log

    def log_fields(self, state: DogState) -> dict[str, float]:
        gait = self.jump.gait if self.jump is not None else self.gait
        speed = gait.speed_now if gait is not None else 0.0
        return {"speed_cmd": speed, "plan_step": float(min(self.k, len(self.steps) - 1))}


def square_stance(params: GaitParams) -> GaitParams:
    """`params` with no foot placed inside its hip: slowing to a stop before a skill, the
    dog squares up. A walk that steps under its midline (as the clips' dogs do) otherwise
    stops on a narrow stance and rolls over as the legs ease to standing."""
    values = {
        key: max(value, 0.0) if key.startswith("step_offset_y_m.") else value
        for key, value in params.values.items()
    }
    return replace(params, values=values)


class _Resting(StepHook):
    """Lets the World's fall check allow the torso on the ground while a skill plays."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene

    def after_control(self, world: World, state: DogState, command: object) -> None:
        world.resting_allowed = self.scene.resting
        world.getting_up = self.scene.rolling(state.t)


def planned_duration(steps: list[PlanStep]) -> float:
    """An upper bound [s] of the plan's length (the run ends when the plan does): steps,
    stops, the skills' keyframes."""
    total, speed, after_skill = 0.0, 0.0, False
    for step in steps:
        if step.kind == "jump":  # the approach, the leap, the trot on
            total += JUMP_BUDGET_S
            speed, after_skill = 2.0, False
            continue
        if step.kind == "gait":
            total += step.duration_s + (SETTLE_S if after_skill else 0.0)
            speed, after_skill = step.speed_mps, False
            continue
        skill = Skill.load(step.name)
        out = Skill.load(skill.out_from).out if skill.out_from else skill.out
        total += speed / ACCEL_MPS2 + 2 * STOP_WAIT_S + 1.0 + EASE_S + SETTLE_S
        total += sum(k.t_s for k in skill.into[-1:]) + step.hold_s + out[-1].t_s + AFTER_S
        speed, after_skill = 0.0, True
    return total + 5.0


def play_plan(
    plan: str | list[PlanStep],
    *,
    seed: int = 0,
    spec: str = "shepherd",
    record: str | Path | None = None,
    camera: str = DEFAULT_CAMERA,
    log_hz: float = 200.0,
    label: str = "plan",
    platforms: Sequence[Platform] = (),
    use: Mapping[str, GaitParams] | None = None,
) -> tuple[RunResult, dict]:
    """Run `plan` (a plan string or parsed steps) from standing; returns the run and its
    summary (its `gait`: `label`) with `plan` (each step's start, end and ok) and `skills`
    (each skill's outcome); `platforms` stand in the dog's path (jump steps need them);
    `use`: gaits to play in place of the presets of their names."""
    steps = parse_plan(plan) if isinstance(plan, str) else plan
    if not (isinstance(seed, int | np.integer) and seed >= 0):
        raise PlanError(f"seed must be a whole number >= 0, got {seed!r}")
    edges = edges_for([s.name for s in steps if s.kind == "jump"], platforms, start_x=0.0)
    with World(spec, renderer="egl" if record else None) as world:
        for platform in platforms:
            world.add_box(*platform.box())
        rng = np.random.default_rng(seed)
        lying = steps[0].name == GET_UP  # the plan starts as after a fall
        if lying:
            place_on_side(world, rng)
            standing = standing_heights(spec)
        else:
            world.place_dog(world.skeleton.stand_angles() + rng.normal(0.0, 0.01, world.n_joints))
            standing = world.trunk_heights()  # a gait first would lower them at once
        scene = Scene(world, steps, edges, use)
        body = (world.stand_height, world.skeleton.spec.foot_radius)
        recorder = VideoRecorder(record, camera=camera) if record else None
        try:
            result = run_episode(
                world,
                scene,
                planned_duration(steps),
                control_hz=1.0 / CONTROL_DT,
                recorder=recorder,
                log_hz=log_hz,
                extra_log=scene.log_fields,
                hooks=[_Resting(scene)],
                done=lambda: scene.k >= len(steps),
            )
        finally:
            if recorder is not None:
                recorder.close()
    # the step in force per sample, as the gaits of an automatic run (replays and plots)
    result.log["gait_names"] = np.array([s.name for s in steps])
    result.log["gait_index"] = result.log.pop("plan_step")
    result.log["standing_heights_m"] = standing  # what the skills' outcomes are fractions of
    duration = float(result.log["t"][-1]) if len(result.log["t"]) else 0.0
    summary = summarize(result, gait=label, speed_cmd=0.0, duration_s=duration, seed=seed)
    summary["plan"], summary["skills"] = _judge(scene.played, result, ground_of(platforms), body)
    return result, summary


def _judge(
    played: list[Played], result: RunResult, ground: GroundMap, body: tuple[float, float]
) -> tuple[list[dict], list[dict]]:
    """Each step with whether it held: a gait step, no fall while it played; a skill, its
    outcome (skills/outcomes.py) from the log; a jump, its outcome (skills/jump.py) over the
    ground and for the body (standing height, foot radius [m])."""
    h = outcomes.Heights.of(result.log)
    fall = result.fall_time_s if result.fall_time_s is not None else math.inf
    steps, skills = [], []
    for p in played:
        end = p.end_s if math.isfinite(p.end_s) else float(h.t[-1])
        entry = {"name": p.step.name, "start_s": round(p.start_s, 3), "end_s": round(end, 3)}
        ok = not p.start_s <= fall <= end + CONTROL_DT  # no fall while it played
        if p.step.kind == "jump":
            outcome = judge_jump(
                result.log, p.step.name, p.extra["edge"], p.extra["times"], end, ground, *body
            )
            ok = ok and outcome.pop("ok")
            skills.append({**entry, "ok": bool(ok), **outcome})
        elif p.step.kind == "skill":
            if p.step.name == "sit":
                outcome = outcomes.sat(h, p.hold, p.stood)
            elif p.step.name == "lie-down":
                outcome = outcomes.lay(h, p.hold, p.stood)
            elif p.step.name == GET_UP:
                outcome = outcomes.stood_up(h, p.extra["up_from_s"], p.stood[1], GET_UP_WITHIN_S)
            else:
                outcome = outcomes.stood_up(h, p.extra["up_from_s"], p.stood[1])
            ok = ok and outcome.pop("ok")
            skills.append({**entry, "ok": bool(ok), **outcome})
        steps.append({**entry, "kind": p.step.kind, "ok": bool(ok)})
    return steps, skills
