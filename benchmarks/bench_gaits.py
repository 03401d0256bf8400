"""The six gaits at their nominal speeds, seeds 0-4: the acceptance statistics, written into
docs/results.md (between its `bench_gaits` markers).

    python benchmarks/bench_gaits.py [--seeds 5] [--duration 20] [--workers 2] [--jsonl runs.jsonl]
        [--preset small]

Per gait: falls, mean forward speed over the second half, duty factors, touchdown phases
relative to LH and stride period, each as the mean and the spread (min-max) over the seeds,
and the realtime factor of the whole run (best of the seeds: the other core may be busy).
`--jsonl` also keeps every run's summary, one JSON object a line. `--preset small` runs the
small dog at the nominal speeds Froude-scaled to its legs (its own section of the results,
with the shepherd's stride period scaled alike beside the measured one).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import quadsim
from quadsim.gaits.params import NOMINAL_SPEED_MPS, GaitParams
from quadsim.gaits.scaling import speed_factor
from quadsim.models import LEGS, PRESETS

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results.md"
MARK = "bench_gaits"


def run(job: tuple[str, float, int, float, str]) -> dict:
    gait, speed, seed, duration, preset = job
    _, summary = quadsim.simulate(gait, speed, duration, seed=seed, log_hz=50.0, spec=preset)
    return summary


def spread(values: list[float | None], digits: int = 2, circular: bool = False) -> str:
    """'mean (min to max)' of the values that are not None; phases (`circular`, in strides) are
    unwrapped around their circular mean, so 0.98 and 0.02 average to 0.00, not 0.50."""
    got = [v for v in values if v is not None]
    if not got:
        return "-"
    if circular:
        angles = [2 * math.pi * v for v in got]
        centre = math.atan2(sum(map(math.sin, angles)), sum(map(math.cos, angles)))
        got = [
            centre / (2 * math.pi) + ((v - centre / (2 * math.pi) + 0.5) % 1.0 - 0.5) for v in got
        ]
        centre = round(statistics.fmean(got), 9) % 1.0
        got = [v - statistics.fmean(got) + centre for v in got]
    mean = statistics.fmean(got)
    if len(got) == 1 or max(got) == min(got):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({min(got):.{digits}f} to {max(got):.{digits}f})"


def table(summaries: list[dict], time_factor: float = 1.0) -> list[str]:
    """The markdown table of the runs, one row per gait; for a dog other than the shepherd
    (`time_factor` != 1: its times against the shepherd's) with the stride period of the
    shepherd's gait scaled by `time_factor`."""
    scaled = time_factor != 1.0
    lines = [
        "| gait | speed cmd [m/s] | fell | mean speed [m/s] | duty LF, RF, LH, RH "
        "| touchdown LF, RF, RH (after LH) | stride [s] | "
        + ("shepherd's stride scaled [s] | " if scaled else "")
        + "realtime x |",
        "|---|---|---|---|---|---|---|---|" + ("---|" if scaled else ""),
    ]
    for gait in NOMINAL_SPEED_MPS:
        runs = [s for s in summaries if s["gait"] == gait]
        if not runs:
            continue
        speed = runs[0]["speed_cmd"]
        expected = f"| {GaitParams.load(gait)['period_s'] * time_factor:.3f} " if scaled else ""
        fell = [s["seed"] for s in runs if s["fell"]]
        duty = ", ".join(spread([s["duty_factor"][leg] for s in runs]) for leg in LEGS)
        phase = ", ".join(
            spread([s["phase_offset"][leg] for s in runs], circular=True)
            for leg in ("LF", "RF", "RH")
        )
        lines.append(
            f"| {gait} | {speed} | {', '.join(f'seed {k}' for k in fell) or 'none'} "
            f"| {spread([s['mean_speed_mps'] for s in runs])} | {duty} | {phase} "
            f"| {spread([s['stride_period_s'] for s in runs])} {expected}"
            f"| {max(s['realtime_factor'] for s in runs):.2f} |"
        )
    return lines


def gait_sources(gaits: Iterable[str], use: list[str]) -> dict[str, str]:
    """Each gait's preset name, or the file `--use GAIT=FILE` plays in its place."""
    source = {g: g for g in gaits}
    for item in use:
        gait, sep, path = item.partition("=")
        if not sep or gait not in source or not Path(path).is_file():
            sys.exit(f"--use {item!r}: expected GAIT=FILE, GAIT one of {', '.join(source)}")
        source[gait] = path
    return source


def add_gait_options(ap: argparse.ArgumentParser) -> None:
    """The options of a benchmark over the gaits: --workers, --gaits, --use and --out."""
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gaits", default=",".join(NOMINAL_SPEED_MPS), help="comma-separated")
    ap.add_argument("--use", action="append", default=[], metavar="GAIT=FILE")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the results file to rewrite")


def chosen_gaits(ap: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[dict, list]:
    """What add_gait_options chose: each gait's preset or file, and the gaits to measure."""
    source = gait_sources(NOMINAL_SPEED_MPS, args.use)
    wanted = [g.strip() for g in args.gaits.split(",")]
    if unknown := [g for g in wanted if g not in NOMINAL_SPEED_MPS]:
        ap.error(f"unknown gait {', '.join(unknown)}; choose from {', '.join(NOMINAL_SPEED_MPS)}")
    return source, wanted


def runs_by_row(
    run: Callable[[tuple], object], jobs_of_rows: list[list[tuple]], workers: int
) -> list[list]:
    """`run` on every job (a process pool), its results grouped as the rows' jobs are."""
    with ProcessPoolExecutor(workers) as pool:
        results = iter(list(pool.map(run, [job for jobs in jobs_of_rows for job in jobs])))
    return [[next(results) for _ in jobs] for jobs in jobs_of_rows]


def outcome_cells(summaries: list[dict]) -> tuple[str, str]:
    """A row's "N of M" runs that stayed up and the fall times [s] of the others ("-": none)."""
    falls = [f"{s['fall_time_s']:.1f}" for s in summaries if s["fell"]]
    return f"{len(summaries) - len(falls)} of {len(summaries)}", ", ".join(falls) or "-"


def span(values: list[float], digits: int) -> str:
    """The "min to max" of `values` to `digits` decimals; "-" when there are none."""
    return f"{min(values):.{digits}f} to {max(values):.{digits}f}" if values else "-"


def write_section(path: Path, mark: str, title: str, how: str, lines: list[str]) -> None:
    """Replace the text between `<!-- mark -->` and `<!-- /mark -->` in `path` (appended if
    the markers are not there yet) with a section `title`: today's date and `how` it was
    measured, then `lines`."""
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    body = [f"## {title}", "", f"Measured {when} by {how}", "", *lines]
    text = path.read_text() if path.exists() else "# Results\n"
    start, end = f"<!-- {mark} -->", f"<!-- /{mark} -->"
    block = "\n".join([start, *body, end])
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per gait")
    ap.add_argument("--duration", type=float, default=20.0, help="simulated seconds per run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gaits", default=",".join(NOMINAL_SPEED_MPS))
    ap.add_argument("--jsonl", type=Path, help="also write every run's summary here")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the results file to rewrite")
    ap.add_argument("--preset", default="shepherd", choices=sorted(PRESETS), help="the dog")
    args = ap.parse_args()
    # the small dog runs at the shepherd's speeds Froude-scaled: times by sqrt(leg ratio)
    time_factor = speed_factor(PRESETS[args.preset].leg_length / PRESETS["shepherd"].leg_length)
    jobs = [
        (g, round(NOMINAL_SPEED_MPS[g] * time_factor, 4), seed, args.duration, args.preset)
        for g in args.gaits.split(",")
        for seed in range(args.seeds)
    ]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        summaries = list(pool.map(run, jobs))
    if args.jsonl:
        args.jsonl.write_text("".join(json.dumps(s) + "\n" for s in summaries))
    lines = table(summaries, time_factor)
    print("\n".join(lines))
    small = args.preset != "shepherd"
    how = (
        f"`python benchmarks/bench_gaits.py{f' --preset {args.preset}' if small else ''}` "
        f"({args.duration:g} s from standing, seeds "
        f"0-{args.seeds - 1}; mean (min to max) over the seeds; touchdown phases in strides "
        "after the left hind foot's; realtime x: the best seed's whole run)."
    )
    if small:
        title = f"Gaits on the {args.preset} dog at the nominal speeds, Froude-scaled"
        write_section(args.out, f"{MARK}_{args.preset}", title, how, lines)
    else:
        write_section(args.out, MARK, "Gaits at their nominal speeds", how, lines)


if __name__ == "__main__":
    main()
