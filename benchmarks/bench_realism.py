"""Simulated against real: each gait at its Froude-scaled speed, seeds 0-4, measured against
the real dog's clip (stride period, duty factors, touchdown phases, marker distance f_d) or,
for the gaits without a clip, against the footfall targets from the literature
(gaits/targets/<gait>.toml: no markers, so no f_d), written into docs/results.md (between its
`bench_realism` markers).

    python benchmarks/bench_realism.py [--seeds 5] [--duration 14] [--workers 2]
        [--use trot=docs/experiments/optimize-trot-2026-12-04/best_trot.toml] [--out FILE]

`--use GAIT=FILE` measures a gait file (an optimizer's best) in the preset's place.

The clips are in ../shared/data/dog_mocap (CC BY-NC 4.0: read from there, never copied in);
their stride periods are scaled to this dog's leg length by the Froude rule
(quadsim.optimize.compare).
"""

from __future__ import annotations

import argparse
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import quadsim
from quadsim.models import LEGS
from quadsim.optimize.compare import compare_log
from quadsim.optimize.sim_eval import SETTLE_S
from quadsim.optimize.targets import target_file, target_names

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gaits import RESULTS, gait_sources, write_section  # noqa: E402

CLIPS = Path(__file__).resolve().parents[2] / "shared" / "data" / "dog_mocap"
TARGETS = "literature"  # what a gait without a clip is measured against
# gait -> (speed [m/s], what it is measured against): the Froude-scaled speeds and the
# clips; the other gaits at their targets' speed, against the targets
REAL = {
    "walk": (1.2, ("dog_walk03", "dog_walk00")),
    "trot": (2.1, ("dog_trot",)),
} | {g: (target_file(g).speed_mps, (TARGETS,)) for g in target_names()}
MARK = "bench_realism"


def measure(job: tuple[str, str, float, int, float, tuple[str, ...]]) -> dict:
    """One run of `gait` (from `source`, a preset name or a gait file) and its comparison
    with each clip (or its literature targets)."""
    gait, source, speed, seed, duration, against = job
    result, summary = quadsim.simulate(source, speed, duration, seed=seed, log_hz=100.0)
    if summary["fell"]:  # nothing to compare: the row counts the fall
        return {"gait": gait, "seed": seed, "fell": True, "compared": {}}
    compared = {
        a: compare_log(result.log, targets=gait)
        if a == TARGETS
        else compare_log(result.log, CLIPS / f"{a}_joint_pos.txt")
        for a in against
    }
    return {"gait": gait, "seed": seed, "fell": summary["fell"], "compared": compared}


def _phase_gap(a: float | None, b: float) -> float:
    return math.nan if a is None else abs((a - b + 0.5) % 1.0 - 0.5)


def _range(values: list[float], digits: int = 2) -> str:
    got = [v for v in values if not math.isnan(v)]
    if not got:
        return "-"
    lo, hi = min(got), max(got)
    return (
        f"{lo:.{digits}f}"
        if round(lo, digits) == round(hi, digits)
        else (f"{lo:.{digits}f}-{hi:.{digits}f}")
    )


def table(runs: list[dict]) -> list[str]:
    """One row per gait and clip (or literature targets): the real dog's figures, the
    simulated ones over the seeds."""
    lines = [
        "| gait | speed [m/s] | against | stride real [s] | stride sim [s] | sim/real "
        "| duty off by (max over feet) | touchdown off by [stride] | f_d [m²] | of it pose [m²] "
        "| fell |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for gait, (speed, clips) in REAL.items():
        mine = [r for r in runs if r["gait"] == gait]
        if not mine:
            continue
        fell = ", ".join(f"seed {r['seed']}" for r in mine if r["fell"]) or "none"
        for clip in clips:
            cs = [r["compared"][clip] for r in mine if not r["fell"]]
            if not cs:
                lines.append(f"| {gait} | {speed} | {clip} | | | | | | | | {fell} |")
                continue
            real = cs[0]["clip"]["stride_period_s"]
            sim = [c["run"]["stride_period_s"] or math.nan for c in cs]
            duty = [
                max(abs(c["run"]["duty_factor"][f] - c["clip"]["duty_factor"][f]) for f in LEGS)
                for c in cs
            ]
            phase = [
                max(
                    _phase_gap(c["run"]["phase_offset"][f], c["clip"]["phase_offset"][f])
                    for f in LEGS
                )
                for c in cs
            ]
            ratio = [s / real for s in sim]
            f_d = [math.nan if "f_d" in c["skipped"] else c["terms"]["f_d"] for c in cs]
            pose = [c["f_d_split"]["pose"] if c["f_d_split"] else math.nan for c in cs]
            lines.append(
                f"| {gait} | {speed} | {clip} | {real:.2f} | {_range(sim)} | {_range(ratio)} "
                f"| {_range(duty)} | {_range(phase)} | {_range(f_d, 3)} | {_range(pose, 3)} "
                f"| {fell} |"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per gait")
    ap.add_argument("--duration", type=float, default=14.0, help="simulated seconds per run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gaits", default=",".join(REAL))
    ap.add_argument("--use", action="append", default=[], metavar="GAIT=FILE")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the results file to rewrite")
    args = ap.parse_args()
    source = gait_sources(REAL, args.use)
    if not CLIPS.is_dir():
        sys.exit(f"the dog clips are not in {CLIPS}")
    jobs = [
        (g, source[g], REAL[g][0], seed, args.duration, REAL[g][1])
        for g in args.gaits.split(",")
        for seed in range(args.seeds)
    ]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        runs = list(pool.map(measure, jobs))
    lines = table(runs)
    print("\n".join(lines))
    how = (
        f"`python benchmarks/bench_realism.py` ({args.duration:g} s from standing, seeds "
        f"0-{args.seeds - 1}, the first {SETTLE_S:g} s not compared; ranges over the seeds; the "
        "clips' stride periods Froude-scaled to this dog's leg length; `literature`: the "
        "footfall targets of gaits/targets/, with their sources; `duty off by` and "
        "`touchdown off by`: the largest gap over the four feet; `of it pose`: the part of f_d "
        "from the markers' stride-mean offsets, the rest is their motion, `quadsim compare`)"
        + "".join(f"; {g} from `{f}`" for g, f in source.items() if f != g)
        + "."
    )
    write_section(args.out, MARK, "Simulated against the real dog", how, lines)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
