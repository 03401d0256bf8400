"""`quadsim optimize`: CMA-ES over a gait's free parameters (unit box), checkpointed in --out.

Example: quadsim optimize --gait trot --reference dog_trot_joint_pos.txt --evals 2000 \
             --workers 2 --out runs/trot1 [--executor local|dask-local|dask://H:P]
         quadsim optimize --gait canter --targets canter --objective footfalls --out runs/c1
         quadsim optimize --resume runs/trot1 [--evals 4000]     (continue, a new budget)
         quadsim optimize --status runs/trot1
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from quadsim.optimize.conditions import conditions_help
from quadsim.optimize.problem import (
    SIM_OBJECTIVES,
    STYLE_FREE,
    VIDEO_S,
    optimization_problem,
    run_config,
)
from quadsim.optimize.rundir import (
    DEFAULTS,
    EPISODE_S,
    run_status,
    settle_arguments,
    status_text,
)
from quadsim.optimize.targets import target_names


def add_parser(subparsers: Any) -> None:
    """Register the ``optimize`` subcommand."""
    p = subparsers.add_parser(
        "optimize",
        help="optimize a gait's parameters with CMA-ES",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--gait", help="gait preset name or gait TOML file")
    p.add_argument(
        "--skill",
        help="tune a jump instead of a gait: jump-onto, jump-off, or a jump's skill file "
        "(the values its [bounds] table names; objective: the outcome, the landing, the time)",
    )
    p.add_argument(
        "--height",
        type=float,
        metavar="H",
        help="--skill's platform height [m] (default: the jump's, as quadsim skill)",
    )
    p.add_argument("--reference", type=Path, help="reference motion (mocap or CSV) for f_d")
    p.add_argument(
        "--targets",
        metavar="NAME|FILE",
        help="footfall targets from the literature for the footfall terms, instead of the "
        "reference's: " + ", ".join(target_names()) + ", or a targets .toml file "
        "(default objective footfalls, default speed the targets')",
    )
    p.add_argument("--evals", type=int, help="evaluation budget (default 2000)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: CPUs)")
    p.add_argument("--out", type=Path, help="run directory")
    p.add_argument(
        "--resume",
        nargs="?",
        const=True,
        metavar="RUN_DIR",
        help="continue the run in RUN_DIR (or --out) with its saved arguments",
    )
    p.add_argument("--status", type=Path, metavar="RUN_DIR", help="print where a run stands")
    p.add_argument(
        "--executor",
        default="local",
        help="local | dask-local | dask://HOST:PORT | serial (default local)",
    )
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument(
        "--free",
        default=None,
        help="parameters to optimize: style (default: "
        + ", ".join(STYLE_FREE)
        + "), all, or comma-separated names and sets (style,turn_lean)",
    )
    p.add_argument("--popsize", type=int, default=None, help="population (default 4+3 ln n)")
    p.add_argument(
        "--sigma", type=float, help=f"initial step in the unit box (default {DEFAULTS['sigma']:g})"
    )
    p.add_argument(
        "--seeds-per-candidate",
        type=int,
        help=f"simulations per candidate, score = mean (default {DEFAULTS['seeds_per_candidate']})",
    )
    p.add_argument(
        "--objective",
        choices=(*SIM_OBJECTIVES, "sphere"),
        metavar="paper|footfalls|both",
        help="paper: 100 f_d + 5 f_v + 0.5 f_h + 5 f_r; footfalls: the reference's stride "
        "period, duty factors and touchdown phases, with f_v and f_r; both (default paper)",
    )
    p.add_argument(
        "--starts",
        type=int,
        help="multi-start: N searches from the start point plus U(-R, R) offsets, "
        "sharing the budget (default 1)",
    )
    p.add_argument(
        "--start-radius",
        type=float,
        metavar="R",
        help=f"offset range of --starts in the unit box (default {DEFAULTS['start_radius']:g})",
    )
    p.add_argument(
        "--speed",
        type=float,
        default=None,
        metavar="V",
        help="commanded speed of each evaluation [m/s] (default: the middle of the "
        "gait's speed band)",
    )
    p.add_argument(
        "--episode-s",
        type=float,
        metavar="S",
        help=f"simulated length of each evaluation [s] (default {EPISODE_S:g})",
    )
    p.add_argument(
        "--pushes", action="store_true", default=None, help="random pushes during evaluation"
    )
    p.add_argument(
        "--conditions",
        metavar="LIST",
        help=conditions_help(),
    )
    p.add_argument("--ipop", type=int, help="IPOP restarts (default 0)")
    p.add_argument("--timeout", type=float, help="per evaluation [s] (300)")
    p.add_argument(
        "--video",
        action="store_true",
        help=f"record the best gait ({VIDEO_S:g} s at the middle of its speed band) "
        "as best_<gait>.mp4 in --out",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--dim", type=int, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run or resume an optimization; prints the best score and where the results are."""
    from quadsim.optimize.cmaes import resume
    from quadsim.optimize.cmaes import run as cma_run
    from quadsim.optimize.executors import make_executor

    if args.status is not None:
        print(status_text(run_status(args.status)))
        return 0
    settle_arguments(args)
    fn, problem, finish = optimization_problem(args)
    config = run_config(args, problem)
    executor = make_executor(args.executor, args.workers)
    try:
        with sigterm_interrupts():
            if args.resume:
                result = resume(
                    args.out,
                    fn,
                    expect=config,
                    max_evals=args.evals,
                    executor=executor,
                    quiet=args.quiet,
                )
            else:
                result = cma_run(fn, config, args.out, executor=executor, quiet=args.quiet)
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
    if result.interrupted:
        # the best so far is written too: an interrupted night still leaves a usable gait
        best = (
            f"; best so far (f = {result.best_f:.6g}): {finish(result.best_x, result)}"
            if result.generations and np.all(np.isfinite(result.best_x))
            else ""
        )
        print(
            f"interrupted: kept {result.generations} complete generation(s) "
            f"({result.evals} evaluations) in {args.out}; continue with --resume{best}",
            file=sys.stderr,
        )
        return 130
    path = finish(result.best_x, result)
    print(
        f"best f = {result.best_f:.6g} after {result.evals} evaluations "
        f"({result.generations} generations, stop: {result.stop_reason}); best: {path}"
    )
    return 0


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (kill, timeout, a batch scheduler) stops the run as Ctrl-C does: the last
    complete generation is kept and the best so far written. Worker processes forked
    meanwhile keep the default: they just end."""
    parent = os.getpid()

    def interrupt(signum: int, frame: object) -> None:
        if os.getpid() != parent:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
