"""Gait graphs, gait parameters and their files."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quadsim.gaits.errors import GaitError
from quadsim.gaits.footfalls import PATTERN_OF_GAIT, footfall_pattern
from quadsim.gaits.graph import GaitGraph
from quadsim.gaits.params import PRESET_DIR, PULL_UNLIMITED, SPEC_BY_NAME, GaitParams, preset_names

DATA = Path(__file__).parent / "data"
SCHEMA_1_FILES = sorted(DATA.glob("*-schema1*.toml"))  # as written before schema 2


def test_presets_load_and_know_their_speed_bands() -> None:
    assert {"walk", "trot"} <= set(preset_names())
    for name in preset_names():
        gait = GaitParams.load(name)
        lo, hi = gait.speed_band_mps
        gait.check_speed((lo + hi) / 2)
        with pytest.raises(GaitError, match=f"{lo}-{hi} m/s"):
            gait.check_speed(hi + 0.5)


def _planned_by_hand(name: str) -> bool:
    """Whether a preset's gait graph is its footfalls as planned by hand. An optimizer-made
    preset's graph is what the controller aims at, not where the feet land (the trot's hind
    feet land before their planned touchdown); its measured footfalls are tested instead
    (tests/test_locomotion.py, tests/test_transitions.py, tests/test_realism.py)."""
    return GaitParams.load(name).provenance.get("source") != "optimizer"


def test_the_walks_graph_is_a_four_beat_lateral_sequence() -> None:
    if not _planned_by_hand("walk"):
        pytest.skip("the walk preset is optimizer-made: its footfalls are tested measured")
    walk = GaitParams.load("walk").graph().phase_offsets()
    # lateral sequence: LH, LF, RH, RF, four separate beats, the right side half a stride on
    order = sorted(walk, key=walk.get)
    assert order == ["LH", "LF", "RH", "RF"]
    # four separate beats, if close: the real dog's LF lands 0.07 after LH (dog_walk00)
    assert np.all(np.diff([walk[f] for f in order] + [1.0]) > 0.06)
    # a preset's floats carry 5 significant digits
    assert walk["RH"] == pytest.approx(0.5) and walk["RF"] == pytest.approx(
        walk["LF"] + 0.5, abs=1e-4
    )


def test_the_trots_graph_moves_diagonal_pairs() -> None:
    if not _planned_by_hand("trot"):
        pytest.skip("the trot preset is optimizer-made: its footfalls are tested measured")
    trot = GaitParams.load("trot").graph().phase_offsets()
    # diagonal pairs within the acceptance's 0.1 of a stride; the real dog's fore foot lands
    # 0.09-0.12 before its diagonal hind one (dog_trot)
    assert min(trot["RF"], 1 - trot["RF"]) < 0.1  # RF with LH
    assert abs(trot["LF"] - trot["RH"]) < 0.1 and abs(trot["LF"] - 0.5) < 0.1


def test_pace_moves_lateral_pairs() -> None:
    pace = GaitParams.load("pace").graph().phase_offsets()
    assert min(pace["LF"], 1 - pace["LF"]) < 0.1  # LF with LH
    assert abs(pace["RF"] - pace["RH"]) < 0.1 and abs(pace["RH"] - 0.5) < 0.05


@pytest.mark.parametrize(
    ("offsets", "pattern"),
    [
        ({"LF": 0.5, "RF": 0.0, "LH": 0.0, "RH": 0.5}, "trot"),
        ({"LF": 0.02, "RF": 0.5, "LH": 0.0, "RH": 0.52}, "pace"),
        ({"LF": 0.5, "RF": 0.5, "LH": 0.0, "RH": 0.02}, "bound"),
        ({"LF": 0.25, "RF": 0.75, "LH": 0.0, "RH": 0.5}, "lateral-walk"),
        ({"LF": 0.75, "RF": 0.25, "LH": 0.0, "RH": 0.5}, "diagonal-walk"),
        ({"LF": 0.3, "RF": 0.5, "LH": 0.0, "RH": 0.32}, "canter"),  # right lead
        ({"LF": 0.3, "RF": 0.5, "LH": 0.32, "RH": 0.0}, "other"),  # hind pairs with its own side
        ({"LF": 0.45, "RF": 0.3, "LH": 0.0, "RH": 0.85}, "transverse-gallop"),  # both leads left
        ({"LF": 0.3, "RF": 0.45, "LH": 0.0, "RH": 0.85}, "rotary-gallop"),  # hind left, fore right
    ],
)
def test_footfall_pattern_names_the_order_of_touchdowns(offsets: dict, pattern: str) -> None:
    assert footfall_pattern(offsets) == pattern
    shifted = {f: (x + 0.37) % 1.0 for f, x in offsets.items()}  # any reference foot
    assert footfall_pattern(shifted) == pattern


def test_a_walk_in_lateral_couplets_is_a_walk_and_not_a_pace() -> None:
    couplets = {"LF": 0.07, "RF": 0.54, "LH": 0.0, "RH": 0.49}  # the real dog, dog_walk00
    assert footfall_pattern(couplets) == "pace"  # the timing alone
    walking = {"LF": 0.56, "RF": 0.61, "LH": 0.53, "RH": 0.5}
    assert footfall_pattern(couplets, duty=walking) == "lateral-walk"
    running = {"LF": 0.36, "RF": 0.36, "LH": 0.47, "RH": 0.47}  # the pace preset's graph
    assert footfall_pattern(couplets, duty=running) == "pace"
    pairs = {"LF": 0.02, "RF": 0.52, "LH": 0.0, "RH": 0.5}  # lateral feet landing together
    assert footfall_pattern(pairs, duty=walking) == "pace"


def test_a_run_in_dissociated_diagonal_couplets_is_a_trot() -> None:
    # the real dog's trot (dog_trot): each fore foot lands 0.09-0.12 before its diagonal hind
    dissociated = {"LF": 0.39, "RF": 0.91, "LH": 0.0, "RH": 0.51}
    running = {"LF": 0.48, "RF": 0.45, "LH": 0.36, "RH": 0.33}
    walking = {"LF": 0.56, "RF": 0.61, "LH": 0.53, "RH": 0.5}
    assert footfall_pattern(dissociated) == "lateral-walk"  # the timing alone
    assert footfall_pattern(dissociated, duty=running) == "trot"
    assert footfall_pattern(dissociated, duty=walking) == "lateral-walk"
    # a quarter of a stride between beats is a four-beat gait, run or walk
    assert (
        footfall_pattern({"LF": 0.25, "RF": 0.75, "LH": 0.0, "RH": 0.5}, duty=running)
        == "lateral-walk"
    )
    # an asymmetrical run keeps its beats: a gallop's hind feet land 0.1 apart
    gallop = {"LF": 0.45, "RF": 0.3, "LH": 0.0, "RH": 0.9}
    assert footfall_pattern(gallop, duty=running) == "transverse-gallop"


def test_a_foot_that_did_not_step_is_named_not_a_traceback() -> None:
    with pytest.raises(ValueError, match="no phase offset for RF"):
        footfall_pattern({"LF": 0.5, "RF": None, "LH": 0.0, "RH": 0.5})
    pairs = {"LF": 0.5, "RF": 0.0, "LH": 0.0, "RH": 0.5}
    assert footfall_pattern(pairs, duty={"LF": 0.4, "RF": None, "LH": 0.4, "RH": 0.4}) == "trot"


def test_the_real_dogs_trot_reads_as_a_trot(mocap_dir: Path) -> None:
    from quadsim.mocap.footfalls import analyze_footfalls
    from quadsim.mocap.motion import load_reference

    real = analyze_footfalls(load_reference(mocap_dir / "dog_trot_joint_pos.txt"))
    assert footfall_pattern(real.phase_offset, duty=real.duty_factor) == "trot"


def test_the_real_dogs_walk_reads_as_a_lateral_walk(mocap_dir: Path) -> None:
    from quadsim.mocap.footfalls import analyze_footfalls
    from quadsim.mocap.motion import load_reference

    real = analyze_footfalls(load_reference(mocap_dir / "dog_walk00_joint_pos.txt"))
    assert footfall_pattern(real.phase_offset, duty=real.duty_factor) == "lateral-walk"


@pytest.mark.parametrize("path", SCHEMA_1_FILES, ids=lambda p: p.stem)
def test_schema_1_gait_files_still_load(path: Path) -> None:
    # every key written out, one table per per-leg parameter, and a retired parameter
    assert "schema_version = 1" in path.read_text()
    assert "spine_front_share" in path.read_text()
    params = GaitParams.load(path)
    assert params.graph().footfall_pattern() == PATTERN_OF_GAIT[params.gait], path.name


def test_a_schema_1_file_and_its_schema_2_rewrite_are_the_same_gait(tmp_path: Path) -> None:
    old = GaitParams.load(DATA / "trot-schema1.toml")
    path = tmp_path / "trot.toml"
    old.save(path)
    new = GaitParams.load(path)
    for key, value in old.values.items():
        assert new.values[key] == pytest.approx(value, rel=1e-4, abs=1e-9), key


@pytest.mark.parametrize("name", preset_names())
def test_presets_are_short_and_say_where_they_came_from(name: str) -> None:
    text = (PRESET_DIR / f"{name}.toml").read_text()
    assert len(text.splitlines()) <= 120
    assert "schema_version = 2" in text
    provenance = GaitParams.load(name).provenance
    assert {"source", "date", "commit"} <= set(provenance), provenance
    assert len(provenance) <= 8


def test_gait_files_leave_defaults_out_and_share_values_in_shorthand() -> None:
    gait = GaitParams.load("trot")
    text = gait.to_toml()
    assert "steer_fp_per_s" not in text  # the trot does not steer by foot placement: default
    assert gait["steer_fp_per_s"] == 0.0
    assert "swing_height_m = { fore = " in text  # fore legs share one value, hind another
    assert "h1 = 0.0" not in text  # a wave's silent harmonics are left out
    # no float carries more than 5 significant digits
    numbers = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?", text.split("[provenance]")[0])
    assert numbers
    assert all(len(re.sub(r"e.*|[-.]", "", n).lstrip("0")) <= 5 for n in numbers), numbers


def test_shorthand_keys_and_single_numbers_read_as_per_leg_values(tmp_path: Path) -> None:
    text = GaitParams.load("walk").to_toml()
    text = re.sub(
        r"swing_height_m = .*", "swing_height_m = { fore = 0.05, hind = 0.07, RH = 0.08 }", text
    )
    text = re.sub(r"toe_off_lead_s = .*", "toe_off_lead_s = 0.04", text)
    path = tmp_path / "walk.toml"
    path.write_text(text)
    gait = GaitParams.load(path)
    assert gait.leg("swing_height_m").tolist() == [0.05, 0.05, 0.07, 0.08]
    assert gait.leg("toe_off_lead_s").tolist() == [0.04] * 4
    path.write_text(text.replace("RH = 0.08", "middle = 0.08"))
    with pytest.raises(GaitError, match="no key 'middle'.*fore, hind"):
        GaitParams.load(path)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.sampled_from(preset_names()), st.integers(0, 2**32 - 1))
def test_every_vector_of_the_unit_box_is_a_valid_gait(name: str, seed: int) -> None:
    # the optimizer samples anywhere in the box, and at its faces: every point must build
    template = GaitParams.load(name)
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, len(template.to_unit()))
    x[rng.random(len(x)) < 0.2] = 1.0  # phases at the top of the box wrap onto the circle
    x[rng.random(len(x)) < 0.1] = 0.0
    gait = GaitParams.from_unit(x, template)
    for flat, value in gait.values.items():
        spec = SPEC_BY_NAME[flat.split(".")[0]]
        assert spec.lower <= value <= spec.upper, flat
        if spec.circular:
            assert value < 1.0, flat
    GaitParams.from_dict(tomllib.loads(gait.to_toml()))  # and it survives its file


def test_a_mirrored_phase_near_the_top_of_its_circle_wraps() -> None:
    # issue 33: the left leg's phase plus half a stride landed in (0.999, 1.0)
    template = GaitParams.load("trot")
    x = template.to_unit()
    x[template.free_names().index("swing_start_phase.LF")] = 0.49945
    gait = GaitParams.from_unit(x, template)
    assert gait["swing_start_phase.RF"] == pytest.approx(0.99945)
    # written to 5 significant digits, 0.999996 reads "1.0": the same point of the circle as 0
    x[template.free_names().index("swing_start_phase.LF")] = 0.499996
    text = GaitParams.from_unit(x, template).to_toml()
    assert "RF = 1.0" in text
    assert GaitParams.from_dict(tomllib.loads(text))["swing_start_phase.RF"] == 0.0
    x[template.free_names().index("swing_start_phase.LF")] = 1.0
    assert GaitParams.from_unit(x, template)["swing_start_phase.LF"] == 0.0


def test_every_preset_has_the_footfall_order_of_its_name() -> None:
    assert set(preset_names()) <= set(PATTERN_OF_GAIT)
    for name in filter(_planned_by_hand, preset_names()):
        graph = GaitParams.load(name).graph()
        assert graph.footfall_pattern() == PATTERN_OF_GAIT[name], name
        if name in ("canter", "transverse-gallop", "rotary-gallop"):
            assert not GaitParams.load(name).symmetric, name


def test_a_gait_with_a_lead_goes_on_either_lead_and_the_rest_stay_as_they_are() -> None:
    from quadsim.gaits.schedule import lead_side, on_lead

    # the presets' leads, read from their files: the fore that strikes second leads
    leads = {name: lead_side(GaitParams.load(name)) for name in preset_names()}
    assert leads == {
        "walk": 0,
        "trot": 0,
        "pace": 0,
        "canter": -1,
        "transverse-gallop": 1,
        "rotary-gallop": -1,
    }
    for name, lead in leads.items():
        gait = GaitParams.load(name)
        assert on_lead(gait, 0.0) is gait
        for side in (1.0, -1.0):
            led = on_lead(gait, side)
            if not lead or lead == side:
                assert led is gait, (name, side)
                continue
            # mirrored: the same gait on the other lead, each leg doing its twin's steps
            assert lead_side(led) == side
            assert led.graph().footfall_pattern() == gait.graph().footfall_pattern()
            for key in ("swing_start_phase", "swing_duration_phase", "swing_height_m"):
                assert led[f"{key}.LF"] == gait[f"{key}.RF"], key
                assert led[f"{key}.RH"] == gait[f"{key}.LH"], key
            assert on_lead(led, lead).values == gait.values
    # the automatic gaits: the canter on the turn's inside lead, the gallop on the canter's
    from quadsim.gaits.schedule import GaitSchedule

    for side in (1.0, -1.0):
        sides = [lead_side(g) for g in GaitSchedule.auto(lead=side).gaits]
        assert sides == [0, 0, side, side]


def test_preset_duty_factors_are_in_the_range_of_the_real_dog(mocap_dir) -> None:
    from quadsim.mocap.footfalls import analyze_footfalls
    from quadsim.mocap.motion import load_reference

    # an optimizer-made walk's graph is its aim, not its footfalls: the feet it measures are
    # held to dog_walk03's by tests/test_realism.py (its planned hind duty is 0.43, measured
    # 0.45-0.47)
    if _planned_by_hand("walk"):
        walk_ref = analyze_footfalls(load_reference(mocap_dir / "dog_walk00_joint_pos.txt"))
        walk = GaitParams.load("walk").graph().duty_factor
        ref_duty = np.array(list(walk_ref.duty_factor.values()))
        assert np.all(np.abs(walk - ref_duty.mean()) < 0.1)
    trot = GaitParams.load("trot").graph().duty_factor
    assert np.all((trot >= 0.3) & (trot <= 0.5))


def test_unit_vector_round_trip_and_bounds() -> None:
    gait = GaitParams.load("trot")
    x = gait.to_unit()
    assert np.all((x >= 0) & (x <= 1))
    again = GaitParams.from_unit(x, gait)
    for key, value in gait.values.items():
        assert again.values[key] == pytest.approx(value, abs=1e-12)
    corner = GaitParams.from_unit(np.ones_like(x) * 2.0, gait)  # clipped into the box
    for flat in corner.free_names():
        spec = SPEC_BY_NAME[flat.split(".")[0]]
        # a phase's upper bound is its lower one on the circle
        assert corner[flat] == (spec.lower if spec.circular else spec.upper)


def test_symmetric_gait_mirrors_right_legs_half_a_stride_later() -> None:
    gait = GaitParams.load("walk")
    x = gait.to_unit()
    names = gait.free_names()
    assert not any(n.endswith((".RF", ".RH")) for n in names)
    x[names.index("swing_start_phase.LF")] = 0.1
    moved = GaitParams.from_unit(x, gait)
    assert moved["swing_start_phase.RF"] == pytest.approx(0.6)
    assert moved["swing_height_m.RF"] == moved["swing_height_m.LF"]


def test_with_free_picks_a_subset_and_rejects_unknown_names() -> None:
    gait = GaitParams.load("trot").with_free(["period_s", "swing_height_m"])
    assert gait.free_names() == ["period_s", "swing_height_m.LF", "swing_height_m.LH"]
    assert len(gait.to_unit()) == 3
    with pytest.raises(GaitError, match="unknown free parameter 'wings'"):
        GaitParams.load("trot").with_free(["wings"])


def test_save_and_load_keep_values_and_provenance(tmp_path) -> None:
    gait = GaitParams.load("trot")  # a preset: written to 5 significant digits already
    path = tmp_path / "trot.toml"
    gait.save(path, provenance={"source": "optimizer", "seed": 3, "objective": 1.5})
    back = GaitParams.load(path)
    assert back.values == gait.values
    assert back.provenance["seed"] == 3
    assert "schema_version = 2" in path.read_text()


def test_a_gait_file_without_a_later_parameter_gets_its_default(tmp_path) -> None:
    text = GaitParams.load("rotary-gallop").to_toml()
    line = next(t for t in text.splitlines() if t.startswith("steer_fp_per_s = "))
    path = tmp_path / "old.toml"
    path.write_text(text.replace(line + "\n", ""))
    assert GaitParams.load(path)["steer_fp_per_s"] == 0.0  # steering by foot placement off


def test_a_gait_file_without_a_pull_limit_pulls_as_before(tmp_path) -> None:
    gait = GaitParams.load("canter")
    old_file = (DATA / "trot-schema1.toml").read_text()
    start = old_file.index("[params.stance_pull_max]")
    path = tmp_path / "old.toml"
    path.write_text(old_file[:start] + old_file[old_file.index("[", start + 1) :])
    assert "[params.stance_pull_max]" not in path.read_text()
    old = GaitParams.load(path)
    assert "stance_pull_max" not in gait.to_toml()  # the canter's is the default
    # the bound lifts the limit: the gallops' height control pulls hard at times
    assert old.frames("stance_pull_max") == [PULL_UNLIMITED] * 2 == gait.frames("stance_pull_max")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("period_s = ", "period_x = "), "unknown parameter 'period_x'"),
        (lambda t: t.replace("schema_version = 2", "schema_version = 7"), "schema_version"),
        (lambda t: t.replace("period_s = 0.", "period_s = 9"), "period_s"),
        (lambda t: t + "\n[[[", "not valid TOML"),
    ],
)
def test_malformed_gait_file_names_the_key_and_the_problem(tmp_path, edit, message) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(edit(GaitParams.load("trot").to_toml()))
    with pytest.raises(GaitError, match=message):
        GaitParams.load(path)


def test_unknown_gait_lists_the_known_ones() -> None:
    with pytest.raises(GaitError, match="known gaits: .*trot.*walk"):
        GaitParams.load("moonwalk")


def test_gait_graph_progress_and_offsets() -> None:
    g = GaitGraph(0.5, (0.0, 0.5, 0.5, 0.0), (0.4, 0.4, 0.4, 0.4))
    assert g.swing_progress(0.2).tolist() == pytest.approx([0.5, -1, -1, 0.5])
    assert g.stance_progress(0.2)[1] == pytest.approx((0.2 + 0.1) / 0.6)
    assert g.duty_factor == pytest.approx([0.6] * 4)
    with pytest.raises(GaitError):
        GaitGraph(0.5, (0.0, 0.5, 0.5, 1.2), (0.4, 0.4, 0.4, 0.4))


def test_the_automatic_gaits_play_a_gait_file_in_place_of_its_preset() -> None:
    from dataclasses import replace

    from quadsim.gaits.schedule import GaitSchedule

    trot = GaitParams.load("trot")
    longer = replace(trot, values={**trot.values, "period_s": 0.5})
    schedule = GaitSchedule.auto(use={"trot": longer})
    assert schedule.at(1.8).params["period_s"] == pytest.approx(0.5)  # the trot alone there
    assert GaitSchedule.auto().at(1.8).params["period_s"] == pytest.approx(trot["period_s"])
    with pytest.raises(GaitError, match="the gait used as walk is a trot"):
        GaitSchedule.auto(use={"walk": longer})
    with pytest.raises(GaitError, match="cannot use pace in the automatic gaits; they are walk"):
        GaitSchedule.auto(use={"pace": GaitParams.load("pace")})
