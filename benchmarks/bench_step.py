"""Where the time of a run goes, per gait: the realtime factor and each part's share.

    python benchmarks/bench_step.py [--seconds 3] [--gaits walk,trot] [--repeats 3] [--write]

Each gait runs at its nominal speed through the same `run_episode` as `quadsim run` (seed 0,
no video). Per simulated millisecond the loop reads the state once, runs one control step,
and at every physics step (1 kHz) drives the joint servo and calls pybullet's
stepSimulation; the rest (logging at 200 Hz, markers, fall checks) is "other". The best of
`--repeats` runs is kept (the other core may be busy). "whole run x" is the goal's measure:
simulated over wall seconds of a whole `quadsim run --duration 10 --json` process, startup
included, the median of `--repeats`. `--write` puts the table into docs/results.md (between
its `bench_step` markers).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from bench_gaits import RESULTS, write_section

from quadsim.controller.episode import run_episode
from quadsim.controller.loop import Controller
from quadsim.controller.sim import World
from quadsim.gaits.params import NOMINAL_SPEED_MPS, GaitParams

PARTS = ("read", "control", "servo", "physics")
clock = time.perf_counter


class TimedWorld(World):
    """A World that adds the time of its state reads, servo and physics steps to `spent`."""

    def __init__(self) -> None:
        super().__init__()
        self.spent = dict.fromkeys(PARTS, 0.0)

    def read_state(self):  # noqa: ANN201 - DogState
        start = clock()
        state = super().read_state()
        self.spent["read"] += clock() - start
        return state

    def drive(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - World.drive's
        start = clock()
        applied = super().drive(*args, **kwargs)
        self.spent["servo"] += clock() - start
        return applied

    def step(self) -> None:
        start = clock()
        super().step()
        self.spent["physics"] += clock() - start


def measure(gait: str, seconds: float) -> dict[str, float]:
    """Microseconds per simulated millisecond of each part, of "other" and of the whole run,
    and the realtime factor."""
    params = GaitParams.load(gait)
    with TimedWorld() as world:
        ctrl = Controller(world.skeleton, params)
        ctrl.command.speed_mps = NOMINAL_SPEED_MPS[gait]
        control = ctrl.step

        def timed_step(state):  # noqa: ANN001, ANN202 - DogState -> ServoCommand
            start = clock()
            command = control(state)
            world.spent["control"] += clock() - start
            return command

        ctrl.step = timed_step
        result = run_episode(world, ctrl, seconds)
        spent = dict(world.spent)
    simulated_ms = 1000.0 * seconds
    per_ms = {k: 1e6 * v / simulated_ms for k, v in spent.items()}
    per_ms["total"] = 1e6 * result.wall_time_s / simulated_ms
    per_ms["other"] = per_ms["total"] - sum(per_ms[k] for k in PARTS)
    per_ms["realtime"] = seconds / result.wall_time_s
    return per_ms


WHOLE_RUN_S = 10.0


def whole_run(gait: str, repeats: int) -> float:
    """Simulated over wall seconds of whole `quadsim run ... --json` processes (median)."""
    command = [sys.executable, "-m", "quadsim.scripts.cli", "run", "--gait", gait]
    command += ["--speed", str(NOMINAL_SPEED_MPS[gait]), "--duration", str(WHOLE_RUN_S), "--json"]
    factors = []
    for _ in range(repeats):
        start = clock()
        subprocess.run(command, check=True, capture_output=True)
        factors.append(WHOLE_RUN_S / (clock() - start))
    return statistics.median(factors)


def table(rows: dict[str, dict[str, float]]) -> list[str]:
    lines = [
        "| gait | whole run x | realtime x | µs per simulated ms | read | control | servo "
        "| physics | other |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for gait, m in rows.items():
        shares = " | ".join(f"{100 * m[k] / m['total']:.0f}%" for k in (*PARTS, "other"))
        lines.append(
            f"| {gait} | {m['whole']:.2f} | {m['realtime']:.2f} | {m['total']:.0f} | {shares} |"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="simulated seconds per run")
    ap.add_argument("--gaits", default=",".join(NOMINAL_SPEED_MPS))
    ap.add_argument("--repeats", type=int, default=3, help="runs per gait; the fastest counts")
    ap.add_argument("--write", action="store_true", help="rewrite docs/results.md's table")
    args = ap.parse_args()
    rows = {}
    for gait in args.gaits.split(","):
        runs = [measure(gait, args.seconds) for _ in range(args.repeats)]
        rows[gait] = max(runs, key=lambda m: m["realtime"])
        rows[gait]["whole"] = whole_run(gait, args.repeats)
    lines = table(rows)
    print("\n".join(lines))
    if args.write:
        how = (
            f"`python benchmarks/bench_step.py --write` (whole run x: a {WHOLE_RUN_S:g} s "
            f"`quadsim run --json` process, startup included, median of {args.repeats}; the "
            f"rest: {args.seconds:g} s of each gait at its nominal speed, best of "
            f"{args.repeats}, shares of the run's wall time; physics: pybullet's "
            "stepSimulation at 1 kHz)."
        )
        write_section(RESULTS, "bench_step", "Where the time goes", how, lines)


if __name__ == "__main__":
    main()
