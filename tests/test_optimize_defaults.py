"""The optimizer from its defaults: generation-1 survival, n_fell, the objectives, multi-start."""

from __future__ import annotations

import csv
import functools
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from quadsim.gaits.errors import GaitError
from quadsim.gaits.params import GaitParams
from quadsim.optimize import sim_eval, testfns
from quadsim.optimize.cmaes import RunConfig, load_checkpoint, resume, run
from quadsim.optimize.objective import (
    OBJECTIVES,
    FootfallTargets,
    evaluate_log,
    fall_penalty,
    footfall_terms,
)
from quadsim.optimize.problem import STYLE_FREE, free_names
from quadsim.scripts.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"
TROT = DATA / "dog_trot_joint_pos.txt"
needs_clips = pytest.mark.skipif(not TROT.is_file(), reason="dog mocap not in ../shared/data")


def _history(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "history.csv", newline="") as f:
        return list(csv.DictReader(f))


# --------------------------------------------------------------------------- survival


@needs_clips
@pytest.mark.slow
def test_most_of_generation_one_stays_up_from_the_defaults(tmp_path: Path) -> None:
    """Default step and free parameters keep >= 70% of generation 1 up; the old defaults
    (sigma 0.19 over every parameter) fell nearly always. 6 candidates x 2 seeds, 4 s."""
    common = ["optimize", "--gait", "trot", "--reference", str(TROT), "--popsize", "6"]
    common += ["--evals", "12", "--episode-s", "4", "--workers", "2", "--seed", "3", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "new")]) == 0
    first = _history(tmp_path / "new")[0]
    assert int(first["evals"]) == 12  # two evaluation seeds a candidate by default
    assert int(first["n_fell"]) <= 0.3 * 12
    config = json.loads((tmp_path / "new/config.json").read_text())
    assert config["sigma0"] == 0.06 and config["seeds_per_candidate"] == 2
    assert len(config["free_names"]) == 32
    old = ["--sigma", "0.19", "--free", "all", "--out", str(tmp_path / "old")]
    assert main([*common, *old]) == 0
    assert int(_history(tmp_path / "old")[0]["n_fell"]) >= 0.7 * 12


@needs_clips
def test_n_fell_counts_the_evaluations_whose_dog_fell(tmp_path: Path) -> None:
    # a wide step over every parameter: some of the 6 candidates fall, some do not
    template = GaitParams.load("trot")
    config = {"template": template, "reference": str(TROT), "duration_s": 3.0}
    fn = functools.partial(sim_eval.evaluate, config=config)
    scores: list[np.ndarray] = []
    cfg = RunConfig(
        dim=len(template.free_names()),
        gait="trot",
        free_names=tuple(template.free_names()),
        x0=tuple(np.clip(template.to_unit(), 0, 1)),
        sigma0=0.08,
        popsize=6,
        max_evals=6,
        seed=3,
    )
    run(fn, cfg, tmp_path / "r", quiet=True, callback=lambda g, X, f: scores.append(f))
    fell = int(np.sum(scores[0] >= fall_penalty(3.0, 3.0)))  # a fall scores the penalty
    rows = _history(tmp_path / "r")
    assert int(rows[0]["n_fell"]) == fell
    assert 0 < fell < 6, "the test wants both kinds of candidate"


def test_the_default_free_parameters_are_the_style_set() -> None:
    trot = GaitParams.load("trot")
    style = free_names(trot, None)
    assert {n.split(".")[0] for n in style.free_names()} == set(STYLE_FREE)
    assert len(style.free_names()) == 32  # symmetric: the left legs' values
    # LH's lift-off is the phase reference; every other leg's phase moves
    assert "swing_start_phase.LH" not in style.free_names()
    gallop = free_names(GaitParams.load("transverse-gallop"), "style").free_names()
    phases = [n for n in gallop if n.startswith("swing_start_phase")]
    assert phases == ["swing_start_phase.LF", "swing_start_phase.RF", "swing_start_phase.RH"]
    assert free_names(trot, "all").free_names() == trot.free_names()
    assert free_names(trot, "period_s,swing_height_m").free_names() == [
        "period_s",
        "swing_height_m.LF",
        "swing_height_m.LH",
    ]


