"""Commands that change over a run: profiles, the gait chosen by speed, turning."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from quadsim.controller.drive import gaits_used
from quadsim.controller.episode import turn_radius
from quadsim.controller.profile import Profile, ProfileError
from quadsim.gaits.params import SPEC_BY_NAME, GaitParams, preset_names
from quadsim.gaits.schedule import (
    MIN_BLEND_MPS,
    PHASE_KEYS,
    PHASE_PERIOD,
    START_KEYS,
    GaitSchedule,
    _mirrored,
    blend,
)


def test_profile_is_linear_between_knots_and_constant_outside() -> None:
    p = Profile.parse("0:0.5, 10:5.0,20:5")
    assert p(0.0) == 0.5 and p(5.0) == pytest.approx(2.75) and p(15.0) == 5.0
    assert p(-1.0) == 0.5 and p(99.0) == 5.0
    assert p.slope(5.0) == pytest.approx(0.45) and p.slope(15.0) == 0.0 and p.slope(30.0) == 0.0
    assert (p.min, p.max) == (0.5, 5.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0:0.5,10:x", "knot 2 ('10:x') must be T:V"),
        ("0:0.5,10", "knot 2 ('10') must be T:V"),
        ("0:1,10:2,5:3", "knot 3 ('5:3') is out of time order"),
        ("0:1,0:2", "knot 2 ('0:2') is out of time order"),
        ("-1:1", "time must be >= 0"),
        ("0:nan", "finite"),
        ("", "empty"),
    ],
)
def test_malformed_profile_names_the_knot(text: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Profile.parse(text, "speed")


def _starts(g: GaitParams) -> np.ndarray:
    return np.array([g.values[k] for k in START_KEYS])


def _circular(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs((a - b + 0.5) % 1.0 - 0.5)


def _as_preset(got: GaitParams, preset: GaitParams) -> tuple[GaitParams, float]:
    """The preset on the lead that `got` has (as it is, or mirrored left for right), and
    the phase shift of the whole stride that makes it `got`; fails if there is none."""
    for lead in (preset, _mirrored(preset)):
        shift = (_starts(got) - _starts(lead)) % 1.0
        same_legs = all(
            got.values[k] == lead.values[k] for k in got.values if "." in k and k not in PHASE_KEYS
        )
        if same_legs and np.allclose(_circular(shift, shift[0]), 0.0):
            return lead, float(shift[0])
    raise AssertionError(f"{got.gait} is not its preset shifted in phase, on either lead")


def test_schedule_picks_the_band_and_blends_in_the_overlap() -> None:
    schedule = GaitSchedule.auto()
    walk, trot = GaitParams.load("walk"), GaitParams.load("trot")
    assert schedule.at(0.5).gait == "walk" and schedule.at(1.75).gait == "trot"
    # outside the overlap the gait is the preset (shifted in phase as a whole at most)
    for speed, preset in ((0.5, walk), (1.75, trot)):
        got = schedule.at(speed).params
        assert got.values["period_s"] == preset.values["period_s"]
        shift = (_starts(got) - _starts(preset)) % 1.0
        assert np.allclose(_circular(shift, shift[0]), 0.0)
        assert got.graph().phase_offsets() == pytest.approx(preset.graph().phase_offsets())
    # in the overlap (walk 0-1.5, trot 1-2.5) every parameter is the linear blend
    mid = schedule.at(1.25).params
    for key in ("period_s", "height_front_m", "swing_duration_phase.LF"):
        assert mid.values[key] == pytest.approx(0.5 * (walk.values[key] + trot.values[key]))
    assert schedule.at(1.1).gait == "walk" and schedule.at(1.4).gait == "trot"


def test_every_leg_phase_moves_continuously_across_the_overlaps() -> None:
    schedule = GaitSchedule.auto()
    top = schedule.speed_range[1]
    speeds = np.r_[
        np.arange(0.0, top + 1e-9, 0.005),
        1.2 + np.arange(0.0, 0.1, 1e-4),
        3.15 + np.arange(0.0, 0.4, 1e-4),
    ]
    speeds.sort()
    phases = np.array(
        [
            [values[k] for k in PHASE_KEYS]
            for values in (schedule.at(v).params.values for v in speeds)
        ]
    )
    # each on its own circle: harmonic n of a stride wave repeats every 1/n of a stride
    periods = np.array([PHASE_PERIOD[k] for k in PHASE_KEYS])
    steps = _circular(phases[1:] / periods, phases[:-1] / periods) * periods
    assert steps.max() < 0.01  # no leg jumps between stance and swing as the speed changes
    # between the overlaps each gait is its preset, shifted as a whole at most
    for k, name in enumerate(schedule.names):
        lo = schedule.bands[k - 1][1] + MIN_BLEND_MPS if k else 0.0
        hi = schedule.bands[k + 1][0] - MIN_BLEND_MPS if k + 1 < len(schedule.names) else top
        got = schedule.at(0.5 * (lo + hi))
        assert got.gait == name
        _as_preset(got.params, GaitParams.load(name))


def test_touching_bands_are_blended_just_below_the_speed_where_they_meet() -> None:
    a, b = GaitParams.load("trot"), GaitParams.load("walk")
    b = replace(b, gait="fast", speed_band_mps=(2.5, 4.0))
    schedule = GaitSchedule([a, b], [(1.0, 2.5), (2.5, 4.0)])
    assert schedule.at(2.5 - MIN_BLEND_MPS - 0.01).params is schedule.gaits[0]
    assert schedule.at(2.5).params is schedule.gaits[1]  # whole from the start of its band
    mid = schedule.at(2.5 - MIN_BLEND_MPS / 2).params
    periods = a.values["period_s"], b.values["period_s"]
    assert mid.values["period_s"] == pytest.approx(0.5 * sum(periods))


FLEX_PEAK = "spine_flex_wave_phase.h1"  # the gallops flex their spines on harmonic 1


def test_a_phase_shift_moves_the_spine_flexion_with_the_feet() -> None:
    # a gait shifted as a whole is the same gait only if its spine flexes at the same moment
    # of its stride: the gallop entered from the canter once flexed a tenth of a stride late
    schedule = GaitSchedule.auto()
    for shifted in schedule.gaits:
        preset, shift = _as_preset(shifted, GaitParams.load(shifted.gait))
        flex = (shifted.values[FLEX_PEAK] - preset.values[FLEX_PEAK]) % 1.0
        assert _circular(np.array(flex), np.array(shift)) < 1e-3, shifted.gait
    canter, gallop = schedule.gaits[-2:]
    assert (
        gallop.values[FLEX_PEAK] != GaitParams.load(gallop.gait).values[FLEX_PEAK]
    )  # the gallop is shifted, so this test does test the shift
    # blended on the circle, the shortest way (0.9 and 0.1 meet at 0, not at 0.5)
    a = replace(canter, values={**canter.values, FLEX_PEAK: 0.9})
    b = replace(gallop, values={**gallop.values, FLEX_PEAK: 0.1})
    assert _circular(np.array(blend(a, b, 0.5).values[FLEX_PEAK]), np.array(0.0)) < 1e-9


def _flight(g: GaitParams) -> float:
    """Fraction of the stride with all four feet in the air, from the gait graph."""
    graph = g.graph()
    phases = np.linspace(0.0, 1.0, 400, endpoint=False)
    return float(np.mean([np.all(graph.swing_progress(float(p)) >= 0.0) for p in phases]))


def test_a_gait_keeps_the_lead_of_the_one_before_it() -> None:
    # the canter preset leads right and the gallop left: blended as they are, the leads swap
    # half way, through a bound (fore feet together) with a long flight, and the dog dived
    schedule = GaitSchedule.auto()
    for k in range(len(schedule.gaits) - 1):
        a, b = schedule.gaits[k], schedule.gaits[k + 1]
        ends = max(_flight(a), _flight(b))
        for w in np.linspace(0.0, 1.0, 9):
            assert _flight(blend(a, b, float(w))) <= ends + 0.01, (a.gait, b.gait, w)
    gallop = GaitParams.load("transverse-gallop")
    mirrored = _mirrored(gallop)
    assert _mirrored(mirrored).values == gallop.values
    assert mirrored.values["swing_start_phase.RF"] == gallop.values["swing_start_phase.LF"]
    assert mirrored.values["step_offset_x_m.LH"] == gallop.values["step_offset_x_m.RH"]
    assert mirrored.values["period_s"] == gallop.values["period_s"]


def test_a_blend_of_two_gaits_at_a_bound_stays_on_it() -> None:
    # (1 - w) 0.02 + w 0.02 rounds to 0.019999999999999997 at some weights, below the bound
    # (a scene's walk-to-trot blend refused a trot whose fore feet lift 0.02 m)
    walk, trot = GaitParams.load("walk"), GaitParams.load("trot")
    lowest = walk.bounds_of(SPEC_BY_NAME["swing_height_m"])[0]

    def lifting_least(gait: GaitParams) -> GaitParams:
        lifts = {k: lowest for k in gait.values if k.startswith("swing_height_m.")}
        return replace(gait, values={**gait.values, **lifts})

    a, b = lifting_least(walk), lifting_least(trot)
    for w in np.linspace(0.0, 1.0, 101):
        mixed = blend(a, b, float(w))  # validated on construction
        assert all(mixed.values[k] == lowest for k in mixed.values if "swing_height_m." in k)


def test_blend_ends_are_the_gaits_themselves() -> None:
    walk, trot = GaitParams.load("walk"), GaitParams.load("trot")
    for w, gait in ((0.0, walk), (1.0, trot)):
        values = blend(walk, trot, w).values
        assert set(values) == set(gait.values)
        for key, want in gait.values.items():
            # a phase is the same on its circle: harmonic 2 peaking at 0.535 peaks at 0.035
            period = PHASE_PERIOD.get(key)
            miss = (
                abs(values[key] - want)
                if period is None
                else _circular(values[key] / period, want / period) * period
            )
            assert miss < 1e-12, (w, key, values[key], want)


def test_turn_radius_of_a_circle_and_none_for_a_straight_path() -> None:
    a = np.linspace(0.0, 2.0, 200)
    xy = np.stack([3.5 * np.sin(a) + 1.0, 3.5 * (1 - np.cos(a)) - 2.0], axis=1)
    assert turn_radius(xy, a) == pytest.approx(3.5, rel=1e-6)
    line = np.stack([np.linspace(0, 10, 50), np.zeros(50)], axis=1)
    assert turn_radius(line, np.zeros(50)) is None


def test_gaits_used_lists_each_stretch_in_order() -> None:
    t = np.arange(10) * 0.5
    used = gaits_used(t, np.array([0, 0, 0, 1, 1, 1, 1, 2, 2, 1]), ("walk", "trot", "canter"))
    assert [u["gait"] for u in used] == ["walk", "trot", "canter", "trot"]
    assert used[0] == {"gait": "walk", "from_s": 0.0, "to_s": 1.5}
    assert used[-1]["from_s"] == 4.5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gait", "auto", "--speed-profile", "0:0.5,5:x"], "knot 2"),
        (["--gait", "auto", "--speed-profile", "0:1,5:2,3:2"], "out of time order"),
        (["--gait", "gallop"], f"known gaits: {', '.join(preset_names())}, auto"),
        (["--gait", "auto"], "needs --speed or --speed-profile"),
        (["--gait", "auto", "--speed", "9"], "above the automatic gaits' range"),
        (["--gait", "trot", "--speed-profile", "0:1,5:3"], "outside the trot band"),
        (["--gait", "trot", "--heading-profile", "0:0,2:y"], "heading profile knot 2"),
    ],
)
def test_run_rejects_bad_commands_with_exit_2(args: list[str], message: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "quadsim.scripts.cli", "run", *args, "--duration", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr


def test_video_caption_is_written_in_the_top_left_corner_only() -> None:
    from quadsim.controller.recording import _write_text

    img = np.full((480, 640, 3), 90, dtype=np.uint8)
    out = _write_text(img, "trot  2.0 m/s  t = 3.0 s")
    assert out.shape == img.shape and out.dtype == np.uint8
    assert np.all(img == 90)  # the frame given is not written into
    changed = np.any(out != img, axis=2)
    rows, cols = np.nonzero(changed)
    assert rows.max() < 60 and cols.max() < 400  # a caption box in the corner
    assert changed.sum() > 1000  # with text in it


def test_a_heading_profile_reaches_its_headings_and_is_what_the_error_measures() -> None:
    from quadsim.controller.kinematics import yaw_of
    from quadsim.controller.simulate import simulate

    profile = Profile.parse("0:0,1:90", "heading", "deg")
    result, summary = simulate("trot", 2.0, 6.0, seed=0, heading_deg=profile)
    log = result.log
    assert not summary["fell"]
    yaw = np.degrees(yaw_of(log["base_quat"]))
    commanded = np.array([profile(t) for t in log["t"]])
    np.testing.assert_allclose(np.degrees(log["heading_cmd"]), commanded)
    # the dog starts from standing: it may lag the profile, but not stay behind it
    late = log["t"] >= 3.0
    assert np.all(np.abs(yaw[late] - 90.0) < 10.0)
    half = log["t"] >= 3.0
    error = np.mean(np.abs((yaw[half] - commanded[half] + 180.0) % 360.0 - 180.0))
    assert summary["heading_error_deg"] == pytest.approx(error, abs=0.01)
