"""Footing on terrain: what the control step reads from the ground map (controller/terrain.py)
about the ground under and ahead of each foot. Flat ground needs none of it.

- A foot's ground anywhere is the map's, raised as it stood at its last strike (a paw that
  strikes on its toe stands its centre higher than its radius).
- A landing point keeps off a step's edge (a foot aimed at an edge strikes the riser or
  slips off it).
- A swing over a hill or a step (the lie of the land rising or falling under it; not rough
  ground's bumps) clears the ground between the foot and its landing point by a margin,
  since the blend of its lift-off's and landing's grounds does not see an edge between
  them, and aims at the highest ground around its landing point (on a rise, a foot aimed at
  the ground under its landing point strikes the rise before it).
- A leg frame's height rides on its feet's grounds, a swinging foot's going on to its
  landing's as it swings; the rate the land under the frame rises at is fed forward.
"""

from __future__ import annotations

import math

import numpy as np

from quadsim.controller.terrain import GroundMap

EDGE_M = 0.05  # [m] a landing point keeps this far from a step's edge, along the heading
EDGE_RISE_M = 0.03  # [m] a rise this high within EDGE_M is an edge (not rough ground)
EDGE_SHIFTS_M = tuple(0.02 * i for i in range(1, 7))  # [m] the shifts tried, least first
SWING_CLEARANCE_M = 0.03  # [m] a swinging foot's margin over the ground it crosses
CLIMB_LOOK_S = 0.05  # [s] the land's rise under a frame is read this far ahead
CLIMB_DEADBAND_MPS = 0.05  # [m/s] rough ground's flicker in the rate, left out
UNEVEN_M = 0.02  # [m] the lie of the land rising or falling this much under a swing


class Footing:
    """The ground map as the controller reads it. A foot's `offset` [m] is how far above
    the map its ground stood at its last strike (ControllerState.ground_offset keeps it)."""

    def __init__(self, ground_map: GroundMap, foot_radius: float) -> None:
        self.map = ground_map
        self.foot_radius = foot_radius

    def ground_at(self, offset: float, xy: np.ndarray) -> float:
        """The ground [m] a foot with this strike `offset` would stand on at xy."""
        return self.map.grid_height(float(xy[0]), float(xy[1])) + offset

    def strike_offset(self, ground: float, xy: np.ndarray) -> float:
        """A strike's offset: its ground [m] against the map's at xy."""
        return ground - self.map.grid_height(float(xy[0]), float(xy[1]))

    def uneven(self, liftoff: np.ndarray, anchor: np.ndarray) -> bool:
        """Whether the lie of the land rises or falls UNEVEN_M or more from a foot's lift-off
        to its landing point: a hill or a step to clear, not rough ground's bumps."""
        mean = self.map.mean_height
        rise = mean(float(anchor[0]), float(anchor[1])) - mean(float(liftoff[0]), float(liftoff[1]))
        return abs(rise) >= UNEVEN_M

    def landing_ground(self, offset: float, anchor: np.ndarray, forward: tuple) -> float:
        """The ground [m] a foot aims to land on: the highest within EDGE_M of its landing
        point along the heading."""
        (ax, ay), (fx, fy) = anchor.tolist(), forward
        e = EDGE_M
        top = self.map.max_height_along(ax - fx * e, ay - fy * e, ax + fx * e, ay + fy * e)
        return top + offset

    def off_edges(self, anchor: np.ndarray, forward: tuple) -> None:
        """Move a landing point (anchor, in place) along the heading, the least way, until
        the ground within EDGE_M of it is level; left where it is if none is near."""
        height = self.map.grid_height
        ax, ay = anchor.tolist()
        fx, fy = forward

        def level(d: float) -> bool:
            x, y = ax + fx * d, ay + fy * d
            h = [height(x + fx * e, y + fy * e) for e in (-EDGE_M, 0.0, EDGE_M)]
            return max(h) - min(h) < EDGE_RISE_M

        if level(0.0):
            return
        for d in EDGE_SHIFTS_M:
            for shift in (d, -d):
                if level(shift):
                    anchor[:] = (ax + fx * shift, ay + fy * shift)
                    return

    def swing_floor(self, foot: np.ndarray, anchor: np.ndarray) -> float:
        """The lowest a swinging foot's centre may go [m]: SWING_CLEARANCE_M over the
        ground between it (foot (3,) [m]) and its landing point's level area, and its
        radius over the ground there."""
        (x, y), (ax, ay) = foot[:2].tolist(), anchor.tolist()
        top = self.map.grid_height(ax, ay) + self.foot_radius
        reach = math.hypot(ax - x, ay - y)
        if reach > EDGE_M:
            end = (reach - EDGE_M) / reach
            crossed = self.map.max_height_along(x, y, x + (ax - x) * end, y + (ay - y) * end)
            top = max(top, crossed + self.foot_radius + SWING_CLEARANCE_M)
        return top

    def under_frame(self, frame: np.ndarray, feet: np.ndarray) -> float:
        """How much higher [m] the lie of the land is under a frame (position (3,)) than, on
        average, under the points its two feet's grounds are read at (feet (2, 2)): on a hill
        feet ahead stand higher than the ground under the hips, feet behind lower."""
        mean = self.map.mean_height
        (x, y), ((x0, y0), (x1, y1)) = frame[:2].tolist(), feet.tolist()
        return mean(x, y) - 0.5 * (mean(x0, y0) + mean(x1, y1))

    def climb_rate(self, position: np.ndarray, velocity: np.ndarray) -> float:
        """The rate [m/s] the land (map heights averaged over a frame's size) rises at under
        a frame at `position` moving at `velocity` (3,)."""
        (x, y), (vx, vy) = position[:2].tolist(), velocity[:2].tolist()
        mean, t = self.map.mean_height, CLIMB_LOOK_S
        rate = (mean(x + vx * t, y + vy * t) - mean(x, y)) / t
        return rate - min(max(rate, -CLIMB_DEADBAND_MPS), CLIMB_DEADBAND_MPS)