def test_a_named_set_combines_with_more_names() -> None:
    trot = GaitParams.load("trot")
    style = set(free_names(trot, "style").free_names())
    more = free_names(trot, "style,turn_lean,kp_yaw_Nm_per_rad,period_s").free_names()
    assert len(more) == len(set(more))  # period_s, in the set too, is free once
    extra = {n.split(".")[0] for n in set(more) - style}
    assert extra == {"turn_lean", "kp_yaw_Nm_per_rad"}
    assert style < set(more) and "swing_start_phase.LH" not in more


def test_an_unknown_free_name_is_refused_with_the_names_and_the_sets() -> None:
    with pytest.raises(GaitError, match="unknown free parameter 'wings'") as refused:
        free_names(GaitParams.load("trot"), "style,wings")
    message = str(refused.value)
    assert "period_s" in message and "style" in message and "all" in message


# --------------------------------------------------------------------------- objectives


def _contacts(
    period: float, swing: dict[str, tuple[float, float]], dt: float = 0.001, span: float = 6.0
) -> tuple[np.ndarray, np.ndarray]:
    """Contacts (T, 4) of a gait graph: each foot in stance outside its swing interval."""
    t = np.arange(0.0, span, dt)
    phase = (t / period) % 1.0
    cols = []
    for foot in ("LF", "RF", "LH", "RH"):
        a, b = swing[foot]
        cols.append(~(((phase - a) % 1.0) < ((b - a) % 1.0)))
    return t, np.stack(cols, axis=1)


TROT_SWING = {"LF": (0.9, 0.4), "RF": (0.4, 0.9), "LH": (0.5, 0.0), "RH": (0.0, 0.5)}
TROT_TARGETS = FootfallTargets(0.5, (0.5, 0.5, 0.5, 0.5), (0.4, 0.9, 0.0, 0.5))


def test_footfall_terms_measure_period_duty_and_phase() -> None:
    t, c = _contacts(0.5, TROT_SWING)
    same = footfall_terms(t, c, TROT_TARGETS)
    assert same["f_T"] < 0.01 and same["f_df"] < 0.01 and same["f_ph"] < 0.01
    t, c = _contacts(0.6, TROT_SWING)  # 20% slower strides
    assert footfall_terms(t, c, TROT_TARGETS)["f_T"] == pytest.approx(0.2, abs=0.01)
    shorter = {f: (a, (b - 0.1) % 1.0) for f, (a, b) in TROT_SWING.items()}
    t, c = _contacts(0.5, shorter)  # every stance 0.1 longer, touchdowns all 0.1 earlier
    terms = footfall_terms(t, c, TROT_TARGETS)
    assert terms["f_df"] == pytest.approx(0.1, abs=0.01)
    assert terms["f_ph"] < 0.01  # relative to LH, the phases do not move
    late_lf = dict(TROT_SWING, LF=(0.0, 0.5))  # LF lands 0.1 of a stride later
    t, c = _contacts(0.5, late_lf)
    assert footfall_terms(t, c, TROT_TARGETS)["f_ph"] == pytest.approx(0.1 / 4, abs=0.005)
    t = np.arange(0.0, 3.0, 0.001)  # standing: no stride to measure
    standing = footfall_terms(t, np.ones((len(t), 4), dtype=bool), TROT_TARGETS)
    assert standing["f_T"] == 1.0 and standing["f_ph"] == 0.5 and standing["f_ld"] == 1.0


def test_a_foot_landing_twice_a_stride_is_counted() -> None:
    t, c = _contacts(0.5, TROT_SWING)
    assert footfall_terms(t, c, TROT_TARGETS)["f_ld"] < 0.02
    phase = (t / 0.5) % 1.0
    lifted = c.copy()  # RH lifts mid-stance for 40 ms (longer than a bounce) and lands again
    lifted[(phase > 0.70) & (phase < 0.78), 3] = False
    terms = footfall_terms(t, lifted, TROT_TARGETS)
    assert terms["f_ld"] == pytest.approx(1.0 / 4, abs=0.02)  # one foot of four, once more
    bounce = c.copy()  # a gap under 30 ms is a bounce as it lands, not a landing
    bounce[(phase > 0.70) & (phase < 0.74), 3] = False  # 20 ms
    assert footfall_terms(t, bounce, TROT_TARGETS)["f_ld"] < 0.02


