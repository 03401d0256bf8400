"""`quadsim optimize --conditions`: what each condition episode is, with no simulation in
it, so that the command line can describe the conditions without loading pybullet.
optimize/sim_eval.py runs them."""

from __future__ import annotations

import math

from quadsim.optimize.errors import OptimizeError

# beside the scored episode: the acceptance tests' turn, rough ground and speed ramps (within
# the gait's band, and through the automatic gaits with the candidate in place of its
# preset), the stop before a skill in a plan, the robustness issue's terrain floors and its
# pushes from every side
CONDITIONS = ("turn", "rough", "band", "ramp", "stop", "steps", "hill", "push")
CONDITION_S = 10.0  # [s] each (the experiment's trot fell in the tests' turn at 8.7 s)
TURN_RATE_DPS = 30.0
STOP_AFTER_S = 3.0  # [s] of the gait before the stop condition's stop
STOP_AGAIN_S = 2.0  # [s] of the gait again after it (the plans test's walk after a sit)
ROUGH_M = 0.02  # [m] the rough ground's amplitude
STEP_M = 0.06  # [m] blocks 1 m long, 1 m apart
HILL_DEG = 10.0
TERRAIN_OF_CONDITION = {
    "rough": f"rough:{ROUGH_M:g}",
    "steps": f"steps:{STEP_M:g}:1",
    "hill": f"slope:{HILL_DEG:g}",
}
# episodes longer than CONDITION_S (a fall's time in them is scaled to CONDITION_S): the hill is
# 1 m high (5.7 m up, 4 m over the top, 5.7 m down), and a walk needs this long to come down
# it, where the dog falls most; the turn is as long as the tests' turn, since a long-striding
# trot fell in it at 11-17 s (docs/experiments/optimize-trot-stride-2026-12-07)
DURATION_S = {"hill": 20.0, "turn": 20.0}
# a terrain crossed below this share of the commanded speed counts as lost in proportion (the
# robustness issue's floor: within 20% of the command; a walk that stood on the hill got by)
SLOW_SHARE = 0.8
# a fall in a condition costs more than any gait that stays up scores, less than a fall in the
# scored episode (1e4 to 2e4), graded by how long the dog stayed up
CONDITION_PENALTY = 1e3
# the push condition: horizontal pushes on the chest, of the gait's impulse [N s] (between the
# robustness issue's floor and goal for the walk and trot, 20 and 30; its goal for the rest,
# floor 15), at these times, from directions 135 degrees apart that start at 45 degrees times
# the seed, so over the seeds every one of the 8 directions comes
PUSH_NS = {"walk": 25.0, "trot": 25.0}
PUSH_NS_OTHERS = 20.0
PUSH_S = 0.1
PUSH_TIMES_S = (3.0, 5.5, 8.0)
CONDITION_SEED = 104729  # condition i runs on the evaluation's seed + (i + 1) * this
# conditions that take a value after a colon ("turn:45", "push:30"): its unit and largest value
CONDITION_VALUES = {"turn": ("deg/s", 180.0), "push": ("N s", 100.0)}


def push_impulse_ns(gait: str) -> float:
    """The impulse [N s] of each of the push condition's pushes on a gait (see PUSH_NS)."""
    return PUSH_NS.get(gait, PUSH_NS_OTHERS)


def split_condition(condition: str) -> tuple[str, float | None]:
    """A condition's name and its value ("turn:45" -> ("turn", 45.0); "hill" -> ("hill",
    None)), checked (OptimizeError): the name one of CONDITIONS, a value only where
    CONDITION_VALUES has one."""
    name, sep, text = (part.strip() for part in condition.partition(":"))
    if name not in CONDITIONS:
        raise OptimizeError(
            f"unknown condition {name!r}; choose from {', '.join(CONDITIONS)} "
            "(comma-separated), or all"
        )
    if not sep:
        return name, None
    if name not in CONDITION_VALUES:
        valued = ", ".join(f"{n}:VALUE" for n in CONDITION_VALUES)
        raise OptimizeError(f"condition {name!r} takes no value; only {valued} do")
    unit, most = CONDITION_VALUES[name]
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value <= most:
        raise OptimizeError(f"condition {name}:{text}: the value must be in (0, {most:g}] {unit}")
    return name, value


def conditions_help() -> str:
    """The `--conditions` help, from the values the episodes use."""
    pushes = ", ".join(f"{v:g} N s on the {g}" for g, v in PUSH_NS.items())
    longer = ", ".join(f"{name} {seconds:g} s" for name, seconds in DURATION_S.items())
    return (
        "episodes each candidate must also stay up in, beside the scored one, "
        f"{CONDITION_S:g} s each ({longer}): turn "
        f"({TURN_RATE_DPS:g} deg/s), rough (+-{100 * ROUGH_M:g} cm "
        "ground), band (a ramp through the gait's speed band), ramp (through the automatic "
        "gaits, the candidate in place of its preset), stop (a plan: the gait, a stop, sit 1), "
        f"steps ({100 * STEP_M:g} cm up and down), hill ({HILL_DEG:g} deg), push "
        f"({len(PUSH_TIMES_S)} pushes from sides 135 deg apart, {pushes}, {PUSH_NS_OTHERS:g} "
        "on the others); turn:RATE and push:IMPULSE set the rate [deg/s] or impulse [N s]; "
        "comma-separated, or all (default none)"
    )
