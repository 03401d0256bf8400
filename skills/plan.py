"""Plans: a scene as a string of steps, `"walk 1.0 3; sit 4; lie-down 4; stand-up; trot 2.0 5"`.
A step is a gait with a speed [m/s] and a duration [s], or a skill with its hold [s] (a
posture skill's hold may be left out: its file's; stand-up takes none)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from quadsim.gaits.errors import GaitError
from quadsim.gaits.params import GaitParams, preset_names
from quadsim.gaits.schedule import AUTO_BANDS
from quadsim.skills.errors import PlanError
from quadsim.skills.jump import JUMPS
from quadsim.skills.posture import Skill, skill_names

MAX_STEP_S = 600.0
NO_HOLD = ("stand-up", "get-up")  # skills that end standing: nothing to hold
FIRST_ONLY = ("get-up",)  # skills that start lying on the side, as the run does


@dataclass(frozen=True)
class PlanStep:
    """One step: kind "gait" (name, speed_mps, duration_s), "skill" (name, hold_s) or "jump"
    (name: jump-onto or jump-off, at the next edge ahead)."""

    kind: str
    name: str
    speed_mps: float = 0.0
    duration_s: float = 0.0
    hold_s: float = 0.0
    source: str | None = None  # a jump's skill file, if not its preset (a tuned copy)


def _number(text: str, what: str, step: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise PlanError(f"plan step {step!r}: {what} {text!r} is not a number") from None
    if not (math.isfinite(value) and 0.0 < value <= MAX_STEP_S):
        raise PlanError(f"plan step {step!r}: {what} must lie in (0, {MAX_STEP_S:g}], got {text}")
    return value


def parse_plan(text: str) -> list[PlanStep]:
    """The steps of `text`; a PlanError names the step and what is wrong with it."""
    steps = []
    for raw in text.split(";"):
        words = raw.split()
        if not words:
            continue
        step, name, args = " ".join(words), words[0], words[1:]
        if name in AUTO_BANDS:
            if len(args) != 2:
                raise PlanError(
                    f"plan step {step!r}: a gait step is GAIT SPEED DURATION (m/s, s), "
                    f"e.g. '{name} 1.0 3'"
                )
            speed = _number(args[0], "the speed", step)
            try:
                GaitParams.load(name).check_speed(speed)
            except GaitError as exc:
                raise PlanError(f"plan step {step!r}: {exc}") from None
            steps.append(PlanStep("gait", name, speed, _number(args[1], "the duration", step)))
        elif name in JUMPS:  # to the next edge ahead: the platforms place it
            if args:
                raise PlanError(f"plan step {step!r}: {name} takes no arguments")
            steps.append(PlanStep("jump", name))
        elif name in skill_names():
            if name in FIRST_ONLY and steps:
                raise PlanError(
                    f"plan step {step!r}: {name} starts from lying on the side, so it can "
                    "only be the plan's first step"
                )
            if name in NO_HOLD:
                if args:
                    raise PlanError(f"plan step {step!r}: {name} takes no hold time")
                steps.append(PlanStep("skill", name))
                continue
            if len(args) > 1:
                raise PlanError(f"plan step {step!r}: a skill step is SKILL [HOLD_S]")
            hold = _number(args[0], "the hold", step) if args else Skill.load(name).hold_s
            steps.append(PlanStep("skill", name, hold_s=hold))
        elif name in preset_names():
            raise PlanError(
                f"plan step {step!r}: {name} is not in plans yet; plans ramp through the "
                f"automatic gaits: {', '.join(AUTO_BANDS)}"
            )
        else:
            raise PlanError(
                f"plan step {step!r}: unknown gait or skill {name!r}; gaits: "
                f"{', '.join(AUTO_BANDS)}; skills: {', '.join(skill_names())}; jumps: "
                f"{', '.join(JUMPS)}"
            )
    if not steps:
        raise PlanError(f"a plan needs at least one step, got {text!r}")
    return steps