def test_the_objectives_weigh_the_terms_they_name() -> None:
    assert OBJECTIVES["paper"].T == OBJECTIVES["paper"].df == OBJECTIVES["paper"].ph == 0
    assert OBJECTIVES["footfalls"].d == OBJECTIVES["footfalls"].h == 0
    assert OBJECTIVES["footfalls"].v == OBJECTIVES["paper"].v  # it still goes where told
    both = OBJECTIVES["both"]
    assert (both.d, both.T) == (OBJECTIVES["paper"].d, OBJECTIVES["footfalls"].T)
    # a log of a dog moving at 1 m/s with the trot graph's contacts
    t, c = _contacts(0.6, TROT_SWING, dt=0.005)
    log = {
        "t": t,
        "base_pos": np.stack([t, 0 * t, 0 * t + 0.5], axis=1),
        "base_quat": np.tile([0.0, 0.0, 0.0, 1.0], (len(t), 1)),
        "foot_contact": c,
    }
    totals = {}
    for name, w in OBJECTIVES.items():
        o = evaluate_log(log, v_cmd=(1.0, 0.0), weights=w, footfalls=TROT_TARGETS)
        terms = o.terms()
        assert terms["f_T"] == pytest.approx(0.2, abs=0.01)
        assert o.total == pytest.approx(
            w.v * terms["f_v"]
            + w.r * terms["f_r"]
            + w.T * terms["f_T"]
            + w.df * terms["f_df"]
            + w.ph * terms["f_ph"]
            + w.ld * terms["f_ld"]
        )
        totals[name] = o.total
    assert totals["paper"] < 1e-6 < totals["footfalls"] == pytest.approx(totals["both"])
    plain = evaluate_log(log, v_cmd=(1.0, 0.0))
    assert "f_T" not in plain.terms() and "f_T" in plain.skipped


@needs_clips
def test_the_footfall_targets_of_the_trot_clip_are_the_real_dogs() -> None:
    got = sim_eval.reference_footfalls(str(TROT), "", sim_eval.dog_leg_length())
    assert got.period_s == pytest.approx(0.66, abs=0.01)  # DESIGN.md: Froude-scaled trot
    assert 0.45 <= got.duty_factor[0] <= 0.49 and 0.33 <= got.duty_factor[2] <= 0.37
    lf, rh = got.phase_offset[0], got.phase_offset[3]
    assert 0.05 <= (rh - lf) % 1.0 <= 0.15  # the fore foot lands before its diagonal hind


