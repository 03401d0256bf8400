"""Cost of one control step against the bare physics step, per gait, as ratios in one run.

    python benchmarks/bench_step.py [--steps 2000] [--gaits walk,trot]

For each gait the dog runs `steps` physics steps at the middle of the gait's speed band;
the script times the parts of every step (state read, controller, torque apply, physics)
and prints each part's cost as a multiple of the bare `stepSimulation` call.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from controller.loop import Controller
from controller.sim import World
from gaits.params import GaitParams, preset_names


def measure(gait: str, steps: int) -> dict[str, float]:
    params = GaitParams.load(gait)
    with World() as world:
        ctrl = Controller(world.skeleton, params, dt=world.dt)
        ctrl.command.speed_mps = sum(params.speed_band_mps) / 2
        parts = {"read_state": 0.0, "controller": 0.0, "apply": 0.0, "physics": 0.0}
        clock = time.perf_counter
        for _ in range(steps):
            t0 = clock()
            state = world.read_state()
            t1 = clock()
            tau = ctrl.step(state)
            t2 = clock()
            world.apply(tau)
            t3 = clock()
            world.step()
            t4 = clock()
            parts["read_state"] += t1 - t0
            parts["controller"] += t2 - t1
            parts["apply"] += t3 - t2
            parts["physics"] += t4 - t3
            if world.status(state) != "ok":
                world.place_dog(world.skeleton.stand_angles())
        # the bare physics step on the same scene, for reference
        t0 = clock()
        for _ in range(steps):
            world.step()
        bare = clock() - t0
    return {k: v / steps * 1e6 for k, v in parts.items()} | {"bare_physics": bare / steps * 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--gaits", default=",".join(preset_names()))
    args = ap.parse_args()
    print(f"{'gait':18} {'read':>7} {'ctrl':>7} {'apply':>7} {'physics':>8} {'bare':>7}  "
          f"{'ctrl/bare':>9} {'step/bare':>9}   (microseconds per step)")  # fmt: skip
    for gait in args.gaits.split(","):
        m = measure(gait, args.steps)
        whole = m["read_state"] + m["controller"] + m["apply"] + m["physics"]
        print(f"{gait:18} {m['read_state']:7.1f} {m['controller']:7.1f} {m['apply']:7.1f} "
              f"{m['physics']:8.1f} {m['bare_physics']:7.1f}  "
              f"{m['controller'] / m['bare_physics']:9.2f} "
              f"{whole / m['bare_physics']:9.2f}")  # fmt: skip
    print(f"numpy {np.__version__}")


if __name__ == "__main__":
    main()
