"""What `quadsim optimize` optimizes: the objective function, the RunConfig fields of the
problem, and how the best point is written (a gait file with its provenance, and a video)."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from quadsim.gaits.errors import GaitError
from quadsim.optimize.errors import OptimizeError
from quadsim.optimize.rundir import command_line, git_commit

if TYPE_CHECKING:
    from quadsim.gaits.params import GaitParams
    from quadsim.optimize.cmaes import RunConfig

VIDEO_S = 10.0  # [s] length of the video of the best gait
MEAN = "the search distribution's mean at the end, the estimate that noisy evaluations favour"
# The parameters free by default (`--free style`): when the stride happens and how the body
# and feet move, with the paper's stance pushes and spine share (0 in the presets), not the
# balance gains or the stride waves (docs/optimizer.md: generation 1 of the trot at sigma
# 0.06 kept 81-96% of 26 runs up, seeds 0-4).
STYLE_FREE = (
    "period_s",
    "swing_start_phase",
    "swing_duration_phase",
    "height_front_m",
    "height_back_m",
    "body_pitch_rad",
    "head_pitch_rad",
    "tail_pitch_rad",
    "swing_height_m",
    "step_offset_x_m",
    "step_offset_y_m",
    "fp_sagittal_s",
    "fp_coronal_s",
    "stance_cannon_rad",
    "swing_cannon_rad",
    "toe_off_rad",
    "foot_strike_rad",
    "stance_push_fwd",
    "stance_push_up",
    "spine_torque_share",
)
FREE_SETS = {"style": STYLE_FREE}  # and "all": every parameter the gait's symmetry leaves
# Touchdown phases are measured from LH's, so its lift-off phase is the style set's phase
# reference: moving it shifts the whole stride against the start from standing, and the
# walk fell in 5 of 8 runs (1.2 m/s) with it moved from 0 by 1e-4 of a stride.
PHASE_REFERENCE = "swing_start_phase.LH"
# `--objective` names: the simulation's (quadsim.optimize.objective.OBJECTIVES), "sim" as
# run directories before 2026-12-04 saved the paper's, and the test function
SIM_OBJECTIVES = ("paper", "footfalls", "both", "sim")


def provenances(args: argparse.Namespace, result: Any) -> tuple[dict, dict | None]:
    """The provenance of the best point's file and of the mean's (None without a mean):
    the command, seed, budget, date and commit; the best's score (the mean is unscored:
    judge it by its runs)."""
    common = {
        "source": "optimizer",
        "command": command_line(args),
        "seed": args.seed,
        "evaluations": int(result.evals),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        **git_commit(),
    }
    best = {**common, "objective": float(result.best_f), "point": "the best evaluation"}
    mean = {**common, "point": MEAN} if getattr(result, "mean_x", None) is not None else None
    return best, mean


def free_names(template: GaitParams, free: str | None) -> GaitParams:
    """The gait `template` with the parameters `free` names free: comma-separated names and
    sets, "style" (the default; all its legs' but LH's lift-off phase) or "all"."""
    items = [n.strip() for n in (free or "style").split(",") if n.strip()]
    if "all" in items:
        return template
    names: list[str] = []
    for item in items:
        if item in FREE_SETS:
            in_set = template.with_free(FREE_SETS[item]).free_names()
            names += [n for n in in_set if n != PHASE_REFERENCE]
        else:
            names.append(item)
    try:
        return template.with_free(list(dict.fromkeys(names)))
    except GaitError as exc:  # it knows the parameters, not the sets
        sets = ", ".join([*FREE_SETS, "all"])
        raise GaitError(f"{exc}; or the sets {sets}, alone or with names") from None


def check_targets_objective(objective: str, reference: Any) -> None:
    """--targets sets the footfall terms: refuse an objective that would not score them, or
    one that also needs a clip's markers (f_d) when no --reference gives them."""
    if objective in ("paper", "sim", "sphere"):
        raise OptimizeError(
            f"--targets sets the footfall terms, which --objective {objective} does not score; "
            "use --objective footfalls (or both, with a --reference for f_d)"
        )
    if objective == "both" and not reference:
        raise OptimizeError(
            "--objective both needs a --reference clip for f_d; with --targets alone use "
            "--objective footfalls"
        )