@needs_clips
def test_the_objective_option_is_saved_and_in_the_provenance(tmp_path: Path) -> None:
    out = tmp_path / "ff"
    argv = ["optimize", "--gait", "trot", "--reference", str(TROT), "--objective", "footfalls"]
    argv += ["--free", "period_s,swing_height_m", "--popsize", "2", "--seeds-per-candidate", "1"]
    argv += ["--evals", "2", "--episode-s", "3", "--executor", "serial", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["meta"]["objective"] == "footfalls"
    best = GaitParams.load(out / "best_trot.toml")
    assert "--objective footfalls" in best.provenance["command"]
    row = _history(out)[0]
    assert {"f_T", "f_df", "f_ph", "f_ld", "f_d"} <= set(row)
    # scored without f_d and f_h: the total is the velocity, heading and footfall terms
    w = OBJECTIVES["footfalls"]
    v, r = float(row["f_v"]), float(row["f_r"])
    ff = w.T * float(row["f_T"]) + w.df * float(row["f_df"]) + w.ph * float(row["f_ph"])
    ff += w.ld * float(row["f_ld"])
    assert float(row["gen_best_f"]) == pytest.approx(w.v * v + w.r * r + ff)


# --------------------------------------------------------------------------- multi-start


def _starts_cfg(**kw) -> RunConfig:
    base = dict(dim=4, gait="sphere", seed=2, max_evals=8 * 9, starts=3, start_radius=0.2)
    base.update(kw)
    return RunConfig(x0=(0.6, 0.6, 0.6, 0.6), **base)


def test_multi_start_runs_each_start_from_its_own_offset(tmp_path: Path) -> None:
    means: dict[int, np.ndarray] = {}
    r = run(
        testfns.shifted_sphere,
        _starts_cfg(),
        tmp_path / "m",
        quiet=True,
        callback=lambda g, X, f: means.setdefault(g, X.mean(axis=0)),
    )
    starts = [int(row["restart"]) for row in r.history]
    assert starts == [0] * 3 + [1] * 3 + [2] * 3  # an equal share of the budget each
    firsts = [means[1], means[4], means[7]]  # the first generation of each start
    for m in firsts:
        assert np.all(np.abs(m - 0.6) < 0.2 + 0.1)  # near the start point plus U(-r, r)
    assert min(np.abs(firsts[i] - firsts[j]).max() for i, j in ((0, 1), (1, 2))) > 0.02
    assert r.best_f == min(row["gen_best_f"] for row in r.history)  # the best of all starts


def test_an_interrupted_multi_start_run_resumes_as_if_never_stopped(tmp_path: Path) -> None:
    full: dict[int, np.ndarray] = {}
    run(
        testfns.shifted_sphere,
        _starts_cfg(),
        tmp_path / "a",
        quiet=True,
        callback=lambda g, X, f: full.setdefault(g, X.copy()),
    )
    testfns.reset_calls()  # Ctrl-C in generation 5, in the second start
    fn = functools.partial(testfns.interrupt_after, n=4 * 8 + 3)
    part = run(fn, _starts_cfg(), tmp_path / "b", quiet=True)
    assert part.interrupted and load_checkpoint(tmp_path / "b")["generation"] == 4
    rest: dict[int, np.ndarray] = {}
    resume(
        tmp_path / "b",
        testfns.shifted_sphere,
        quiet=True,
        callback=lambda g, X, f: rest.setdefault(g, X.copy()),
    )
    assert sorted(rest) == list(range(5, 10))
    for g, X in rest.items():
        np.testing.assert_array_equal(X, full[g])
    assert load_checkpoint(tmp_path / "b")["history"] == load_checkpoint(tmp_path / "a")["history"]


def test_multi_start_from_the_command_line(tmp_path: Path, capsys) -> None:
    argv = ["optimize", "--gait", "sphere", "--objective", "sphere", "--dim", "4", "--quiet"]
    argv += ["--executor", "serial", "--evals", "48", "--starts", "2", "--start-radius", "0.2"]
    assert main([*argv, "--out", str(tmp_path / "m")]) == 0
    config = json.loads((tmp_path / "m/config.json").read_text())
    assert (config["starts"], config["start_radius"]) == (2, 0.2)
    assert [int(r["restart"]) for r in _history(tmp_path / "m")] == [0, 0, 0, 1, 1, 1]
    capsys.readouterr()
    assert main([*argv, "--ipop", "1", "--out", str(tmp_path / "both")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "cannot also restart by IPOP" in err


@needs_clips
def test_new_runs_save_their_free_set_and_older_runs_resume_with_all(tmp_path: Path) -> None:
    argv = ["optimize", "--gait", "trot", "--reference", str(TROT), "--popsize", "2"]
    argv += ["--seeds-per-candidate", "1", "--episode-s", "3", "--executor", "serial", "--quiet"]
    new, old = tmp_path / "new", tmp_path / "old"
    assert main([*argv, "--evals", "2", "--out", str(new)]) == 0
    assert json.loads((new / "config.json").read_text())["meta"]["free"] == "style"
    assert "--free style" in GaitParams.load(new / "best_trot.toml").provenance["command"]
    # a run from before `style` (no free set saved) freed every parameter; it resumes so
    assert main([*argv, "--evals", "2", "--free", "all", "--out", str(old)]) == 0
    config = json.loads((old / "config.json").read_text())
    config["meta"]["free"] = None
    (old / "config.json").write_text(json.dumps(config))
    state = load_checkpoint(old)
    state["config"]["meta"]["free"] = None
    (old / "checkpoint.pkl").write_bytes(pickle.dumps(state))
    assert main(["optimize", "--resume", str(old), "--evals", "4", "--quiet"]) == 0
    every = len(GaitParams.load("trot").free_names())  # all the symmetry leaves free
    assert load_checkpoint(old)["evals"] == 4 and load_checkpoint(old)["config"]["dim"] == every
