"""Evaluation throughput of the optimizer's executors and the runner's own overhead.

Stand-in objective: ~20 ms of CPU-bound numpy per evaluation (optimize.testfns.busy_sphere).
Prints evaluations per second with 1 and 2 local workers and a Dask LocalCluster of 2,
their ratios to 1 worker, and the CMA-ES runner's overhead per generation (ask/tell,
checkpoint, history) as a fraction of the generation's evaluation time.

    python benchmarks/bench_optimize.py [--quick]
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quadsim.optimize import testfns  # noqa: E402
from quadsim.optimize.cmaes import RunConfig, run  # noqa: E402
from quadsim.optimize.executors import evaluate_batch, make_executor  # noqa: E402


def throughput(spec: str, workers: int, n_evals: int, work_s: float) -> float:
    """Evaluations per second (pool start-up excluded: one warm-up batch first)."""
    ex = make_executor(spec, workers)
    fn = functools.partial(testfns.busy_sphere, work_s=work_s)
    rng = np.random.default_rng(0)
    try:
        evaluate_batch(ex, fn, list(rng.random((2 * workers, 8))), [0] * 2 * workers, 60, 1e9)
        xs = list(rng.random((n_evals, 8)))
        t0 = time.perf_counter()
        evaluate_batch(ex, fn, xs, list(range(n_evals)), 60, 1e9)
        return n_evals / (time.perf_counter() - t0)
    finally:
        ex.shutdown()


class _Timer:
    """Callback that records the wall time between generations."""

    def __init__(self) -> None:
        self.stamps: list[float] = []

    def __call__(self, gen: int, X: np.ndarray, f: np.ndarray) -> None:
        self.stamps.append(time.perf_counter())


def runner_overhead(n_gens: int, work_s: float) -> tuple[float, float]:
    """(overhead per generation [s], overhead / evaluation time) of the serial runner."""
    cfg = RunConfig(dim=12, gait="bench", seed=1, max_evals=10**9)
    pop = 4 + int(3 * np.log(12))
    cfg.max_evals = pop * n_gens
    fn = functools.partial(testfns.busy_sphere, work_s=work_s)
    timer = _Timer()
    with tempfile.TemporaryDirectory() as d:
        run(fn, cfg, Path(d) / "run", quiet=True, callback=timer)
    per_gen = np.diff(timer.stamps)
    eval_time = pop * work_s
    overhead = float(np.median(per_gen)) - eval_time
    return overhead, overhead / eval_time


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="few-second smoke run")
    args = p.parse_args(argv)
    n = 20 if args.quick else 200
    work_s = 0.02
    print(f"stand-in objective: {work_s * 1e3:.0f} ms CPU per evaluation, {n} evaluations")
    rates = {
        "local x1": throughput("local", 1, n, work_s),
        "local x2": throughput("local", 2, n, work_s),
    }
    try:
        rates["dask-local x2"] = throughput("dask-local", 2, n, work_s)
    except ImportError as e:
        print(f"dask-local skipped: {e}")
    base = rates["local x1"]
    for k, v in rates.items():
        print(f"{k:<14} {v:7.1f} evals/s   ratio to local x1: {v / base:5.2f}")
    gens = 5 if args.quick else 30
    ov, frac = runner_overhead(gens, work_s)
    print(
        f"runner overhead per generation (dim 12, popsize 11, checkpoint every generation): "
        f"{ov * 1e3:.1f} ms = {frac:.3f} x the generation's evaluation time"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
