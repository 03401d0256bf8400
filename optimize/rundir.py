"""An optimization run directory seen from outside: the arguments it was started with
(config.json), how arguments given again compare with them, and where the run stands."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

from quadsim.optimize.cmaes import CHECKPOINT, CONFIG_JSON, load_checkpoint
from quadsim.optimize.errors import RunDirError

# `quadsim optimize` argument -> where config.json keeps it: a RunConfig field, or ("meta", key)
SAVED_AS: dict[str, str | tuple[str, str]] = {
    "gait": "gait",
    "seed": "seed",
    "sigma": "sigma0",
    "popsize": "popsize",
    "seeds_per_candidate": "seeds_per_candidate",
    "pushes": "pushes",
    "ipop": "ipop_restarts",
    "timeout": "timeout_s",
    "dim": "dim",
    "evals": "max_evals",
    "reference": ("meta", "reference"),
    "targets": ("meta", "targets"),
    "speed": ("meta", "speed_mps"),
    "episode_s": ("meta", "episode_s"),
    "objective": ("meta", "objective"),
    "free": ("meta", "free"),
    "conditions": ("meta", "conditions"),
    "skill": ("meta", "skill"),
    "height": ("meta", "height_m"),
    "starts": "starts",
    "start_radius": "start_radius",
}
# `quadsim optimize` defaults of the arguments a run saves (None in the parser: so it is
# known what a user gave)
EPISODE_S = 10.0  # [s] default length of one evaluation
DEFAULTS = {
    "episode_s": EPISODE_S,
    "evals": 2000,
    "seed": 0,
    # over the `style` parameters of the trot, gen 1 (26 runs of 10 s, seeds 0-4): sigma
    # 0.06 kept 81-96% up, 0.08 62-85% (docs/optimizer.md)
    "sigma": 0.06,
    "seeds_per_candidate": 2,  # one seed's best gait fell on one of five seeds (notebook)
    "pushes": False,
    "ipop": 0,
    "starts": 1,
    "start_radius": 0.1,
    "timeout": 300.0,
    "objective": "paper",
    "dim": 6,
}
# the test function is deterministic: one evaluation a candidate
TEST_FUNCTION_DEFAULTS = {"seeds_per_candidate": 1}
# arguments that may change on resume: the budget
MAY_CHANGE = {"evals"}


def _config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / CONFIG_JSON
    if path.is_file():
        return json.loads(path.read_text())
    if (run_dir / CHECKPOINT).is_file():  # runs from before config.json: the checkpoint's copy
        return dict(load_checkpoint(run_dir)["config"])
    raise RunDirError(
        f"{str(run_dir)!r} is not an optimization run directory (no {CONFIG_JSON} or "
        f"{CHECKPOINT}); give the --out folder of a `quadsim optimize` run"
    )


def saved_arguments(run_dir: str | Path) -> dict[str, Any]:
    """The `quadsim optimize` arguments the run in `run_dir` was started with."""
    config = _config(Path(run_dir))
    meta = config.get("meta", {})
    saved = {}
    for arg, where in SAVED_AS.items():
        if isinstance(where, tuple):
            saved[arg] = meta.get(where[1])
        else:
            saved[arg] = config.get(where)
    return saved


def _is_path(arg: str, value: Any) -> bool:
    """Whether an argument's value names a file (a reference, or a gait or targets TOML
    file)."""
    return value is not None and (
        arg == "reference" or (arg in ("gait", "targets", "skill") and str(value).endswith(".toml"))
    )


def _same(arg: str, given: Any, saved: Any) -> bool:
    if _is_path(arg, given) and _is_path(arg, saved):
        return Path(given).resolve() == Path(saved).resolve()
    if isinstance(given, float) or isinstance(saved, float):
        return given is not None and saved is not None and math.isclose(given, saved)
    return str(given) == str(saved) if arg in ("gait", "targets", "skill") else given == saved


def differences(given: dict[str, Any], saved: dict[str, Any]) -> list[str]:
    """Each argument given (not None) that differs from the run's, as `--name value differs
    from the run's saved`."""
    out = []
    for arg, value in given.items():
        if value is None or arg in MAY_CHANGE or arg not in saved:
            continue
        if not _same(arg, value, saved[arg]):
            flag = "--" + arg.replace("_", "-")
            out.append(f"{flag} {value} differs from the run's {saved[arg]!r}")
    return out


def run_status(run_dir: str | Path) -> dict[str, Any]:
    """Where the run in `run_dir` stands: generations, evaluations of the budget, best f,
    evaluations that fell or failed, time spent, and whether it finished."""
    rd = Path(run_dir)
    config = _config(rd)
    status = {
        "run_dir": str(rd),
        "gait": config.get("gait"),
        "budget": config.get("max_evals"),
        "generations": 0,
        "evaluations": 0,
        "best_f": None,
        "n_fell": 0,
        "n_failed": 0,
        "time_s": None,
        "finished": False,
        "stop_reason": "",
    }
    if not (rd / CHECKPOINT).is_file():
        return status
    state = load_checkpoint(rd)
    history = state.get("history", [])
    budget = state["config"].get("max_evals", status["budget"])
    status.update(
        budget=budget,
        generations=int(state["generation"]),
        evaluations=int(state["evals"]),
        best_f=None if not math.isfinite(state["best_f"]) else float(state["best_f"]),
        n_fell=int(sum(row.get("n_fell", 0) for row in history)),
        n_failed=int(sum(row.get("n_failed", 0) for row in history)),
        time_s=state.get("wall_s"),
        stop_reason=state.get("stop_reason", ""),
    )
    status["finished"] = bool(status["stop_reason"]) or status["evaluations"] >= budget
    return status


