"""How hard a push each gait survives, from 8 directions: a table in docs/results.md (between
its `bench_pushes` markers) and a polar plot per gait (docs/pushes.png).

    python benchmarks/bench_pushes.py [--seeds 1] [--steps 4] [--max-force 1600] [--workers 2]
    python benchmarks/bench_pushes.py --survival walk=20,trot=30 [--seeds 3]
        [--use walk=docs/experiments/optimize-walk-push-2026-12-06/best_walk.toml]

Each gait runs at its nominal speed; at PUSH_AT_S a horizontal push of 0.1 s hits the chest
from a direction every 45 degrees (0: from behind, pushing forward; 90: pushing left). The
dog survives when it has not fallen RECOVER_S later. Per direction and seed the largest
force survived is found by bisection between 0 and --max-force in --steps steps; the table
gives the impulse [N*s] of the weakest seed.

Survival is not monotonic in the force (a harder push can land in a better phase of the
stride), so bisections are noisy; `--survival GAIT=N*s,...` instead counts the directions and
seeds that survive one impulse per gait, which compares two versions of the controller
better. It prints its table and writes nothing. `--use GAIT=FILE` measures a gait file (an
optimizer's best) in the preset's place; `--out FILE` writes the table elsewhere.
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench_gaits import RESULTS, gait_sources, write_section

import quadsim
from quadsim.gaits.params import NOMINAL_SPEED_MPS, GaitParams
from quadsim.plots import plot_pushes_survived

DIRECTIONS_DEG = tuple(range(0, 360, 45))
PUSH_S = 0.1  # [s] the push's length
PUSH_AT_S = 6.0  # [s] every gait is at its speed by then (1 m/s^2 from standing)
RECOVER_S = 3.0  # [s] standing this long after the push is surviving it
FIGURE = Path(__file__).resolve().parents[1] / "docs" / "pushes.png"


def survives(gait: str, direction_deg: float, force_n: float, seed: int, source: str) -> bool:
    """Whether the dog is still up RECOVER_S after the push; source: the gait's preset name or
    file."""
    push = quadsim.Push.horizontal(PUSH_AT_S, force_n, direction_deg, PUSH_S)
    _, summary = quadsim.simulate(
        GaitParams.load(source),
        NOMINAL_SPEED_MPS[gait],
        PUSH_AT_S + PUSH_S + RECOVER_S,
        seed=seed,
        pushes=[push],
        log_hz=20.0,
    )
    return not summary["fell"]


def largest_survived(
    job: tuple[str, float, int, int, float, str],
) -> tuple[str, float, int, float]:
    """Bisection of the force [N] between one that is survived and one that is not."""
    gait, direction, seed, steps, max_force, source = job
    low, high = 0.0, max_force
    if survives(gait, direction, high, seed, source):
        return gait, direction, seed, high
    for _ in range(steps - 1):
        middle = 0.5 * (low + high)
        if survives(gait, direction, middle, seed, source):
            low = middle
        else:
            high = middle
    return gait, direction, seed, low


def survival_counts(
    impulses: dict[str, float], seeds: int, workers: int, source: dict[str, str]
) -> list[str]:
    """How many of the 8 directions x `seeds` seeds survive `impulses` [N*s] per gait."""
    jobs = [(g, d, s) for g in impulses for d in DIRECTIONS_DEG for s in range(seeds)]
    gaits, directions, seed_list = zip(*jobs, strict=True)
    forces = [impulses[g] / PUSH_S for g in gaits]
    sources = [source[g] for g in gaits]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        alive = list(pool.map(survives, gaits, directions, forces, seed_list, sources))
    head = " | ".join(f"{d}°" for d in DIRECTIONS_DEG)
    lines = [f"| gait | impulse [N·s] | {head} | survived |", "|---" * 11 + "|"]
    for gait, impulse in impulses.items():
        ok = {d: 0 for d in DIRECTIONS_DEG}
        for (g, d, _), a in zip(jobs, alive, strict=True):
            ok[d] += g == gait and a
        total = f"{sum(ok.values())} of {len(DIRECTIONS_DEG) * seeds}"
        lines.append(f"| {gait} | {impulse:g} | {' | '.join(map(str, ok.values()))} | {total} |")
    return lines


def table(impulse: dict[str, dict[float, float]], max_force: float) -> list[str]:
    head = " | ".join(f"{d}°" for d in DIRECTIONS_DEG)
    lines = [f"| gait | {head} | weakest |", "|---" * (len(DIRECTIONS_DEG) + 2) + "|"]
    for gait, by_direction in impulse.items():
        cells = [
            f"≥{v:.0f}" if v >= max_force * PUSH_S else f"{v:.0f}" for v in by_direction.values()
        ]
        lines.append(f"| {gait} | {' | '.join(cells)} | {min(by_direction.values()):.0f} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 (the weakest counts)")
    ap.add_argument("--steps", type=int, default=4, help="simulations per bisection")
    ap.add_argument("--max-force", type=float, default=1600.0, help="[N], the bisection's top")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gaits", default=",".join(NOMINAL_SPEED_MPS))
    ap.add_argument("--survival", metavar="GAIT=N*s,...", help="count survivals of one impulse")
    ap.add_argument("--use", action="append", default=[], metavar="GAIT=FILE")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the results file to rewrite")
    args = ap.parse_args()
    source = gait_sources(NOMINAL_SPEED_MPS, args.use)
    if args.survival:
        impulses = {g: float(n) for g, n in (item.split("=") for item in args.survival.split(","))}
        print("\n".join(survival_counts(impulses, args.seeds, args.workers, source)))
        return
    gaits = args.gaits.split(",")
    jobs = [
        (g, d, s, args.steps, args.max_force, source[g])
        for g in gaits
        for d in DIRECTIONS_DEG
        for s in range(args.seeds)
    ]
    impulse: dict[str, dict[float, float]] = {g: {} for g in gaits}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for gait, direction, _, force in pool.map(largest_survived, jobs):
            kept = impulse[gait].get(direction, math.inf)
            impulse[gait][direction] = min(kept, force * PUSH_S)
    lines = table(impulse, args.max_force)
    print("\n".join(lines))
    titles = {g: f"{g} at {NOMINAL_SPEED_MPS[g]:g} m/s" for g in gaits}
    plot_pushes_survived(
        {titles[g]: by_direction for g, by_direction in impulse.items()},
        args.out.parent / FIGURE.name,
    )
    step = args.max_force * PUSH_S / 2 ** (args.steps - 1)
    how = (
        f"`python benchmarks/bench_pushes.py --seeds {args.seeds} --steps {args.steps}`: the "
        f"largest impulse [N·s] survived, a {PUSH_S:g} s horizontal push on the chest at "
        f"{PUSH_AT_S:g} s, from each direction (0°: pushing forward, 90°: left), the weakest "
        f"of seeds 0-{args.seeds - 1}, to within {step:.0f} N·s below; surviving: no fall "
        f"within {RECOVER_S:g} s. Polar plots: [pushes.png](pushes.png)."
    )
    write_section(args.out, "bench_pushes", "Pushes survived", how, lines)


if __name__ == "__main__":
    main()
