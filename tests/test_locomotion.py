"""Acceptance of the walk and the trot: 20 s on flat ground from standing (slow).

All runs are simulated once, one per core (tests/sim_slots.py), and shared by the tests below.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np
import pytest
from sim_slots import SLOTS, one_per_core

from quadsim.controller.sim import Push
from quadsim.controller.simulate import simulate
from quadsim.gaits.footfalls import FEET, clean_contacts, footfall_pattern, touchdowns
from quadsim.gaits.params import GaitParams

pytestmark = pytest.mark.slow
DURATION = 20.0
# the seeds only jitter the start pose: seeds 0-4 agree within 0.03 in every figure of
# docs/results.md (benchmarks/bench_gaits.py); three fit the suite's time
SEEDS = range(3)
NOMINAL = [("walk", 1.0), ("trot", 2.0)]
# real dogs' duty factors: a walk keeps its feet down more than half the stride on average
# (Hildebrand's line), each foot at least 0.45 (dog_walk03's left hind: 0.47); a trot 0.3-0.5
REAL_DUTY = {"walk": (0.45, 1.0), "trot": (0.3, 0.5)}
WALK_MEAN_DUTY = 0.5
DIAGONAL_APART = 0.22  # [stride] a trot's diagonal partners land this close at most
EDGES = [("walk", 0.5), ("walk", 1.4), ("trot", 1.5), ("trot", 2.5)]


PUSH = Push(start=10.0, force=(0.0, 200.0, 0.0), duration=0.1, link="chest")


@one_per_core
def _run(job: tuple) -> tuple:
    gait, speed, seed, pushed = job
    result, summary = simulate(
        gait, speed, DURATION, seed=seed, log_hz=100.0, pushes=[PUSH] if pushed else []
    )
    return job, summary, result.contact_t, result.contacts


@pytest.fixture(scope="module")
def runs() -> dict:
    jobs = [(g, v, s, False) for g, v in NOMINAL for s in SEEDS]
    jobs += [(g, v, 0, False) for g, v in EDGES]
    jobs += [("trot", 2.0, 0, True)]
    with ProcessPoolExecutor(max_workers=SLOTS) as pool:
        return {job: (summary, t, c) for job, summary, t, c in pool.map(_run, jobs)}


@pytest.mark.parametrize(("gait", "speed"), [("walk", 1.0), ("trot", 2.0)])
def test_nominal_speed_on_every_seed(runs: dict, gait: str, speed: float) -> None:
    for seed in SEEDS:
        s, _, _ = runs[(gait, speed, seed, False)]
        assert not s["fell"], f"{gait} seed {seed} fell at {s['fall_time_s']} s"
        assert abs(s["mean_speed_mps"] - speed) <= 0.10 * speed, (seed, s["mean_speed_mps"])
        assert s["lateral_drift_m"] < 0.5, (seed, s["lateral_drift_m"])
        assert s["heading_error_deg"] < 10.0, (seed, s["heading_error_deg"])


@pytest.mark.parametrize(
    ("gait", "speed"),
    [("walk", 0.5), ("walk", 1.4), ("trot", 1.5), ("trot", 2.5)],
)
def test_edges_of_the_speed_band(runs: dict, gait: str, speed: float) -> None:
    s, _, _ = runs[(gait, speed, 0, False)]
    assert not s["fell"], f"fell at {s['fall_time_s']} s"
    assert abs(s["mean_speed_mps"] - speed) <= 0.15 * speed, s["mean_speed_mps"]


def _circ(a: float, b: float) -> float:
    """Distance between two phases on the unit circle."""
    d = abs((a - b) % 1.0)
    return min(d, 1.0 - d)


@pytest.mark.parametrize("seed", SEEDS)
def test_trot_diagonal_pairs_touch_down_together(runs: dict, seed: int) -> None:
    s, _, _ = runs[("trot", 2.0, seed, False)]
    offsets = s["phase_offset"]  # touchdown phases relative to LH, from the contacts
    assert None not in offsets.values(), offsets
    # the real dog's fore foot lands 0.09-0.12 of a stride before its diagonal hind one
    # (dog_trot); the realism target allows 0.1 more
    assert _circ(offsets["RF"], 0.0) < DIAGONAL_APART, offsets  # RF with LH
    assert _circ(offsets["LF"], offsets["RH"]) < DIAGONAL_APART, offsets  # LF with RH
    assert _circ(offsets["RH"], 0.5) < 0.1, offsets  # the two pairs alternate


def test_walk_is_a_four_beat_lateral_sequence(runs: dict) -> None:
    s, t, contact = runs[("walk", 1.0, 0, False)]
    offsets = s["phase_offset"]
    assert None not in offsets.values()
    order = sorted(FEET, key=lambda f: offsets[f])
    assert order == ["LH", "LF", "RH", "RF"], offsets
    # four separate beats, read as the real dog's walk is (gaits.footfalls.footfall_pattern)
    assert footfall_pattern(offsets, duty=s["duty_factor"]) == "lateral-walk", s


@pytest.mark.parametrize(("gait", "speed"), NOMINAL)
def test_measured_duty_factors_match_the_gait_graph(runs: dict, gait: str, speed: float) -> None:
    planned = GaitParams.load(gait).graph().duty_factor
    for seed in SEEDS:
        s, _, _ = runs[(gait, speed, seed, False)]
        measured = np.array([s["duty_factor"][f] for f in FEET])
        assert np.all(np.abs(measured - planned) <= 0.1), (seed, measured, planned)


@pytest.mark.parametrize(("gait", "speed"), NOMINAL)
def test_duty_factors_are_those_of_real_dogs(runs: dict, gait: str, speed: float) -> None:
    lo, hi = REAL_DUTY[gait]
    for seed in SEEDS:
        duty = runs[(gait, speed, seed, False)][0]["duty_factor"]
        assert all(d is not None and lo < d <= hi for d in duty.values()), (seed, duty)
        if gait == "walk":
            assert np.mean(list(duty.values())) > WALK_MEAN_DUTY, (seed, duty)


@pytest.mark.parametrize(("gait", "speed"), NOMINAL)
def test_each_foot_lands_once_a_stride(runs: dict, gait: str, speed: float) -> None:
    # a stance is one contact (bounces under 30 ms not counted): a foot that lifts and lands
    # again mid-stance looks wrong in the gait diagram and the video
    for seed in SEEDS:
        s, t, contact = runs[(gait, speed, seed, False)]
        late = t >= 2.0
        strides = (t[late][-1] - t[late][0]) / s["stride_period_s"]
        landings = touchdowns(t[late], clean_contacts(t[late], contact[late]))
        per_stride = [round(len(x) / strides, 2) for x in landings]
        assert max(per_stride) <= 1.25, (seed, per_stride)


def test_trot_survives_a_sideways_push(runs: dict) -> None:
    s, _, _ = runs[("trot", 2.0, 0, True)]
    assert not s["fell"], f"fell at {s['fall_time_s']} s"


def test_same_seed_same_run_bit_for_bit() -> None:
    a, _ = simulate("trot", 2.0, 2.0, seed=3)
    b, _ = simulate("trot", 2.0, 2.0, seed=3)
    c, _ = simulate("trot", 2.0, 2.0, seed=4)
    assert np.array_equal(a.log["joint_q"], b.log["joint_q"])
    assert not np.array_equal(a.log["joint_q"], c.log["joint_q"])


# the two walking dogs' LF lands 0.07 (walk00) and 0.19 (walk03) of a stride after LH: a walk
# matches one of them; walk03 also holds a trot (frames 448-481), so its mean speed scales to
# 1.8 m/s, past the walk's band
MOCAP_CLIPS = {
    "walk": ("dog_walk00_joint_pos.txt", "dog_walk03_joint_pos.txt"),
    "trot": ("dog_trot_joint_pos.txt",),
}
ONE_GAIT_CLIPS = ("dog_walk00_joint_pos.txt", "dog_trot_joint_pos.txt")
FOOTFALLS_WITHIN = 0.15  # duty factor and touchdown phase [stride]


@pytest.mark.parametrize(
    ("gait", "speed"),
    [
        ("walk", 1.0),
        ("trot", 2.0),
    ],
)
def test_footfalls_are_those_of_the_real_dog(
    runs: dict, mocap_dir, gait: str, speed: float
) -> None:
    from quadsim.mocap.footfalls import analyze_footfalls
    from quadsim.mocap.motion import froude_speed, leg_length, load_reference
    from quadsim.optimize.sim_eval import dog_leg_length

    reals = {}
    for clip in MOCAP_CLIPS[gait]:
        motion = load_reference(mocap_dir / clip)
        reals[clip] = real = analyze_footfalls(motion)
        if clip in ONE_GAIT_CLIPS:
            # the real dog's speed, scaled to our dog's size at the same Froude number
            similar = froude_speed(
                real.speed_mps, leg_length(motion, stance=real.stance), dog_leg_length()
            )
            lo, hi = GaitParams.load(gait).speed_band_mps
            assert lo <= similar <= hi, (clip, similar)
    for seed in SEEDS:
        s, _, _ = runs[(gait, speed, seed, False)]
        gaps = {
            clip: max(
                max(
                    abs(s["duty_factor"][foot] - real.duty_factor[foot]),
                    _circ(s["phase_offset"][foot], real.phase_offset[foot]),
                )
                for foot in FEET
            )
            for clip, real in reals.items()
        }
        assert min(gaps.values()) <= FOOTFALLS_WITHIN, (
            seed,
            gaps,
            s["duty_factor"],
            s["phase_offset"],
        )


@pytest.mark.parametrize("speed", [1.5, 2.2])
def test_the_stride_period_falls_with_speed_above_the_gaits_reference_speed(speed: float) -> None:
    # stride_speed_exponent 1: above stride_speed_ref_mps the stride keeps its length
    trot = GaitParams.load("trot")
    ref = 1.8
    law = replace(
        trot, values={**trot.values, "stride_speed_exponent": 1.0, "stride_speed_ref_mps": ref}
    )
    _, summary = one_per_core(simulate)(law, speed, 10.0, seed=0)
    assert not summary["fell"]
    want = trot["period_s"] * min(ref / speed, 1.0)  # below the reference, period_s
    assert summary["stride_period_s"] == pytest.approx(want, abs=0.015)
