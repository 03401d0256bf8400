"""The simulator behind the optimizer: evaluate(x_unit, seed, config) -> objective value.

This is the one place where optimize/ meets the simulation (DESIGN.md): a picklable,
module-level function that each worker process calls with its own pybullet client.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from quadsim.controller.profile import Profile
from quadsim.controller.sim import Push
from quadsim.controller.simulate import simulate
from quadsim.gaits.params import GaitParams
from quadsim.gaits.schedule import AUTO_BANDS
from quadsim.mocap.motion import load_reference
from quadsim.models import LEGS
from quadsim.optimize.cmaes import decode_eval_seed
from quadsim.optimize.conditions import (
    CONDITION_PENALTY,
    CONDITION_S,
    CONDITION_SEED,
    CONDITIONS,
    DURATION_S,
    PUSH_S,
    PUSH_TIMES_S,
    SLOW_SHARE,
    STOP_AFTER_S,
    STOP_AGAIN_S,
    TERRAIN_OF_CONDITION,
    TURN_RATE_DPS,
    push_impulse_ns,
    split_condition,
)
from quadsim.optimize.objective import (
    OBJECTIVES,
    FootfallTargets,
    Objective,
    evaluate_log,
    fall_penalty,
)
from quadsim.optimize.reference import (
    StrideCycle,
    extract_strides,
    stats_from_swing,
    synthetic_reference,
)
from quadsim.optimize.targets import load_targets

SETTLE_S = 2.0  # the start from standing is not part of the style terms


def parse_conditions(text: str | None) -> tuple[str, ...]:
    """The conditions of `--conditions` ("turn,rough,band", "turn:45,push:30" or "all";
    None: none)."""
    if not text:
        return ()
    names = CONDITIONS if text.strip() == "all" else [n.strip() for n in text.split(",")]
    for name in names:
        split_condition(name)  # names the problem if there is one
    return tuple(dict.fromkeys(names))


def condition_survival(params: GaitParams, condition: str, speed: float, seed: int) -> float:
    """How long [s] the gait stays up in one condition episode (CONDITION_S if it does not
    fall): turning at TURN_RATE_DPS or the condition's rate ("turn:45") (left on even seeds,
    right on odd), on rough ground,
    over 6 cm steps up and down (steps) or a 10 degree hill (hill) (on
    terrain, a mean speed below SLOW_SHARE of `speed` shortens the time in proportion),
    from standing to the top of its speed band as fast as it can, then down to the bottom
    (band), pushed at PUSH_TIMES_S (push_impulse_ns, or the condition's "push:30") from three
    directions (push), or ramping up
    through the automatic gaits from 0.5 m/s below its band to 1 m/s above it, the gait in
    place of its preset (ramp); or, in a plan, going STOP_AFTER_S at its speed, stopping,
    sitting for 1 s, standing and going STOP_AGAIN_S again (stop). A fall's time in an
    episode of another length (the plan, the turn and the hill, DURATION_S) is scaled to
    CONDITION_S."""
    kwargs: dict[str, Any] = {}
    played: GaitParams | str = params
    commanded: float | Profile = speed
    condition, value = split_condition(condition)
    if condition == "turn":
        rate = value or TURN_RATE_DPS
        kwargs["turn_rate_dps"] = rate if seed % 2 == 0 else -rate
    elif condition in TERRAIN_OF_CONDITION:
        kwargs["terrain"] = TERRAIN_OF_CONDITION[condition]
    elif condition == "push":
        kwargs["pushes"] = condition_pushes(seed, params.gait, value)
    elif condition == "band":
        low, high = params.speed_band_mps
        half, end = CONDITION_S / 2, CONDITION_S
        commanded = Profile.parse(f"0:{high:g},{half:g}:{high:g},{end:g}:{low:g}")
    elif condition == "ramp":
        low, high = AUTO_BANDS[params.gait]
        low, high = max(low - 0.5, 0.5), min(high + 1.0, max(b for _, b in AUTO_BANDS.values()))
        commanded = Profile.parse(f"0:{low:g},{CONDITION_S:g}:{high:g}")
        kwargs["use"] = {params.gait: params}
        played = "auto"
    elif condition == "stop":
        from quadsim.skills.plan import parse_plan
        from quadsim.skills.scene import planned_duration, play_plan

        gait = f"{params.gait} {speed:g}"
        steps = parse_plan(f"{gait} {STOP_AFTER_S:g}; sit 1; {gait} {STOP_AGAIN_S:g}")
        result, _ = play_plan(steps, seed=seed, log_hz=10.0, use={params.gait: params})
        if result.status == "ok":
            return CONDITION_S
        return CONDITION_S * float(result.fall_time_s or 0.0) / planned_duration(steps)
    duration = DURATION_S.get(condition, CONDITION_S)
    result, summary = simulate(played, commanded, duration, seed=seed, log_hz=10.0, **kwargs)
    if result.status != "ok":
        return CONDITION_S * float(result.fall_time_s or 0.0) / duration
    if condition in TERRAIN_OF_CONDITION:
        return CONDITION_S * min(summary["mean_speed_mps"] / (SLOW_SHARE * speed), 1.0)
    return CONDITION_S


def condition_pushes(seed: int, gait: str, impulse_ns: float | None = None) -> list[Push]:
    """The push condition's pushes on one seed of a gait (of push_impulse_ns, or this impulse)."""
    force = (impulse_ns or push_impulse_ns(gait)) / PUSH_S
    return [
        Push.horizontal(t, force, 45.0 * ((seed + 3 * i) % 8), PUSH_S)
        for i, t in enumerate(PUSH_TIMES_S)
    ]


@lru_cache(maxsize=4)
def dog_leg_length(spec_name: str = "shepherd") -> float:
    """Mean standing height [m] of the shoulder and hip joints of the simulated dog."""
    from quadsim.controller.kinematics import tree_pose
    from quadsim.models import build_skeleton, preset

    sk = build_skeleton(preset(spec_name))
    pose = tree_pose(sk)
    feet = [pose.link_pos[lm.foot_link] for lm in sk.legs.values()]
    foot_z = float(np.mean([f[2] for f in feet])) - sk.legs["LF"].lengths[3] - sk.spec.foot_radius
    roots = [pose.link_pos[lm.links[0]][2] for lm in sk.legs.values()]
    return float(np.mean(roots)) - foot_z


def _gait_swing(gait_file_key: str) -> tuple[GaitParams, dict[str, tuple[float, float]]]:
    """The gait of a TOML text and its legs' swing intervals (lift-off, touchdown phases)."""
    import tomllib

    gait = GaitParams.from_dict(tomllib.loads(gait_file_key))
    graph = gait.graph()
    swing = {
        leg: (s, (s + d) % 1.0)
        for leg, s, d in zip(LEGS, graph.swing_start, graph.swing_duration, strict=True)
    }
    return gait, swing


@lru_cache(maxsize=8)
def reference_cycle(path: str | None, gait_file_key: str, leg_length_m: float) -> StrideCycle:
    """The reference stride, scaled to the simulated dog's leg length. Without a file, a
    synthetic reference from the gait's own graph (`gait_file_key` is the gait's TOML)."""
    if path:
        return extract_strides(load_reference(path)).scaled(leg_length_m)
    gait, swing = _gait_swing(gait_file_key)
    graph = gait.graph()
    speed = sum(gait.speed_band_mps) / 2
    motion = synthetic_reference(graph.period_s, swing, leg_length_m, speed)
    return extract_strides(motion)


@lru_cache(maxsize=8)
def reference_footfalls(
    path: str | None, gait_file_key: str, leg_length_m: float
) -> FootfallTargets:
    """The footfall targets of the reference: a clip's duty factors, touchdown phases and
    stride period (scaled to `leg_length_m` by the Froude rule); without a file, the gait
    graph's own (`gait_file_key` is the gait's TOML)."""
    if path:
        from quadsim.mocap.footfalls import analyze_footfalls
        from quadsim.mocap.motion import leg_length

        motion = load_reference(path)
        stats = analyze_footfalls(motion)
        scale = leg_length_m / leg_length(motion, stance=stats.stance)
        return FootfallTargets(
            stats.stride_period_s * scale**0.5,
            tuple(float(stats.duty_factor[f]) for f in LEGS),
            tuple(float(stats.phase_offset[f]) for f in LEGS),
        )
    gait, swing = _gait_swing(gait_file_key)
    expected = stats_from_swing(swing)
    return FootfallTargets(
        gait["period_s"],
        tuple(float(expected["duty_factor"][f]) for f in LEGS),
        tuple(float(expected["phase_offset"][f]) for f in LEGS),
    )


def evaluate(x_unit: np.ndarray, seed: int, config: dict[str, Any]) -> Objective:
    """Objective of one candidate: simulate its gait, score the log (lower is better); the
    record's total is what the optimizer minimizes, its terms and `fell` go to the history.

    config: "template" (GaitParams with the free parameters), "reference" (path or None),
    optional "targets" (footfall targets' name or file, for the footfall terms instead of the
    reference's),
    optional "speed_mps" (default: the middle of the gait's band), "duration_s" (10),
    "objective" (a name of OBJECTIVES, default "paper"), "conditions" (names of CONDITIONS:
    episodes the gait must also stay up in; a fall there adds a penalty and counts as a fall).
    The seed's push flag adds one random sideways push.
    """
    template: GaitParams = config["template"]
    params = GaitParams.from_unit(np.asarray(x_unit, dtype=float), template)
    sim_seed, with_pushes = decode_eval_seed(int(seed))
    speed = float(config.get("speed_mps") or sum(params.speed_band_mps) / 2)
    duration = float(config.get("duration_s", 10.0))
    pushes = []
    if with_pushes:
        rng = np.random.default_rng(sim_seed + 7919)
        side = rng.choice([-1.0, 1.0])
        pushes.append(
            Push(
                float(rng.uniform(0.4, 0.8) * duration),
                (0.0, side * float(rng.uniform(80, 160)), 0.0),
                0.1,
            )
        )
    result, summary = simulate(params, speed, duration, seed=sim_seed, pushes=pushes, log_hz=60.0)
    key = template.to_toml()
    cycle = reference_cycle(config.get("reference"), key, dog_leg_length())
    objective = evaluate_log(
        result.log,
        reference=cycle,
        v_cmd=(speed, 0.0),
        weights=OBJECTIVES[config.get("objective") or "paper"],
        footfalls=(
            load_targets(config["targets"])
            if config.get("targets")
            else reference_footfalls(config.get("reference"), key, dog_leg_length())
        ),
        contacts=(result.contact_t, result.contacts),
        fell=result.status != "ok",
        fall_time_s=result.fall_time_s,
        duration_s=duration,
        start_s=SETTLE_S,
    )
    conditions = () if objective.fell else config.get("conditions") or ()
    # each on a start pose of its own: the walk tuned on few start poses fell on the next ones
    survived = [
        condition_survival(params, condition, speed, sim_seed + CONDITION_SEED * (i + 1))
        for i, condition in enumerate(conditions)
    ]
    if any(s < CONDITION_S for s in survived):  # graded by the mean time the dog stayed up
        penalty = fall_penalty(float(np.mean(survived)), CONDITION_S, CONDITION_PENALTY)
        return replace(objective, total=objective.total + penalty, fell=True)
    return objective