def optimization_problem(args: argparse.Namespace) -> tuple[Callable, dict[str, Any], Callable]:
    """(fn, RunConfig fields, finish(best_x, result) -> the file written) of the objective the
    `quadsim optimize` arguments choose: a gait scored in simulation, or a test function."""
    targets = getattr(args, "targets", None)
    if targets is not None:
        check_targets_objective(args.objective, args.reference)
    if args.objective == "sphere":
        from quadsim.optimize import testfns

        names = tuple(f"x{i}" for i in range(args.dim))

        def finish(best_x: np.ndarray, result: Any) -> Path:
            path = args.out / "best.txt"
            path.write_text(" ".join(repr(float(v)) for v in best_x) + "\n")
            return path

        return (
            testfns.shifted_sphere,
            {"gait": args.gait, "dim": args.dim, "free_names": names},
            finish,
        )

    if getattr(args, "skill", None):
        return skill_problem(args)
    from quadsim.gaits.params import GaitParams
    from quadsim.gaits.schedule import AUTO_BANDS

    # a run saved without --free is from before `style` was the default: it freed them all
    free = "all" if args.free is None and getattr(args, "resume", False) else args.free
    template = free_names(GaitParams.load(args.gait), free)
    names = tuple(template.free_names())
    x0 = np.clip(np.asarray(template.to_unit(), dtype=float), 0.0, 1.0)
    from quadsim.optimize import sim_eval

    low, high = template.speed_band_mps
    if args.speed is not None and not low <= args.speed <= high:
        hint = " (--targets sets the speed unless --speed is given)" if targets else ""
        raise OptimizeError(
            f"--speed {args.speed:g} m/s is outside the {template.gait} band {low:g}-{high:g} m/s"
            + hint
        )
    config = {
        "gait": args.gait,
        "template": template,
        "duration_s": args.episode_s,
        "speed_mps": args.speed,
        "reference": str(args.reference) if args.reference else None,
        "targets": targets,
        "objective": "paper" if args.objective == "sim" else args.objective,
        "conditions": sim_eval.parse_conditions(getattr(args, "conditions", None)),
    }
    automatic = {"ramp", "stop"} & set(config["conditions"])
    if automatic and template.gait not in AUTO_BANDS:
        raise OptimizeError(
            f"--conditions {', '.join(sorted(automatic))} runs the automatic gaits "
            f"({', '.join(AUTO_BANDS)}); the {template.gait} is none of them"
        )
    if args.reference:  # a missing, malformed or strideless file is the user's, before any run
        reference = str(args.reference)
        sim_eval.reference_cycle(reference, template.to_toml(), sim_eval.dog_leg_length())
        sim_eval.reference_footfalls(reference, template.to_toml(), sim_eval.dog_leg_length())
    fn = functools.partial(sim_eval.evaluate, config=config)

    def finish(best_x: np.ndarray, result: Any) -> Path:
        best = GaitParams.from_unit(best_x, template)
        stem = template.gait  # best_trot.toml, also when --gait is a file (best_trot.toml)
        path = args.out / f"best_{stem}.toml"
        best_prov, mean_prov = provenances(args, result)
        best.save(path, provenance=best_prov)
        if mean_prov:
            mean = GaitParams.from_unit(result.mean_x, template)
            mean.save(args.out / f"mean_{stem}.toml", provenance=mean_prov)
        if args.video and not result.interrupted:
            from quadsim.controller.simulate import simulate

            video = path.with_suffix(".mp4")
            speed = args.speed if args.speed is not None else sum(best.speed_band_mps) / 2
            simulate(best, speed, VIDEO_S, seed=args.seed, record=video)
            print(f"video of the best gait: {video}")
        return path

    return fn, {"gait": args.gait, "dim": len(names), "free_names": names, "x0": tuple(x0)}, finish


def skill_problem(args: argparse.Namespace) -> tuple[Callable, dict[str, Any], Callable]:
    """(fn, RunConfig fields, finish) of `quadsim optimize --skill`: a jump's leap, scored by
    its outcome, its landing and its time (optimize/skill_eval.py)."""
    from quadsim.optimize import skill_eval

    for_gaits = ("reference", "targets", "conditions", "free", "speed")
    given = [f"--{n}" for n in for_gaits if getattr(args, n, None)]
    if given:
        raise OptimizeError(
            f"{', '.join(given)}: for gaits, not --skill (its file's [bounds] say what is tuned)"
        )
    template = skill_eval.tunable_skill(args.skill)
    config = {"template": template, "height_m": args.height}
    fn = functools.partial(skill_eval.evaluate, config=config)
    names = template.free_names()

    def finish(best_x: np.ndarray, result: Any) -> Path:
        path = args.out / f"best_{template.name}.toml"
        best_prov, mean_prov = provenances(args, result)
        template.from_unit(best_x).save(path, best_prov)
        if mean_prov:
            mean = template.from_unit(result.mean_x)
            mean.save(args.out / f"mean_{template.name}.toml", mean_prov)
        return path

    problem = {"gait": template.name, "dim": len(names), "free_names": names}
    return fn, {**problem, "x0": tuple(template.to_unit())}, finish


def run_config(args: argparse.Namespace, problem: dict[str, Any]) -> RunConfig:
    """The RunConfig of the `quadsim optimize` arguments (checked) and the problem's fields."""
    from quadsim.optimize.cmaes import RunConfig
    from quadsim.optimize.sim_eval import SETTLE_S

    if args.evals < 1:
        raise OptimizeError(f"--evals must be >= 1, got {args.evals}")
    if not args.episode_s >= SETTLE_S + 1.0:  # a scored second after the start
        raise OptimizeError(
            f"--episode-s must be at least {SETTLE_S + 1.0:g} s (the first {SETTLE_S:g} s, "
            f"the start from standing, are not scored), got {args.episode_s}"
        )
    config = RunConfig(
        **problem,
        popsize=args.popsize,
        sigma0=args.sigma,
        seed=args.seed,
        max_evals=args.evals,
        seeds_per_candidate=args.seeds_per_candidate,
        pushes=args.pushes,
        ipop_restarts=args.ipop,
        starts=args.starts,
        start_radius=args.start_radius,
        timeout_s=args.timeout,
        meta={
            "reference": str(args.reference) if args.reference else None,
            "targets": getattr(args, "targets", None),
            "objective": args.objective,
            "speed_mps": args.speed,
            "episode_s": args.episode_s,
            "free": args.free,
            "conditions": getattr(args, "conditions", None),
            "skill": getattr(args, "skill", None),
            "height_m": getattr(args, "height", None),
        },
    )
    if args.seeds_per_candidate > 1 and args.evals % args.seeds_per_candidate:
        whole = -(-args.evals // args.seeds_per_candidate) * args.seeds_per_candidate
        print(
            f"note: candidates are scored on {args.seeds_per_candidate} seeds each, so the "
            f"budget of {args.evals} evaluations is rounded up to {whole}",
            file=sys.stderr,
        )
    return config
