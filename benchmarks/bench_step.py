"""Cost of the control step against the bare physics step, per gait, as ratios in one run.

    python benchmarks/bench_step.py [--seconds 2] [--gaits walk,trot]

The dog runs each gait at the middle of its speed band. Per millisecond of simulated time
the loop does one control step (a batched state read and the controller) and, at every
physics step (4 kHz by default), the joint servo (a joint read, the PD law, the torque
write) and pybullet's stepSimulation. The script times each part and prints it as a
multiple of the stepSimulation calls of the same steps (the physics).
"""

from __future__ import annotations

import argparse
import time

from quadsim.controller.loop import Controller
from quadsim.controller.sim import World
from quadsim.gaits.params import GaitParams, preset_names

CONTROL_DT = 1e-3


def measure(gait: str, seconds: float) -> dict[str, float]:
    """Microseconds per millisecond of simulated time for each part of the loop."""
    params = GaitParams.load(gait)
    with World() as world:
        ctrl = Controller(world.skeleton, params, dt=CONTROL_DT, servo_dt=world.dt)
        ctrl.command.speed_mps = sum(params.speed_band_mps) / 2
        substeps = round(CONTROL_DT / world.dt)
        parts = dict.fromkeys(("read_state", "controller", "servo", "physics"), 0.0)
        clock = time.perf_counter
        steps = int(seconds / CONTROL_DT)
        for _ in range(steps):
            t0 = clock()
            state = world.read_state()
            t1 = clock()
            command = ctrl.step(state)
            t2 = clock()
            parts["read_state"] += t1 - t0
            parts["controller"] += t2 - t1
            for k in range(substeps):
                t3 = clock()
                if k:
                    world.drive(command)
                else:  # the first physics step's joints are the state's
                    world.drive(command, state.q, state.qd)
                t4 = clock()
                world.step()
                parts["servo"] += t4 - t3
                parts["physics"] += clock() - t4
            if world.status(state) != "ok":
                world.place_dog(world.skeleton.stand_angles())
    per_ms = 1e6 / steps
    return {k: v * per_ms for k, v in parts.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per gait")
    ap.add_argument("--gaits", default=",".join(preset_names()))
    args = ap.parse_args()
    print("microseconds per simulated millisecond (1 control step + its physics steps)")
    print(
        f"{'gait':18} {'read':>7} {'control':>8} {'servo':>7} {'physics':>8}"
        f"  {'control/physics':>15} {'total/physics':>13}"
    )
    for gait in args.gaits.split(","):
        m = measure(gait, args.seconds)
        total = m["read_state"] + m["controller"] + m["servo"] + m["physics"]
        print(
            f"{gait:18} {m['read_state']:7.0f} {m['controller']:8.0f} {m['servo']:7.0f} "
            f"{m['physics']:8.0f}  {m['controller'] / m['physics']:15.2f} "
            f"{total / m['physics']:13.2f}"
        )


if __name__ == "__main__":
    main()
