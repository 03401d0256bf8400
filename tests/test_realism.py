"""Issue 29's realism targets, against the real dog's clips (slow), at the clips'
Froude-scaled speeds: the presets that `quadsim optimize` made, the walk against dog_walk03,
the trot against dog_trot (its stride held at 0.50 s: 0.76 of the clip's, short of the
target; the 0.58 s trot of docs/experiments/optimize-trot-long-2026-12-07 met it and fell on
6 cm steps, the 10 degree hill and at 2.5 m/s, docs/notebook.md 2026-12-07, night), and the
pace against the literature's footfalls (gaits/targets/pace.toml; no clip, so no marker
distance).
The clips are read from ../shared/data/dog_mocap (CC BY-NC 4.0, never copied in); the
comparison is `quadsim compare`'s (quadsim.optimize.compare.compare_log).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from sim_slots import SLOTS, one_per_core

from quadsim.controller.simulate import simulate
from quadsim.gaits.params import PRESET_DIR
from quadsim.models import LEGS
from quadsim.optimize.compare import compare_log

pytestmark = pytest.mark.slow
CLIPS = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"
DURATION = 14.0
SEEDS = (0, 1)
# gait -> (speed [m/s], clip or None for the literature's targets): Froude-scaled speeds
REAL = {"walk": (1.2, "dog_walk03"), "trot": (2.1, "dog_trot"), "pace": (1.5, None)}
CLIP_GAITS = [gait for gait, (_, clip) in REAL.items() if clip]
GAIT_FILE = {
    "walk": PRESET_DIR / "walk.toml",
    "trot": PRESET_DIR / "trot.toml",
    "pace": PRESET_DIR / "pace.toml",
}
PERIOD_WITHIN = 0.15  # of the clip's stride period
DUTY_WITHIN = 0.10
PHASE_WITHIN = 0.10  # [stride]
SPEED_WITHIN = 0.10
# f_d of the hand-tuned presets on the same clips (bench_realism.py, seeds 0-1: the trot at
# 563c6cf, the walk at bec5222)
HAND_TUNED_F_D = {"walk": 0.039, "trot": 0.031}
F_D_GAIN = 0.30  # the optimizer's presets are at least this much closer to the clip


@one_per_core
def _compare(job: tuple[str, int]) -> tuple[tuple[str, int], dict, dict]:
    gait, seed = job
    speed, clip = REAL[gait]
    result, summary = simulate(str(GAIT_FILE[gait]), speed, DURATION, seed=seed, log_hz=100.0)
    if clip is None:
        return job, summary, compare_log(result.log, targets=gait)
    return job, summary, compare_log(result.log, CLIPS / f"{clip}_joint_pos.txt")


@pytest.fixture(scope="module")
def compared() -> dict[tuple[str, int], tuple[dict, dict]]:
    if not CLIPS.is_dir():
        pytest.skip("the dog clips are not in ../shared/data/dog_mocap")
    jobs = [(g, s) for g in REAL for s in SEEDS]
    with ProcessPoolExecutor(max_workers=SLOTS) as pool:
        return {job: (summary, c) for job, summary, c in pool.map(_compare, jobs)}


@pytest.mark.parametrize("gait", list(REAL))
def test_the_gait_keeps_its_speed_and_its_feet(compared, gait: str) -> None:
    for seed in SEEDS:
        summary, _ = compared[gait, seed]
        assert not summary["fell"], (gait, seed)
        speed = REAL[gait][0]
        assert abs(summary["mean_speed_mps"] - speed) <= SPEED_WITHIN * speed, (gait, seed)


def _unmet_for_the_trot(reason: str, gaits: list[str]) -> list:
    """The gaits, the trot's target marked as not met (strict: it fails once it is met)."""
    unmet = pytest.mark.xfail(strict=True, reason=reason)
    return [pytest.param(g, marks=unmet) if g == "trot" else g for g in gaits]


@pytest.mark.parametrize(
    "gait",
    _unmet_for_the_trot(
        "the trot preset strides 0.50 s against the clip's 0.66: longer strides rolled the "
        "trunk 17 degrees and fell to pushes, steps and rough ground (docs/experiments/"
        "optimize-trot-quicken-2026-12-07)",
        list(REAL),
    ),
)
def test_strides_as_long_as_the_real_dogs(compared, gait: str) -> None:
    for seed in SEEDS:
        _, c = compared[gait, seed]
        real, sim = c["clip"]["stride_period_s"], c["run"]["stride_period_s"]
        assert abs(sim - real) <= PERIOD_WITHIN * real, (gait, seed, sim, real)


@pytest.mark.parametrize(
    "gait",
    ["walk", "trot", "pace"],
)
def test_feet_down_and_landing_as_the_real_dogs(compared, gait: str) -> None:
    for seed in SEEDS:
        _, c = compared[gait, seed]
        run, clip = c["run"], c["clip"]
        for foot in LEGS:
            duty_gap = abs(run["duty_factor"][foot] - clip["duty_factor"][foot])
            assert duty_gap <= DUTY_WITHIN, (gait, seed, foot, run["duty_factor"], clip)
            phase_gap = abs(
                (run["phase_offset"][foot] - clip["phase_offset"][foot] + 0.5) % 1 - 0.5
            )
            assert phase_gap <= PHASE_WITHIN, (gait, seed, foot, run["phase_offset"], clip)


@pytest.mark.parametrize(
    "gait",
    _unmet_for_the_trot(
        "the trot preset's f_d is 0.028-0.032 m² (the hand-tuned 0.031), not 30% lower: "
        "about 0.02 m² of it is the pose (the trunk's proportions; docs/optimizer.md)",
        CLIP_GAITS,
    ),
)
def test_markers_closer_to_the_clip_than_the_hand_tuned_preset(compared, gait: str) -> None:
    for seed in SEEDS:
        _, c = compared[gait, seed]
        assert c["terms"]["f_d"] <= (1 - F_D_GAIN) * HAND_TUNED_F_D[gait], (gait, seed)


@pytest.mark.parametrize("gait", list(REAL))
def test_the_gaits_measured_here_are_made_by_the_optimizer(gait: str) -> None:
    from quadsim.gaits.params import GaitParams

    provenance = GaitParams.load(GAIT_FILE[gait]).provenance
    assert provenance["source"] == "optimizer", provenance
    command = provenance["command"]
    clip = REAL[gait][1]
    against = f"{clip}_joint_pos" if clip else f"--targets {gait}"
    assert command.startswith("quadsim optimize --gait") and against in command, command
