"""The skills behind `quadsim optimize --skill`: evaluate(x_unit, seed, config) -> SkillScore.

Where optimize/ meets the skills, as sim_eval.py is where it meets the gaits: a picklable,
module-level function that each worker calls. Today the jumps are tunable: their files'
[bounds] tables free the leap's parameters.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadsim.optimize.cmaes import decode_eval_seed
from quadsim.optimize.errors import OptimizeError
from quadsim.optimize.objective import fall_penalty
from quadsim.skills.jump import JUMPS
from quadsim.skills.skillfile import SkillFile

# the weights of the terms (lower is better): the outcome failed, the pelvis sinking below
# LANDING_FLOOR of its standing height, the feet's height error on the far side [m], and the
# seconds from the leap's start to the trot again
WEIGHTS = {"f_outcome": 100.0, "f_landing": 100.0, "f_feet": 10.0, "f_time": 1.0}
LANDING_FLOOR = 0.6  # the outcome asks for 0.45; a landing above 0.6 costs nothing
FEET_CAP_M = 0.1  # a foot that never stood on the far side counts this much
AFTER_LAUNCH_S = 4.0  # [s] a leap, a landing and the trot on: a fall's time is graded in it
NO_TROT = 1e3  # the dog stayed up but never trotted again


@dataclass(frozen=True)
class SkillScore:
    """One run of a skill, scored: `total` is what the optimizer minimizes."""

    total: float
    f_outcome: float = 0.0
    f_landing: float = 0.0
    f_feet: float = 0.0
    f_time: float = 0.0
    fell: bool = False

    def __float__(self) -> float:
        return float(self.total)

    def terms(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in WEIGHTS}


def tunable_skill(name_or_path: str) -> SkillFile:
    """The skill file `optimize --skill` tunes (a jump with a [bounds] table), or an
    OptimizeError naming why not."""
    skill = SkillFile.load(name_or_path)
    if skill.name not in JUMPS:
        raise OptimizeError(
            f"--skill {name_or_path}: optimize --skill tunes the jumps ({', '.join(JUMPS)}); "
            f"{skill.name} is a keyframed posture"
        )
    if len(skill.bounds) < 2:
        raise OptimizeError(f"--skill {name_or_path}: its [bounds] table frees fewer than 2 values")
    return skill


def score_jump(summary: dict[str, Any]) -> SkillScore:
    """The score of a jump's run summary (its `skills` entry holds the outcome's figures)."""
    jump = summary["skills"][0]
    launch = jump.get("launch_s") or summary["duration_s"]
    if summary["fell"]:
        survived = max(float(summary["fall_time_s"] or 0.0) - launch, 0.0)
        return SkillScore(fall_penalty(survived, AFTER_LAUNCH_S), f_outcome=1.0, fell=True)
    if jump.get("trot_resumed_s") is None:
        return SkillScore(NO_TROT, f_outcome=1.0)
    feet = jump["feet_height_error_m"]
    errors = [FEET_CAP_M if e is None else min(abs(e), FEET_CAP_M) for e in feet]
    terms = {
        "f_outcome": 0.0 if jump["ok"] else 1.0,
        "f_landing": max(LANDING_FLOOR - float(jump["pelvis_min"]), 0.0),
        "f_feet": float(sum(errors)),
        "f_time": float(jump["trot_resumed_s"]) - launch,
    }
    total = sum(WEIGHTS[k] * v for k, v in terms.items())
    return SkillScore(total if math.isfinite(total) else NO_TROT, **terms)


def evaluate(x_unit: np.ndarray, seed: int, config: dict[str, Any]) -> SkillScore:
    """Score of one candidate: the jump of `config["template"]` (a SkillFile) with its free
    parameters at `x_unit`, over a platform `config["height_m"]` high (the skill's default
    if None), from seed `seed`."""
    from quadsim.skills.perform import perform_jump

    template: SkillFile = config["template"]
    candidate = template.from_unit(np.asarray(x_unit, dtype=float))
    fd, path = tempfile.mkstemp(suffix=".toml", prefix=f"{template.name}-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(candidate.to_toml())
        _, summary = perform_jump(
            template.name,
            height_m=config.get("height_m"),
            seed=decode_eval_seed(int(seed))[0],
            log_hz=50.0,
            source=path,
        )
    finally:
        os.unlink(path)
    return score_jump(summary)
