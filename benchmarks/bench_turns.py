"""Turning: every gait at its nominal speed turning at 30 and 45 deg/s, 20 s from standing
(left on even seeds, right on odd), and its sideslip, the angle from where the pelvis faces
to where it travels; a table in docs/results.md (between its `bench_turns` markers).

    python benchmarks/bench_turns.py [--rates 30,45] [--seeds 4] [--gaits walk,trot]
        [--use trot=FILE] [--out FILE]

`--gaits` measures only these gaits' rows; `--use GAIT=FILE` plays a gait file in the
preset's place; `--out FILE` writes the table elsewhere.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_gaits import (
    add_gait_options,
    chosen_gaits,
    outcome_cells,
    runs_by_row,
    span,
    write_section,
)

import quadsim
from quadsim.controller.episode import sideslip_deg
from quadsim.gaits.params import NOMINAL_SPEED_MPS

RATES_DPS = (30.0, 45.0)
DURATION_S = 20.0
SETTLED_S = 3.0  # the sideslip is measured from here on: the speed has ramped up by then


def run(job: tuple[str, float, float, int]) -> tuple[dict, float]:
    """The summary of one turning run and its median sideslip [deg], outward positive."""
    played, speed, rate, seed = job
    turn = rate if seed % 2 == 0 else -rate
    result, summary = quadsim.simulate(
        played, speed, DURATION_S, seed=seed, turn_rate_dps=turn, log_hz=50.0
    )
    log = result.log
    end = result.fall_time_s - 0.5 if result.fall_time_s else DURATION_S
    settled = (log["t"] >= SETTLED_S) & (log["t"] <= end)
    slip = sideslip_deg(log)[settled]
    outward = -np.sign(turn) * float(np.nanmedian(slip)) if np.any(np.isfinite(slip)) else np.nan
    return summary, outward


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES_DPS), help="deg/s")
    ap.add_argument("--seeds", type=int, default=4, help="seeds 0..N-1")
    add_gait_options(ap)
    args = ap.parse_args()
    source, wanted = chosen_gaits(ap, args)
    rates = [float(r) for r in args.rates.split(",")]
    rows = [(g, r) for g in wanted for r in rates]
    jobs = [[(source[g], NOMINAL_SPEED_MPS[g], r, s) for s in range(args.seeds)] for g, r in rows]
    lines = [
        "| gait | speed [m/s] | turn [deg/s] | stayed up | fell at [s] | sideslip outward [deg] |",
        "|---|---|---|---|---|---|",
    ]
    for (g, r), mine in zip(rows, runs_by_row(run, jobs, args.workers), strict=True):
        up, fell = outcome_cells([s for s, _ in mine])
        slip = span([slip for _, slip in mine if np.isfinite(slip)], 0)
        lines.append(f"| {g} | {NOMINAL_SPEED_MPS[g]:g} | {r:g} | {up} | {fell} | {slip} |")
    print("\n".join(lines))
    how = (
        f"`python benchmarks/bench_turns.py` ({DURATION_S:g} s from standing at the gait's "
        f"nominal speed, turning left on even seeds and right on odd, seeds 0-{args.seeds - 1}; "
        "stayed up: no fall in the 20 s; sideslip: the angle from where the pelvis faces to "
        f"where it travels, outward of the turn positive, the median from {SETTLED_S:g} s to "
        "the end or 0.5 s before a fall, the range over the seeds)"
    )
    write_section(args.out, "bench_turns", "Turning", how, lines)


if __name__ == "__main__":
    main()
