"""Random and mutated input never gives a traceback: the command line, the profile, push and
plan parsers and the gait-file loader either accept it or name the problem (QuadsimError)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from quadsim import QuadsimError
from quadsim.controller.profile import Profile
from quadsim.controller.simulate import parse_push
from quadsim.controller.terrain import parse_terrain
from quadsim.gaits.params import PRESET_DIR, GaitParams
from quadsim.scripts import cli, run_cmd, stand_cmd
from quadsim.skills.plan import parse_plan
from quadsim.skills.skillfile import PRESET_DIR as SKILL_DIR

FUZZ = settings(max_examples=150, deadline=None, derandomize=True)
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**15), 10**15).map(str),
    st.sampled_from(["", "-", "1e999", "nan", "0x10", "1_000", " 2", "2,5", "∞"]),
)
words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
values = st.one_of(numbers, words)


def _knots(parts: list[tuple[str, str]]) -> str:
    return ",".join(f"{t}:{v}" for t, v in parts)


@FUZZ
@given(st.one_of(words, st.lists(st.tuples(values, values), max_size=5).map(_knots)))
def test_profiles_parse_or_name_the_problem(text: str) -> None:
    try:
        profile = Profile.parse(text, "speed", "m/s")
    except QuadsimError as exc:
        assert str(exc)
    else:
        assert profile(0.0) == profile(0.0)  # a number, not NaN


step_names = st.sampled_from(["walk", "trot", "pace", "sit", "lie-down", "stand-up", "jump"])
plan_steps = st.lists(st.one_of(step_names, values), max_size=4).map(" ".join)


@FUZZ
@given(st.one_of(words, st.lists(plan_steps, max_size=5).map(";".join)))
def test_plans_parse_or_name_the_step_and_problem(text: str) -> None:
    try:
        steps = parse_plan(text)
    except QuadsimError as exc:
        assert "plan" in str(exc)
    else:
        assert steps and all(s.duration_s > 0 or s.kind == "skill" for s in steps)


@FUZZ
@given(
    st.tuples(
        st.one_of(st.sampled_from(["steps", "slope", "rough", "stairs"]), words),
        st.lists(values, max_size=3),
    ).map(lambda kv: ":".join([kv[0], *kv[1]]))
)
def test_terrains_parse_or_name_the_problem(text: str) -> None:
    try:
        terrain = parse_terrain(text)
    except QuadsimError as exc:
        assert "terrain" in str(exc)
    else:  # accepted specs hold finite, positive numbers only
        assert all(0 < v < float("inf") for v in terrain.values)


@FUZZ
@given(st.lists(values, min_size=1, max_size=6).map(":".join))
def test_pushes_parse_or_name_the_problem(text: str) -> None:
    try:
        parse_push(text)
    except QuadsimError as exc:
        assert "push" in str(exc)


class Reached(Exception):
    """The command got past its checks to the simulation."""


OPTIONS = {
    "run": [
        "--gait",
        "--speed",
        "--speed-profile",
        "--turn-rate",
        "--heading-profile",
        "--push",
        "--duration",
        "--seed",
        "--preset",
        "--params",
        "--log",
        "--record",
        "--camera",
    ],
    "stand": ["--duration", "--seed", "--preset", "--log", "--record", "--camera"],
}


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.sampled_from(sorted(OPTIONS)).flatmap(
        lambda cmd: st.tuples(
            st.just(cmd),
            st.lists(st.tuples(st.sampled_from(OPTIONS[cmd]), values), max_size=4),
        )
    )
)
def test_the_command_line_accepts_or_names_the_problem(monkeypatch, capsys, case) -> None:
    def reached(*args: object, **kwargs: object) -> None:
        raise Reached

    monkeypatch.setattr(run_cmd, "simulate", reached)
    monkeypatch.setattr(stand_cmd, "run_episode", reached)
    command, options = case
    argv = [command] + [word for option, value in options for word in (option, value)]
    try:
        status = cli.main(argv)
    except Reached:
        event("reached the simulation")
        return
    except SystemExit as exc:  # argparse: usage and one line, status 2
        event("refused by argparse")
        assert exc.code == 2
        assert "error:" in capsys.readouterr().err
        return
    event("refused by quadsim")
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(f"quadsim {command}: error: "), err
    assert len(err.strip().splitlines()) == 1


def _mutations(files: list[Path]) -> st.SearchStrategy[str]:
    """`files` with a line deleted, a value replaced, a line doubled, or a leg's name or a
    number's start replaced."""
    docs = [f.read_text().splitlines() for f in files]

    def mutate(data: tuple[int, int, int, str]) -> str:
        which, kind, at, text = data
        doc = list(docs[which % len(docs)])
        k = at % len(doc)
        if kind == 0:
            del doc[k]
        elif kind == 1:
            doc[k] = doc[k].split("=")[0] + "= " + text if "=" in doc[k] else text
        elif kind == 2:
            doc.insert(k, doc[k])
        else:
            doc[k] = doc[k].replace("LF", text).replace("0.", text, 1)
        return "\n".join(doc)

    return st.tuples(st.integers(0, 1), st.integers(0, 3), st.integers(0, 200), values).map(mutate)


GAIT_FILES = [PRESET_DIR / f"{name}.toml" for name in ("trot", "rotary-gallop")]


@FUZZ
@given(text=_mutations(GAIT_FILES))
def test_mutated_gait_files_load_or_name_the_problem(text: str, tmp_path_factory) -> None:
    path = Path(tmp_path_factory.mktemp("gait")) / "mutated.toml"
    path.write_text(text)
    try:
        gait = GaitParams.load(path)
    except QuadsimError as exc:
        assert "mutated.toml" in str(exc) or "gait" in str(exc)
    else:  # what loads is a valid gait: it builds its graph and writes a file that loads
        gait.graph()
        GaitParams.from_dict(tomllib.loads(gait.to_toml()))


@FUZZ
@given(text=_mutations([SKILL_DIR / "jump-onto.toml", SKILL_DIR / "jump-off.toml"]))
def test_mutated_jump_files_load_or_name_the_problem(text: str, tmp_path_factory) -> None:
    from quadsim.skills.jump import load_jump
    from quadsim.skills.skillfile import SkillFile

    path = Path(tmp_path_factory.mktemp("jump")) / "mutated.toml"
    path.write_text(text)
    try:
        leap, _ = load_jump(path)
        skill = SkillFile.load(path)
    except QuadsimError as exc:
        assert "mutated.toml" in str(exc), exc
    else:  # what loads round-trips through the unit box and plays as a leap
        once = skill.from_unit(skill.to_unit())  # values rounded to 6 decimals, then stable
        assert once.to_unit() == pytest.approx(skill.to_unit(), abs=1e-5)
        assert once.from_unit(once.to_unit()).doc == once.doc
        assert all(isinstance(v, float | int) for v in (leap.fore_up, leap.settle_s))