def status_text(status: dict[str, Any]) -> str:
    """`run_status` as a few lines for a person."""
    best = "-" if status["best_f"] is None else f"{status['best_f']:.6g}"
    spent = "unknown" if status["time_s"] is None else f"{status['time_s'] / 60:.1f} min"
    if status["finished"]:
        where = f"finished ({status['stop_reason'] or 'budget'})"
    else:
        where = f"not finished: continue with `quadsim optimize --resume {status['run_dir']}`"
    return "\n".join(
        [
            f"run {status['run_dir']} (gait {status['gait']}): {where}",
            f"generations {status['generations']}, evaluations {status['evaluations']} of "
            f"{status['budget']}, best f {best}",
            f"evaluations that fell {status['n_fell']}, failed {status['n_failed']}; "
            f"time spent {spent}",
        ]
    )


def settle_arguments(args: argparse.Namespace) -> None:
    """Fill the arguments the user left out: from the run's saved ones on --resume (which
    must agree with any given again), else from DEFAULTS."""
    if args.resume is not None:
        run_dir = args.out if args.resume is True else Path(args.resume)
        if run_dir is None:
            raise RunDirError("--resume needs the run directory: --resume RUN_DIR")
        if args.out is not None and Path(args.out) != run_dir:
            raise RunDirError(f"--out {args.out} differs from --resume {run_dir}")
        saved = saved_arguments(run_dir)
        given = {name: getattr(args, name) for name in saved}
        problems = differences(given, saved)
        if problems:
            raise RunDirError(f"{run_dir} holds another run: " + "; ".join(problems))
        for name, value in saved.items():  # the run's own, but a budget given anew
            if name not in MAY_CHANGE or getattr(args, name) is None:
                setattr(args, name, value)
        args.out, args.resume = run_dir, True
    elif (args.gait is None) == (getattr(args, "skill", None) is None) or args.out is None:
        raise RunDirError(
            "quadsim optimize needs --gait or --skill, and --out (or --resume RUN_DIR, or "
            "--status RUN_DIR)"
        )
    else:  # files as absolute paths: Dask workers, and a resume, may run elsewhere
        for name in ("reference", "gait", "targets", "skill"):
            if _is_path(name, getattr(args, name)):
                setattr(args, name, str(Path(getattr(args, name)).resolve()))
        if args.targets is not None:
            _targets_defaults(args)
        skill = getattr(args, "skill", None)
        if args.free is None and args.objective != "sphere" and not skill:  # saved, and shown
            args.free = "style"
    if args.objective == "sphere":
        for name, value in TEST_FUNCTION_DEFAULTS.items():
            if getattr(args, name) is None:
                setattr(args, name, value)
    for name, value in DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, value)


def _targets_defaults(args: argparse.Namespace) -> None:
    """A new run with --targets: an unknown name stops it here; the footfall objective and
    the targets' speed unless given (both then saved, so a resume scores alike)."""
    from quadsim.optimize.targets import target_file

    targets = target_file(args.targets)
    if args.objective is None:
        args.objective = "footfalls"
    if args.speed is None:
        args.speed = targets.speed_mps


def command_line(args: argparse.Namespace) -> str:
    """The `quadsim optimize` command that starts this run again."""
    skill = getattr(args, "skill", None)
    words = ["quadsim", "optimize", *(["--skill", skill] if skill else ["--gait", args.gait])]
    words = [_shown(w) if w in (skill, args.gait) else w for w in words]
    for name in ("reference", "targets", "free", "speed", "popsize", "conditions", "height"):
        value = getattr(args, name, None)
        if value is not None:
            words += ["--" + name, _shown(value) if _is_path(name, value) else str(value)]
    for name, default in DEFAULTS.items():
        value = getattr(args, name)
        if name in ("dim", "seed") or value == default:
            continue
        flag = "--" + name.replace("_", "-")
        words += [flag] if value is True else [flag, str(value)]
    words += ["--seed", str(args.seed), "--out", str(args.out)]
    return shlex.join(words)


def _shown(value: object) -> str:
    """A file argument as the command shows it: relative to the working directory (the
    run saves it absolute, for workers elsewhere), so the command works in another clone."""
    text = str(value)
    return os.path.relpath(text) if os.path.isabs(text) else text


def git_commit() -> dict[str, str]:
    """{"commit": the checkout's git commit}, where there is one."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"commit": done.stdout.strip()}
