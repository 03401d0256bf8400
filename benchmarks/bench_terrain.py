"""Crossing terrain: the trot at 2 m/s and the walk at 1 m/s over steps, hills and rough
ground, 20 s from standing, seeds 0-1; a table in docs/results.md (between its
`bench_terrain` markers).

    python benchmarks/bench_terrain.py [--terrains steps:0.06:1,slope:10] [--seeds 2]
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from bench_gaits import RESULTS, write_section

import quadsim

TERRAINS = ("steps:0.03:1", "steps:0.06:1", "slope:5", "slope:10", "rough:0.02", "rough:0.03")
GAITS = (("trot", 2.0), ("walk", 1.0))
DURATION_S = 20.0


def run(job: tuple[str, float, str, int]) -> dict:
    gait, speed, terrain, seed = job
    _, summary = quadsim.simulate(gait, speed, DURATION_S, seed=seed, terrain=terrain, log_hz=20.0)
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--terrains", default=",".join(TERRAINS))
    ap.add_argument("--seeds", type=int, default=2, help="seeds 0..N-1")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    terrains = args.terrains.split(",")
    jobs = [(g, v, t, s) for t in terrains for g, v in GAITS for s in range(args.seeds)]
    with ProcessPoolExecutor(args.workers) as pool:
        summaries = list(pool.map(run, jobs))
    lines = [
        "| terrain | gait | fell (at s) | mean speed [m/s] | distance [m] |",
        "|---|---|---|---|---|",
    ]
    for t in terrains:
        for g, _ in GAITS:
            runs = [
                s for (gg, _, tt, _), s in zip(jobs, summaries, strict=True) if (gg, tt) == (g, t)
            ]
            falls = [f"{s['fall_time_s']:.1f}" for s in runs if s["fell"]]
            fell = f"{len(falls)} of {len(runs)}" + (f" ({', '.join(falls)})" if falls else "")
            speed = ", ".join(f"{s['mean_speed_mps']:.2f}" for s in runs)
            dist = ", ".join(f"{s['distance_m']:.0f}" for s in runs)
            lines.append(f"| {t} | {g} | {fell} | {speed} | {dist} |")
    print("\n".join(lines))
    how = (
        f"`python benchmarks/bench_terrain.py` ({DURATION_S:g} s from standing, seeds "
        f"0-{args.seeds - 1}, per seed; the terrain starts 1.5 m ahead; steps:H:D are blocks "
        "H m high and D m long with D m between them, slope:DEG a 1 m hill, rough:A +-A m)"
    )
    write_section(RESULTS, "bench_terrain", "Crossing terrain", how, lines)


if __name__ == "__main__":
    main()
