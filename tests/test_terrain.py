"""Terrain: specs, the ground the World builds against its height map, and crossing it."""

from __future__ import annotations

import numpy as np
import pytest
from sim_slots import one_per_core

import quadsim
from quadsim.controller.errors import SimError
from quadsim.controller.sim import World
from quadsim.controller.terrain import START_M, parse_terrain
from quadsim.scripts.cli import main


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("hills:3", "unknown terrain"),
        ("steps:0.1", "needs 2"),
        ("slope:x", "not a number"),
        ("rough:-0.02", "positive"),
        ("steps:0.5:1", "beyond"),
        ("stairs:0.1:2.5", "whole"),
        ("slope:nan", "positive"),
    ],
)
def test_a_bad_terrain_spec_is_refused_naming_the_problem(spec: str, words: str) -> None:
    with pytest.raises(SimError, match=words):
        parse_terrain(spec)


def test_the_cli_refuses_a_bad_terrain_with_status_2(capsys: pytest.CaptureFixture) -> None:
    assert main(["run", "--terrain", "hills:3", "--duration", "1"]) == 2
    err = capsys.readouterr().err
    assert "unknown terrain 'hills'" in err and "Traceback" not in err


@pytest.mark.parametrize("spec", ["steps:0.06:1", "stairs:0.05:4", "slope:10", "rough:0.02"])
def test_the_height_map_is_the_ground_pybullet_collides_with(spec: str) -> None:
    rng = np.random.default_rng(1)
    with World() as world:
        world.add_terrain(parse_terrain(spec), seed=3)
        ground = world.ground_map
        # on the grid's nodes (a heightfield's cells are two triangles, not bilinear) and
        # off the boxes' edges
        on_boxes = spec.startswith(("steps", "stairs"))
        xs = START_M + 0.05 * rng.integers(1, 400, 60) + (0.0123 if on_boxes else 0.0)
        ys = 0.05 * rng.integers(-30, 30, 60)
        checked = 0
        for x, y in zip(xs, ys, strict=True):
            hit = world.client.rayTest([x, y, 3.0], [x, y, -1.0])[0]
            if hit[0] < 0:
                continue
            assert hit[3][2] == pytest.approx(ground.height(x, y), abs=2e-3), (x, y)
            checked += 1
        assert checked == len(xs)
        assert max(ground.height(x, y) for x, y in zip(xs, ys, strict=True)) > 0.01


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_the_trot_crosses_rough_ground_of_two_centimetres(seed: int) -> None:
    _, summary = one_per_core(quadsim.simulate)("trot", 2.0, 20.0, seed=seed, terrain="rough:0.02")
    assert not summary["fell"], summary["fall_time_s"]
    assert summary["mean_speed_mps"] == pytest.approx(2.0, rel=0.2)
    assert summary["distance_m"] > 30.0  # far onto the rough ground (it starts at 1.5 m)
