"""Crossing terrain: the trot at 2 m/s and the walk at 1 m/s over steps, hills and rough
ground, and every other gait at its nominal speed over rough ground, 20 s from standing; a
table in docs/results.md (between its `bench_terrain` markers).

    python benchmarks/bench_terrain.py [--terrains steps:0.06:1,slope:10] [--seeds 8]
        [--gaits walk] [--use walk=FILE] [--out FILE]

`--gaits` measures only these gaits' rows; `--use GAIT=FILE` plays a gait file (an
optimizer's best) in the preset's place; `--out FILE` writes the table elsewhere.
"""

from __future__ import annotations

import argparse

from bench_gaits import (
    add_gait_options,
    chosen_gaits,
    outcome_cells,
    runs_by_row,
    span,
    write_section,
)

import quadsim
from quadsim.gaits.params import NOMINAL_SPEED_MPS

TERRAINS = ("steps:0.03:1", "steps:0.06:1", "slope:5", "slope:10", "rough:0.02", "rough:0.03")
GAITS = (("trot", 2.0), ("walk", 1.0))
ROUGH_FOR_ALL = "rough:0.02"  # the other gaits cross this one
DURATION_S = 20.0


def run(job: tuple[str, float, str, int]) -> dict:
    played, speed, terrain, seed = job  # a preset's name or a gait file
    _, summary = quadsim.simulate(played, speed, DURATION_S, seed=seed, terrain=terrain, log_hz=5.0)
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--terrains", default=",".join(TERRAINS))
    ap.add_argument("--seeds", type=int, default=8, help="seeds 0..N-1")
    add_gait_options(ap)
    args = ap.parse_args()
    source, wanted = chosen_gaits(ap, args)
    rows = [(t, g, v) for t in args.terrains.split(",") for g, v in GAITS if g in wanted]
    others = [g for g in NOMINAL_SPEED_MPS if g not in dict(GAITS) and g in wanted]
    rows += [(ROUGH_FOR_ALL, g, NOMINAL_SPEED_MPS[g]) for g in others]
    jobs = [[(source[g], v, t, s) for s in range(args.seeds)] for t, g, v in rows]
    lines = [
        "| terrain | gait | speed cmd [m/s] | crossed | fell at [s] | mean speed [m/s] |",
        "|---|---|---|---|---|---|",
    ]
    for (t, g, v), runs in zip(rows, runs_by_row(run, jobs, args.workers), strict=True):
        crossed, fell = outcome_cells(runs)
        speed = span([s["mean_speed_mps"] for s in runs if not s["fell"]], 2)
        lines.append(f"| {t} | {g} | {v:g} | {crossed} | {fell} | {speed} |")
    print("\n".join(lines))
    how = (
        f"`python benchmarks/bench_terrain.py` ({DURATION_S:g} s from standing, seeds "
        f"0-{args.seeds - 1}; crossed: no fall in the {DURATION_S:g} s; mean speed over the "
        "runs that crossed; the terrain starts 1.5 m ahead; steps:H:D are blocks H m high and "
        "D m long with D m between them, slope:DEG a 1 m hill, rough:A +-A m)"
    )
    write_section(args.out, "bench_terrain", "Crossing terrain", how, lines)


if __name__ == "__main__":
    main()
