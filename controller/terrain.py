"""Terrain ahead of the dog, from a one-line spec: what `quadsim run --terrain` builds.

    steps:H:D    blocks H m high and D m long, every other D m, up and down again
    slope:DEG    a hill: a ramp up at DEG degrees, a plateau, a ramp down
    rough:A      ground of random heights, +-A m about its mean (seeded)
    stairs:H:N   N steps of H m up, then a landing

The terrain starts START_M ahead of the dog (it starts on flat ground, facing +x) and runs
LENGTH_M along x, WIDTH_M wide. Geometry only: the World builds it (boxes, a heightfield).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from quadsim.controller.errors import SimError
from quadsim.controller.heightgrid import HeightGrid

START_M = 1.5  # [m] flat ground before the terrain
LENGTH_M = 120.0  # [m] a trot at 2 m/s goes 40 m in 20 s, a gallop 90
WIDTH_M = 4.0  # [m]
CELL_M = 0.05  # [m] the heightfield's grid
TREAD_M = 0.4  # [m] a stair's depth
RAMP_IN_M = 2.0  # [m] rough ground reaches its full amplitude over this length
SMOOTH_M = 0.4  # [m] the lie of the land: heights averaged over squares this wide
SMOOTH_CELL_M = 0.05  # [m] the grid they are averaged on
GRID_M = 0.02  # [m] the grid a swinging foot reads the ground ahead of it on
# the bounds a dog of 0.5 m legs could meet, and a typo could exceed
MAX_STEP_M, MAX_SLOPE_DEG, MAX_ROUGH_M, MAX_STAIRS = 0.3, 40.0, 0.1, 200
USAGE = "steps:H:D, slope:DEG, rough:A or stairs:H:N (H, D, A in m, DEG in degrees)"


def platform_box(
    x_start: float, length: float, height: float, width: float
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """The box (centre, half extents [m]) of a platform across the dog's path (along +x from
    x = `x_start`, centred on y = 0, standing on flat ground)."""
    return (x_start + 0.5 * length, 0.0, 0.5 * height), (0.5 * length, 0.5 * width, 0.5 * height)


class GroundMap:
    """The ground's height [m] anywhere: flat at 0, raised by boxes and heightfields. Pure
    data: the World builds the bodies and fills it; the controller reads it to see where a
    swinging foot will land."""

    def __init__(self) -> None:
        # boxes as their x and y ranges and top (x0, x1, y0, y1, top) [m]: the controller
        # looks under its swinging feet at every step
        self.boxes: list[tuple[float, float, float, float, float]] = []
        # heightfields: grid origin (x, y) [m], cell [m], heights (nx, ny) [m]
        self.fields: list[tuple[float, float, float, np.ndarray]] = []
        # the heights on grids, built on first use: averaged (the lie of the land), and not
        self._smooth: HeightGrid | None = None
        self._grid: HeightGrid | None = None

    def add_box(self, centre: tuple[float, ...], half_extents: tuple[float, ...]) -> None:
        (cx, cy, cz), (hx, hy, hz) = centre, half_extents
        self.boxes.append((cx - hx, cx + hx, cy - hy, cy + hy, cz + hz))
        self._smooth = self._grid = None

    def add_field(self, origin: tuple[float, float], cell: float, field: np.ndarray) -> None:
        self.fields.append((origin[0], origin[1], cell, field))
        self._smooth = self._grid = None

    @property
    def flat(self) -> bool:
        return not (self.boxes or self.fields)

    def height(self, x: float, y: float) -> float:
        """Height [m] of the ground's top at (x, y): the highest box or heightfield there,
        else 0 (a heightfield's cells interpolated bilinearly)."""
        top = 0.0
        for x0, x1, y0, y1, box_top in self.boxes:
            if x0 <= x <= x1 and y0 <= y <= y1 and box_top > top:
                top = box_top
        for x0, y0, cell, field in self.fields:
            u, v = (x - x0) / cell, (y - y0) / cell
            i, j = math.floor(u), math.floor(v)
            if 0 <= i < field.shape[0] - 1 and 0 <= j < field.shape[1] - 1:
                fu, fv = u - i, v - j
                corners = field[i : i + 2, j : j + 2]
                near = corners[0, 0] * (1 - fv) + corners[0, 1] * fv
                far = corners[1, 0] * (1 - fv) + corners[1, 1] * fv
                top = max(top, float(near * (1 - fu) + far * fu))
        return top

    def grid_height(self, x: float, y: float) -> float:
        """`height` read from a GRID_M grid, bilinear: cheap enough for every control step
        (a step's edge becomes a ramp one cell wide)."""
        return self._fine().at(x, y)

    def max_height_along(self, x0: float, y0: float, x1: float, y1: float) -> float:
        """The highest ground [m] on the segment from (x0, y0) to (x1, y1), read on the
        GRID_M grid at every cell it crosses."""
        return self._fine().max_along(x0, y0, x1, y1)

    def mean_height(self, x: float, y: float) -> float:
        """The ground's mean height [m] over a SMOOTH_M square about (x, y): the lie of the
        land under a leg frame, without the bumps of rough ground."""
        if self._smooth is None:
            # imported here: scipy.ndimage took 0.16-0.22 s of every run's start
            from scipy.ndimage import uniform_filter

            x0, y0, grid = self._gridded(SMOOTH_CELL_M)
            window = int(round(SMOOTH_M / SMOOTH_CELL_M)) | 1
            smooth = uniform_filter(grid, size=window, mode="nearest")
            self._smooth = HeightGrid(x0, y0, SMOOTH_CELL_M, smooth)
        return self._smooth.at(x, y)

    def _fine(self) -> HeightGrid:
        if self._grid is None:
            x0, y0, heights = self._gridded(GRID_M)
            self._grid = HeightGrid(x0, y0, GRID_M, heights)
        return self._grid

    def _gridded(self, cell: float) -> tuple[float, float, np.ndarray]:
        """The heights on a grid of `cell` [m] over everything built and a margin: the
        grid's first node (x, y) [m] and its heights (nx, ny) [m]."""
        xs = [b[0] for b in self.boxes] + [f[0] for f in self.fields]
        xe = [b[1] for b in self.boxes] + [f[0] + f[2] * (f[3].shape[0] - 1) for f in self.fields]
        ys = [b[2] for b in self.boxes] + [f[1] for f in self.fields]
        ye = [b[3] for b in self.boxes] + [f[1] + f[2] * (f[3].shape[1] - 1) for f in self.fields]
        margin = 0.5
        x0, y0 = min(xs, default=0.0) - margin, min(ys, default=0.0) - margin
        nx = int((max(xe, default=0.0) + margin - x0) / cell) + 2
        ny = int((max(ye, default=0.0) + margin - y0) / cell) + 2
        grid = np.zeros((nx, ny))
        for bx0, bx1, by0, by1, top in self.boxes:  # the nodes inside each box
            i0, i1 = math.ceil((bx0 - x0) / cell), math.floor((bx1 - x0) / cell) + 1
            j0, j1 = math.ceil((by0 - y0) / cell), math.floor((by1 - y0) / cell) + 1
            block = grid[max(i0, 0) : max(i1, 0), max(j0, 0) : max(j1, 0)]
            np.maximum(block, top, out=block)
        for fx0, fy0, fcell, field in self.fields:  # bilinear at the nodes over each field
            u = (x0 + cell * np.arange(nx) - fx0) / fcell
            v = (y0 + cell * np.arange(ny) - fy0) / fcell
            iu = (u >= 0) & (u < field.shape[0] - 1)
            jv = (v >= 0) & (v < field.shape[1] - 1)
            u, v = u[iu], v[jv]
            i, j = np.floor(u).astype(int), np.floor(v).astype(int)
            fu, fv = (u - i)[:, None], (v - j)[None, :]
            near = field[i][:, j] * (1 - fv) + field[i][:, j + 1] * fv
            far = field[i + 1][:, j] * (1 - fv) + field[i + 1][:, j + 1] * fv
            block = grid[np.ix_(iu, jv)]
            grid[np.ix_(iu, jv)] = np.maximum(block, near * (1 - fu) + far * fu)
        return x0, y0, grid


@dataclass(frozen=True)
class Terrain:
    """A parsed terrain spec: its kind and its numbers (see the module's docstring)."""

    kind: str
    values: tuple[float, ...]


def parse_terrain(spec: str) -> Terrain:
    """The Terrain of `spec`; a SimError naming the problem and the valid forms otherwise."""
    kind, *fields = spec.strip().split(":")
    arity = {"steps": 2, "slope": 1, "rough": 1, "stairs": 2}
    if kind not in arity:
        raise SimError(f"unknown terrain {kind!r} in {spec!r}; use {USAGE}")
    if len(fields) != arity[kind]:
        raise SimError(f"terrain {spec!r} needs {arity[kind]} number(s) after {kind}; use {USAGE}")
    try:
        values = tuple(float(f) for f in fields)
    except ValueError:
        raise SimError(f"terrain {spec!r}: not a number; use {USAGE}") from None
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise SimError(f"terrain {spec!r}: every number must be positive")
    limits = {
        "steps": (MAX_STEP_M, LENGTH_M),
        "slope": (MAX_SLOPE_DEG,),
        "rough": (MAX_ROUGH_M,),
        "stairs": (MAX_STEP_M, MAX_STAIRS),
    }[kind]
    if any(v > top for v, top in zip(values, limits, strict=True)):
        bounds = ", ".join(f"{top:g}" for top in limits)
        raise SimError(f"terrain {spec!r}: beyond what a dog meets (at most {bounds})")
    if kind == "stairs" and values[1] != int(values[1]):
        raise SimError(f"terrain {spec!r}: the number of stairs must be whole")
    if kind == "steps" and values[1] < 0.05:
        raise SimError(f"terrain {spec!r}: steps must be at least 0.05 m long")
    return Terrain(kind, values)


def blocks(terrain: Terrain) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
    """The boxes (centre, half extents) [m] of steps and stairs."""
    half_w = 0.5 * WIDTH_M
    if terrain.kind == "steps":
        height, length = terrain.values
        starts = np.arange(START_M, START_M + LENGTH_M, 2.0 * length)
        return [
            ((x + 0.5 * length, 0.0, 0.5 * height), (0.5 * length, half_w, 0.5 * height))
            for x in starts
        ]
    if terrain.kind == "stairs":
        height, count = terrain.values[0], int(terrain.values[1])
        end = START_M + LENGTH_M
        boxes = []
        for k in range(count):  # each stair a box from its riser to the end, stacked
            x0, top = START_M + k * TREAD_M, (k + 1) * height
            boxes.append((((x0 + end) / 2, 0.0, top / 2), ((end - x0) / 2, half_w, top / 2)))
        return boxes
    return []


def heights(terrain: Terrain, seed: int) -> np.ndarray | None:
    """The heightfield (nx, ny) [m] of a slope or rough ground on a CELL_M grid whose first
    point is at (START_M, -WIDTH_M / 2), or None for terrain of boxes."""
    x = START_M + CELL_M * np.arange(int(round(LENGTH_M / CELL_M)) + 1)
    ny = int(round(WIDTH_M / CELL_M)) + 1
    if terrain.kind == "slope":
        rise = math.tan(math.radians(terrain.values[0]))
        top = 1.0  # [m] the hill's height
        run = top / rise
        along = x - START_M
        up, plateau = np.clip(along * rise, 0.0, top), 4.0  # [m] the plateau's length
        down = np.clip(top - (along - run - plateau) * rise, 0.0, top)
        profile = np.minimum(up, down)
        return np.repeat(profile[:, None], ny, axis=1)
    if terrain.kind == "rough":
        amplitude = terrain.values[0]
        rng = np.random.default_rng(seed)
        ramp = np.clip((x - START_M) / RAMP_IN_M, 0.0, 1.0)[:, None]
        # raised by the amplitude (the flat ground, z = 0, stays under the lowest cell), from
        # the flat start up over RAMP_IN_M
        return amplitude * ramp * (1.0 + rng.uniform(-1.0, 1.0, (len(x), ny)))
    return None
