"""One skill from standing, as `quadsim skill NAME` runs it: the dog stands, plays the skill
(into its posture, held, and back to standing), and the run's summary says whether each
skill's outcome held."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quadsim.controller.episode import RunResult, run_episode, summarize
from quadsim.controller.recording import DEFAULT_CAMERA, VideoRecorder
from quadsim.controller.sim import World
from quadsim.skills import outcomes
from quadsim.skills.errors import SkillError
from quadsim.skills.posture import PostureController, Skill, Timeline

SETTLE_S = 0.5  # [s] standing before the skill starts
AFTER_S = 1.5  # [s] standing after it, to see that it stands
MAX_HOLD_S = 60.0


def perform_skill(
    name: str,
    *,
    seed: int = 0,
    hold_s: float | None = None,
    spec: str = "shepherd",
    record: str | Path | None = None,
    camera: str = DEFAULT_CAMERA,
    log_hz: float = 200.0,
) -> tuple[RunResult, dict]:
    """Run skill `name` (see skill_names()) from standing, holding its posture `hold_s` [s]
    (its file's hold if None); returns the run and its summary, whose `skills` lists each
    skill played with its start, end and whether its outcome held (`outcomes`)."""
    skill = Skill.load(name)
    hold = skill.hold_s if hold_s is None else float(hold_s)
    if not 0.0 < hold <= MAX_HOLD_S:
        raise SkillError(
            f"a skill's hold lasts more than 0 and at most {MAX_HOLD_S:g} s, got {hold:g}"
        )
    if not (isinstance(seed, int | np.integer) and seed >= 0):
        raise SkillError(f"seed must be a whole number >= 0, got {seed!r}")
    with World(spec, renderer="egl" if record else None) as world:
        rng = np.random.default_rng(seed)
        stand = world.skeleton.stand_angles()
        world.place_dog(stand + rng.normal(0.0, 0.01, world.n_joints))  # seeds differ
        world.resting_allowed = True
        timeline = Timeline(world.skeleton)
        start = timeline.hold(SETTLE_S)
        plan = _schedule(skill, hold, timeline, start)
        timeline.hold(AFTER_S)
        recorder = VideoRecorder(record, camera=camera) if record else None
        try:
            controller = PostureController(world.skeleton, timeline)
            result = run_episode(
                world, controller, timeline.end_s, recorder=recorder, log_hz=log_hz
            )
        finally:
            if recorder is not None:
                recorder.close()
    summary = summarize(result, gait=name, speed_cmd=0.0, duration_s=timeline.end_s, seed=seed)
    summary["skills"] = _judge(plan, result)
    return result, summary


def _schedule(skill: Skill, hold: float, timeline: Timeline, start: float) -> list[dict]:
    """Put `skill` on the timeline from `start`; the skills it plays, with their phases."""
    if skill.start_from:  # first into the posture it starts from
        first = Skill.load(skill.start_from)
        lying = timeline.add(first.into, start)
        up = timeline.hold(first.hold_s)
        end = timeline.add(skill.out, up)
        return [
            {"name": first.name, "start_s": start, "end_s": up, "hold": (lying, up), "stood": None},
            {"name": skill.name, "start_s": up, "end_s": end},
        ]
    into_end = timeline.add(skill.into, start)
    out_start = timeline.hold(hold)
    out = Skill.load(skill.out_from).out if skill.out_from else skill.out
    end = timeline.add(out, out_start)
    hold_span = (into_end, out_start)
    return [{"name": skill.name, "start_s": start, "end_s": end, "hold": hold_span, "stood": end}]


def _judge(plan: list[dict], result: RunResult) -> list[dict]:
    """Each played skill with its outcome from the log (skills/outcomes.py)."""
    h = outcomes.Heights.of(result.log)
    last = float(h.t[-1])
    judged = []
    for step in plan:
        name, hold = step["name"], step.get("hold")
        if name == "sit":
            outcome = outcomes.sat(h, hold, step["stood"] and (step["stood"], last))
        elif name == "lie-down":
            outcome = outcomes.lay(h, hold, step["stood"] and (step["stood"], last))
        else:
            outcome = outcomes.stood_up(h, step["start_s"], last)
        ok = outcome.pop("ok") and result.status == "ok"
        entry = {
            "name": name,
            "start_s": round(step["start_s"], 3),
            "end_s": round(step["end_s"], 3),
        }
        judged.append({**entry, "ok": bool(ok), **outcome})
    return judged
