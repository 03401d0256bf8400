"""One skill from standing, as `quadsim skill NAME` runs it: a plan of that one skill (after
the skill it starts from, for stand-up), played by the scene (skills/scene.py): the dog
stands, plays the skill into its posture, holds it, stands again and stands on 1.5 s."""

from __future__ import annotations

from pathlib import Path

from quadsim.controller.episode import RunResult
from quadsim.controller.recording import DEFAULT_CAMERA
from quadsim.skills.errors import SkillError
from quadsim.skills.getup import GET_UP, WALK_AFTER, WALK_JUDGED_S, walk_speed
from quadsim.skills.jump import JUMPS, MAX_PLATFORM_M, Platform
from quadsim.skills.plan import PlanStep
from quadsim.skills.posture import Skill
from quadsim.skills.scene import play_plan

MAX_HOLD_S = 60.0
JUMP_HEIGHT_M = {"jump-onto": 0.3, "jump-off": 0.5}  # the defaults
JUMP_EDGE_M = 4.0  # [m] the edge ahead of the dog's start: room to reach the trot's speed


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
    if name == GET_UP:
        if hold_s is not None:
            raise SkillError("get-up holds no posture: it gets up and walks on; drop --hold")
        return perform_get_up(seed=seed, spec=spec, record=record, camera=camera, log_hz=log_hz)
    hold = skill.hold_s if hold_s is None else float(hold_s)
    if not 0.0 < hold <= MAX_HOLD_S:
        raise SkillError(
            f"a skill's hold lasts more than 0 and at most {MAX_HOLD_S:g} s, got {hold:g}"
        )
    steps = [PlanStep("skill", name, hold_s=hold)]
    if skill.start_from:  # stand-up: from the posture it starts in, held its file's time
        first = Skill.load(skill.start_from)
        steps = [PlanStep("skill", first.name, hold_s=first.hold_s), PlanStep("skill", name)]
    return play_plan(
        steps, seed=seed, spec=spec, record=record, camera=camera, log_hz=log_hz, label=name
    )


def perform_get_up(
    *,
    seed: int = 0,
    spec: str = "shepherd",
    record: str | Path | None = None,
    camera: str = DEFAULT_CAMERA,
    log_hz: float = 200.0,
) -> tuple[RunResult, dict]:
    """The dog lies on its side (as after a fall), gets up and walks on at 1 m/s; the
    summary adds `walk`: the walk step's times and its mean speed [m/s] over its last
    WALK_JUDGED_S (after the speed ramp), along the heading it walked off in."""
    gait, speed, duration = WALK_AFTER
    steps = [PlanStep("skill", GET_UP), PlanStep("gait", gait, speed, duration)]
    result, summary = play_plan(
        steps, seed=seed, spec=spec, record=record, camera=camera, log_hz=log_hz, label=GET_UP
    )
    walked = [p for p in summary["plan"] if p["kind"] == "gait"]
    if walked:
        start, end = walked[0]["start_s"], walked[0]["end_s"]
        judged = walk_speed(result.log, max(start, end - WALK_JUDGED_S), end)
        summary["walk"] = {
            "start_s": start,
            "end_s": end,
            "speed_cmd_mps": speed,
            "mean_speed_mps": round(judged, 4),
        }
    return result, summary


def perform_jump(
    name: str,
    *,
    height_m: float | None = None,
    seed: int = 0,
    spec: str = "shepherd",
    record: str | Path | None = None,
    camera: str = DEFAULT_CAMERA,
    log_hz: float = 200.0,
    source: str | Path | None = None,
) -> tuple[RunResult, dict]:
    """Run jump `name` (jump-onto or jump-off) over a platform `height_m` [m] high (the
    issue's default if None): jump-onto trots from the ground up to the platform's edge
    JUMP_EDGE_M ahead and onto it, jump-off starts on the platform and trots off its far end
    JUMP_EDGE_M ahead; both trot on (skills/jump.py). `source`: the jump's skill file, if not
    its preset (a tuned copy). Returns the run and its summary, whose `skills` holds the
    jump's outcome."""
    if name not in JUMPS:
        raise SkillError(f"unknown jump {name!r}; jumps: {', '.join(JUMPS)}")
    height = JUMP_HEIGHT_M[name] if height_m is None else float(height_m)
    if not 0.0 < height <= MAX_PLATFORM_M:
        raise SkillError(f"a platform's height lies in (0, {MAX_PLATFORM_M:g}] m, got {height:g}")
    if name == "jump-onto":
        platform = Platform(JUMP_EDGE_M, height)
    else:  # the dog starts 4 m from its far end
        platform = Platform(JUMP_EDGE_M - 7.0, height, length_m=7.0)
    return play_plan(
        [PlanStep("jump", name, source=None if source is None else str(source))],
        seed=seed,
        spec=spec,
        record=record,
        camera=camera,
        log_hz=log_hz,
        label=name,
        platforms=[platform],
    )
