"""`quadsim optimize` and `quadsim reference` command paths (cheap objective, real clips)."""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import pickle
import re
import signal
from pathlib import Path

import pytest

from quadsim.mocap.errors import ReferenceFormatError
from quadsim.optimize import conditions
from quadsim.optimize.cmaes import load_checkpoint
from quadsim.optimize.errors import OptimizeError
from quadsim.scripts import optimize_cmd, reference_cmd
from quadsim.scripts.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="quadsim")
    sp = p.add_subparsers(required=True)
    optimize_cmd.add_parser(sp)
    reference_cmd.add_parser(sp)
    return p.parse_args(argv)


def _opt(out: Path, *extra: str) -> argparse.Namespace:
    return _parse(
        [
            "optimize",
            "--gait",
            "sphere",
            "--objective",
            "sphere",
            "--dim",
            "4",
            "--executor",
            "serial",
            "--out",
            str(out),
            "--quiet",
            *extra,
        ]
    )


def test_optimize_sphere_run_and_resume(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    a = _opt(out, "--evals", "40", "--seed", "3")
    assert a.func(a) == 0
    assert load_checkpoint(out)["evals"] == 40
    a = _opt(out, "--evals", "80", "--seed", "3", "--resume")
    assert a.func(a) == 0
    assert load_checkpoint(out)["evals"] == 80
    assert "best f =" in capsys.readouterr().out
    assert (out / "best.txt").exists() and (out / "history.csv").exists()
    with pytest.raises(OptimizeError, match="--gait trot differs from the run's 'sphere'"):
        b = _parse(
            [
                "optimize",
                "--gait",
                "trot",
                "--objective",
                "sphere",
                "--dim",
                "4",
                "--executor",
                "serial",
                "--out",
                str(out),
                "--resume",
                "--quiet",
            ]
        )
        b.func(b)


def test_a_terminated_run_keeps_its_generations_and_resumes(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    # SIGTERM (kill, timeout, a batch scheduler) mid-generation stops the run as Ctrl-C does
    from quadsim.optimize import testfns

    calls, sphere = {"n": 0}, testfns.shifted_sphere

    def terminated_on_call_20(x, seed: int = 0) -> float:
        calls["n"] += 1
        if calls["n"] == 20:  # in generation 3 of 8 candidates
            os.kill(os.getpid(), signal.SIGTERM)
        return sphere(x, seed)

    monkeypatch.setattr(testfns, "shifted_sphere", terminated_on_call_20)
    before = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "run"
    a = _opt(out, "--evals", "400", "--seed", "3")
    assert a.func(a) == 130
    assert "interrupted: kept 2 complete generation(s) (16 evaluations)" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is the run's only
    assert load_checkpoint(out)["generation"] == 2
    a = _opt(out, "--evals", "40", "--seed", "3", "--resume")
    assert a.func(a) == 0
    assert load_checkpoint(out)["evals"] == 40


def test_optimize_bad_executor_is_a_value_error(tmp_path: Path) -> None:
    a = _opt(tmp_path / "x", "--executor", "threads")
    with pytest.raises(ValueError, match="valid: serial, local"):
        a.func(a)
    a = _opt(tmp_path / "y", "--evals", "0")
    with pytest.raises(OptimizeError):
        a.func(a)
    a = _opt(tmp_path / "z", "--episode-s", "1")
    with pytest.raises(OptimizeError, match="--episode-s must be at least 3 s"):
        a.func(a)


def test_reference_json_and_plot(tmp_path: Path, capsys) -> None:
    clip = DATA / "dog_trot_joint_pos.txt"
    if not clip.is_file():
        pytest.skip("mocap data not available")
    fig = tmp_path / "ff.png"
    a = _parse(["reference", str(clip), "--json", "--plot", str(fig)])
    assert a.func(a) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["duty_factor"]) == {"LF", "RF", "LH", "RH"}
    assert d["periodic"] is True and "CC BY-NC 4.0" in d["attribution"]
    assert fig.stat().st_size > 5000


def test_reference_text_output_and_bad_file(tmp_path: Path, capsys) -> None:
    from quadsim.optimize.reference import synthetic_reference

    m = synthetic_reference(
        0.5,
        {"LH": (0, 0.4), "LF": (0.25, 0.65), "RH": (0.5, 0.9), "RF": (0.75, 0.15)},
        0.4,
        1.0,
        n_strides=3,
    )
    p = tmp_path / "syn.csv"
    p.write_text(
        "".join(
            f"{float(t)!r},{n},{x!r},{y!r},{z!r}\n"
            for i, t in enumerate(m.t)
            for n, (x, y, z) in zip(m.marker_names, m.markers[i].tolist(), strict=True)
        )
    )
    a = _parse(["reference", str(p)])
    assert a.func(a) == 0
    out = capsys.readouterr().out
    assert "touchdown order: LH -> LF -> RH -> RF" in out
    bad = _parse(["reference", str(tmp_path / "missing.txt")])
    with pytest.raises(ReferenceFormatError, match="missing.txt"):
        bad.func(bad)


@pytest.mark.slow
def test_real_gait_run_writes_the_best_gait_and_its_video(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    import imageio.v2 as imageio

    from quadsim.gaits.params import GaitParams
    from quadsim.optimize import problem

    monkeypatch.setattr(problem, "VIDEO_S", 2.0)  # 2 s show it is written; 10 s cost 25 s

    out = tmp_path / "run"
    argv = [
        "optimize",
        "--gait",
        "trot",
        "--free",
        "period_s,swing_height_m",
        "--popsize",
        "2",
        "--executor",
        "serial",
        "--out",
        str(out),
        "--quiet",
        "--speed",
        "1.8",
    ]
    a = _parse([*argv, "--evals", "2", "--episode-s", "3", "--video"])
    assert a.func(a) == 0
    best = GaitParams.load(out / "best_trot.toml")
    assert best.provenance["source"] == "optimizer" and best.provenance["evaluations"] == 2
    command = best.provenance["command"]
    assert command.startswith("quadsim optimize --gait trot --free period_s,swing_height_m")
    assert "--episode-s 3.0" in command and "--evals 2" in command
    assert command.count("--seed") == 1 and command.endswith(f"--seed 0 --out {out}")
    assert best.provenance["date"] and best.provenance["objective"] > 0
    assert load_checkpoint(out)["config"]["meta"]["episode_s"] == 3.0
    # beside the luckiest evaluation, the search's mean, which noisy evaluations favour
    mean = GaitParams.load(out / "mean_trot.toml")
    assert mean.provenance["command"] == command and "objective" not in mean.provenance
    assert "mean" in mean.provenance["point"] and "best" in best.provenance["point"]
    assert mean["period_s"] != best["period_s"] or mean["swing_height_m"] != best["swing_height_m"]
    # a resumed run scores its candidates as before, or not at all
    for changed, named in (
        (["--episode-s", "4"], "--episode-s 4.0 differs from the run's 3.0"),
        (["--speed", "2.0"], "--speed 2.0 differs from the run's 1.8"),
    ):
        a = _parse([*argv[:-2], *changed, "--evals", "4", "--resume"])
        with pytest.raises(OptimizeError, match=re.escape(named)):
            a.func(a)
    a = _parse([*argv[:-2], "--speed", "9", "--out", str(tmp_path / "fast")])
    with pytest.raises(OptimizeError, match="outside the trot band 1-2.5 m/s"):
        a.func(a)
    with imageio.get_reader(out / "best_trot.mp4") as video:
        frames = sum(1 for _ in video)
    assert frames >= 0.95 * problem.VIDEO_S * 30
    assert "video of the best gait" in capsys.readouterr().out


def _history(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "history.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_the_budget_is_exact_even_below_one_generation(tmp_path: Path) -> None:
    for budget in (1, 5, 11):  # the sphere's population is 8 in 4 dimensions
        out = tmp_path / f"b{budget}"
        a = _opt(out, "--evals", str(budget))
        assert a.func(a) == 0
        rows = _history(out)
        assert int(rows[-1]["evals"]) == budget == load_checkpoint(out)["evals"]
        assert [int(r["popsize"]) for r in rows][-1] == budget % 8 or budget % 8 == 0
    # a run cut short by its budget samples the cut generation again, whole, when resumed
    out = tmp_path / "b5"
    a = _parse(["optimize", "--resume", str(out), "--evals", "21", "--quiet"])
    assert a.func(a) == 0
    rows = _history(out)
    assert [int(r["popsize"]) for r in rows] == [5, 8, 8]
    assert [int(r["evals"]) for r in rows] == [5, 13, 21]


def test_resume_needs_only_the_run_directory_and_names_each_difference(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    a = _opt(out, "--evals", "16", "--seed", "3", "--sigma", "0.3")
    assert a.func(a) == 0
    capsys.readouterr()
    # the saved arguments alone continue the run, with a new budget
    assert main(["optimize", "--resume", str(out), "--evals", "32", "--quiet"]) == 0
    rows = _history(out)
    assert [int(r["generation"]) for r in rows] == [1, 2, 3, 4]
    assert load_checkpoint(out)["config"]["sigma0"] == 0.3
    capsys.readouterr()
    # arguments given again must agree; each difference is named, exit status 2
    status = main(["optimize", "--resume", str(out), "--seed", "4", "--sigma", "0.3", "--dim", "5"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "--seed 4 differs from the run's 3" in err and "--dim 5 differs from the run's 4" in err
    assert "--sigma" not in err  # the same value is no difference
    assert main(["optimize", "--resume", str(tmp_path / "nothing")]) == 2
    assert "not an optimization run directory" in capsys.readouterr().err
    assert main(["optimize", "--evals", "3"]) == 2
    assert "needs --gait or --skill, and --out" in capsys.readouterr().err


def test_status_tells_where_a_run_stands(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    a = _opt(out, "--evals", "12", "--seed", "1")
    assert a.func(a) == 0
    capsys.readouterr()
    assert main(["optimize", "--status", str(out)]) == 0
    text = capsys.readouterr().out
    best = min(float(r["best_f"]) for r in _history(out))
    assert "finished (budget)" in text and "generations 2, evaluations 12 of 12" in text
    assert f"best f {best:.6g}" in text and "fell 0, failed 0" in text and "min" in text
    # a larger budget: the same run is not finished any more
    assert main(["optimize", "--resume", str(out), "--evals", "20", "--quiet"]) == 0
    state = load_checkpoint(out)
    state["stop_reason"], state["evals"] = "", 16  # as if stopped after 16 of the 20
    (out / "checkpoint.pkl").write_bytes(pickle.dumps(state))
    capsys.readouterr()
    assert main(["optimize", "--status", str(out)]) == 0
    text = capsys.readouterr().out
    assert "not finished" in text and f"--resume {out}" in text and "16 of 20" in text
    assert main(["optimize", "--status", str(tmp_path)]) == 2


def test_a_missing_or_malformed_reference_stops_before_any_evaluation(
    tmp_path: Path, capsys
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("1.0, 2.0\nnot numbers\n")
    for reference in (tmp_path / "missing.txt", bad):
        out = tmp_path / f"run_{reference.stem}"
        argv = ["optimize", "--gait", "trot", "--reference", str(reference), "--evals", "2"]
        assert main([*argv, "--out", str(out), "--executor", "serial", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and reference.name in err
        assert not (out / "history.csv").exists()


def test_a_gait_file_is_saved_as_an_absolute_path_so_a_resume_may_run_elsewhere(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir(), elsewhere.mkdir()
    monkeypatch.chdir(here)
    argv = ["optimize", "--gait", "my.toml", "--objective", "sphere", "--dim", "4"]
    assert main([*argv, "--executor", "serial", "--evals", "8", "--out", "run", "--quiet"]) == 0
    assert json.loads((here / "run/config.json").read_text())["gait"] == str(here / "my.toml")
    monkeypatch.chdir(elsewhere)
    run_dir = str(here / "run")
    # the same file named from another directory is the same run; another file is not
    assert main(["optimize", "--resume", run_dir, "--gait", "../here/my.toml", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["optimize", "--resume", run_dir, "--gait", "my.toml", "--evals", "16"]) == 2
    err = capsys.readouterr().err
    assert f"--gait my.toml differs from the run's '{here / 'my.toml'}'" in err
    assert main(["optimize", "--resume", run_dir, "--evals", "16", "--quiet"]) == 0
    assert [int(r["generation"]) for r in _history(here / "run")] == [1, 2]


def test_conditions_are_episodes_the_gait_must_also_stay_up_in(monkeypatch) -> None:
    import numpy as np

    from quadsim.controller.terrain import parse_terrain
    from quadsim.gaits.params import GaitParams
    from quadsim.optimize import sim_eval
    from quadsim.optimize.objective import fall_penalty

    template = GaitParams.load("trot").with_free(["period_s"])
    x = np.asarray(template.to_unit())
    config = {"template": template, "reference": None, "duration_s": 3.0, "speed_mps": 2.0}
    plain = sim_eval.evaluate(x, 0, config)
    # the preset trot turns at 30 deg/s: a condition it stays up in leaves the score alone
    turning = sim_eval.evaluate(x, 0, {**config, "conditions": ("turn",)})
    assert not plain.fell and not turning.fell and turning.total == plain.total
    # one it falls in after 4 of its 10 s: a penalty above any gait that stays up, below
    # any fall in the scored episode, and a fall in the history's n_fell
    monkeypatch.setattr(sim_eval, "condition_survival", lambda *a: 4.0)
    fallen = sim_eval.evaluate(x, 0, {**config, "conditions": ("rough", "band")})
    assert fallen.fell and fallen.total == pytest.approx(plain.total + fall_penalty(4, 10, 1e3))
    assert 1e3 < fallen.total < 1e4
    # every condition runs, the penalty graded by the mean time the dog stayed up in them
    monkeypatch.setattr(sim_eval, "condition_survival", lambda p, name, *a: 4.0 * (name == "hill"))
    some = sim_eval.evaluate(x, 0, {**config, "conditions": ("steps", "hill", "rough")})
    assert some.total == pytest.approx(plain.total + fall_penalty(4 / 3, 10, 1e3))
    for name, spec in conditions.TERRAIN_OF_CONDITION.items():
        assert name in conditions.CONDITIONS and parse_terrain(spec).kind in spec


def test_a_terrain_crossed_too_slowly_counts_as_time_lost(monkeypatch) -> None:
    from types import SimpleNamespace

    from quadsim.gaits.params import GaitParams
    from quadsim.optimize import sim_eval

    walk, asked = GaitParams.load("walk"), []

    def crossing(params, speed, duration, **kwargs):  # stays up at 0.4 m/s
        asked.append(kwargs.get("terrain"))
        return SimpleNamespace(status="ok", fall_time_s=None), {"mean_speed_mps": 0.4}

    monkeypatch.setattr(sim_eval, "simulate", crossing)
    # 0.4 m/s against a floor of 0.8 x 1.0 m/s: half the episode lost, on the terrain only
    assert sim_eval.condition_survival(walk, "hill", 1.0, 0) == pytest.approx(5.0)
    assert sim_eval.condition_survival(walk, "steps", 0.4, 0) == conditions.CONDITION_S
    assert sim_eval.condition_survival(walk, "turn", 1.0, 0) == conditions.CONDITION_S
    assert asked == ["slope:10", "steps:0.06:1", None]
    assert sim_eval.parse_conditions("all") == conditions.CONDITIONS
    assert sim_eval.parse_conditions("band, turn,band") == ("band", "turn")
    for bad in ("turn,fly", ",", "hills"):
        with pytest.raises(OptimizeError, match="choose from turn, rough, band, ramp"):
            sim_eval.parse_conditions(bad)


def test_the_turn_condition_is_as_long_as_the_tests_turn_and_its_fall_is_scaled(
    monkeypatch,
) -> None:
    from types import SimpleNamespace

    from quadsim.gaits.params import GaitParams
    from quadsim.optimize import sim_eval

    lengths = []

    def falls_at_6_s(params, speed, duration, **kwargs):
        lengths.append(duration)
        return SimpleNamespace(status="fell", fall_time_s=6.0), {}

    monkeypatch.setattr(sim_eval, "simulate", falls_at_6_s)
    trot = GaitParams.load("trot")
    # a long-striding trot fell in the tests' 20 s turn after 10 s (the notebook, 2026-12-07);
    # a fall's time is scaled to the 10 s of the other conditions
    assert sim_eval.condition_survival(trot, "turn:45", 2.0, 0) == pytest.approx(3.0)
    assert lengths == [20.0]
    assert sim_eval.condition_survival(trot, "rough", 2.0, 0) == pytest.approx(6.0)
    assert lengths == [20.0, conditions.CONDITION_S]


def test_the_push_condition_pushes_from_every_side_over_the_seeds(monkeypatch) -> None:
    from types import SimpleNamespace

    from quadsim.gaits.params import GaitParams
    from quadsim.optimize import sim_eval

    # the walk and trot between the robustness floor and goal (20, 30 N s), the rest at the goal
    assert conditions.push_impulse_ns("trot") == 25.0
    assert conditions.push_impulse_ns("rotary-gallop") == 20.0
    for gait in ("walk", "rotary-gallop"):
        directions = set()
        for seed in range(8):
            pushes = sim_eval.condition_pushes(seed, gait)
            assert [p.start for p in pushes] == list(conditions.PUSH_TIMES_S)
            for p in pushes:
                assert p.force[2] == 0.0 and p.link == "chest"
                impulse = math.hypot(*p.force) * p.duration
                assert impulse == pytest.approx(conditions.push_impulse_ns(gait))
                directions.add(round(math.degrees(math.atan2(p.force[1], p.force[0]))) % 360)
        assert directions == set(range(0, 360, 45))
    # the episode is the gait at its speed with those pushes, and a fall's time is its score
    asked = []

    def pushed(params, speed, duration, **kwargs):
        asked.append(kwargs["pushes"])
        return SimpleNamespace(status="fell", fall_time_s=3.5), {}

    monkeypatch.setattr(sim_eval, "simulate", pushed)
    assert sim_eval.condition_survival(GaitParams.load("walk"), "push", 1.0, 5) == 3.5
    assert asked == [sim_eval.condition_pushes(5, "walk")]


def test_the_turn_and_push_conditions_take_a_rate_and_an_impulse(monkeypatch) -> None:
    from types import SimpleNamespace

    from quadsim.gaits.params import GaitParams
    from quadsim.optimize import sim_eval

    asked = []

    def stays_up(params, speed, duration, **kwargs):
        asked.append(kwargs)
        return SimpleNamespace(status="ok", fall_time_s=None), {}

    monkeypatch.setattr(sim_eval, "simulate", stays_up)
    trot = GaitParams.load("trot")
    # a turn of the given rate, left on even seeds and right on odd, as the plain turn
    for seed, rate in ((0, 45.0), (1, -45.0)):
        assert sim_eval.condition_survival(trot, "turn:45", 2.0, seed) == conditions.CONDITION_S
        assert asked.pop()["turn_rate_dps"] == rate
    sim_eval.condition_survival(trot, "turn", 2.0, 0)
    assert asked.pop()["turn_rate_dps"] == conditions.TURN_RATE_DPS
    # pushes of the given impulse from the plain condition's sides
    sim_eval.condition_survival(trot, "push:30", 2.0, 3)
    pushes = asked.pop()["pushes"]
    plain = sim_eval.condition_pushes(3, "trot")
    for push, same_side in zip(pushes, plain, strict=True):
        assert math.hypot(*push.force) * push.duration == pytest.approx(30.0)
        assert [f * 25.0 / 30.0 for f in push.force] == pytest.approx(same_side.force)
    assert sim_eval.parse_conditions("turn:45, push:30,hill") == ("turn:45", "push:30", "hill")
    for bad, says in (
        ("hill:3", "'hill' takes no value; only turn:VALUE, push:VALUE do"),
        ("turn:fast", r"turn:fast: the value must be in \(0, 180\] deg/s"),
        ("turn:0", r"\(0, 180\] deg/s"),
        ("push:500", r"\(0, 100\] N s"),
        ("spin:3", "unknown condition 'spin'; choose from turn, rough"),
    ):
        with pytest.raises(OptimizeError, match=says):
            sim_eval.parse_conditions(bad)


def test_the_stop_condition_sits_and_goes_on_in_the_gait(monkeypatch) -> None:
    from types import SimpleNamespace

    from quadsim.gaits.params import GaitParams
    from quadsim.optimize import sim_eval
    from quadsim.skills import scene
    from quadsim.skills.scene import planned_duration

    walk, played = GaitParams.load("walk"), []

    def falls_at_4(steps, **kwargs):
        played.append((steps, kwargs["use"]))
        return SimpleNamespace(status="fell", fall_time_s=4.0), {}

    monkeypatch.setattr(scene, "play_plan", falls_at_4)
    survived = sim_eval.condition_survival(walk, "stop", 1.2, 0)
    ((steps, use),) = played
    # the gait, a stop and a sit, then the gait again from standing (the plans test's walk)
    assert [(s.kind, s.name, s.speed_mps) for s in steps] == [
        ("gait", "walk", 1.2),
        ("skill", "sit", 0.0),
        ("gait", "walk", 1.2),
    ]
    assert use == {"walk": walk}
    assert survived == pytest.approx(conditions.CONDITION_S * 4.0 / planned_duration(steps))
