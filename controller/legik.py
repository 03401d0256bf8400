"""The legs' analytic IK: hip roll from the lateral offset, then the two-link (law of
cosines) solution in the leg plane for the upper and lower segments, with the cannon
(wrist/hock) and toe pitches given as angles in the leg plane."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from quadsim.ik.two_link import PlanarTwoLink, clamped_angles_float

PAIR_FIRST = [0, 0, 2, 2]  # the legs whose lengths each pair (fore, hind) uses


class LegIK:
    """`leg_ik` for legs fixed at construction (hips, lengths, bends), in float math: the
    reference that the controller's compiled IK (controller.legchain.LegChains.solve_ik)
    matches bit for bit."""

    def __init__(
        self, hip: np.ndarray, lengths: np.ndarray, bend: np.ndarray, max_reach: float = 0.995
    ) -> None:
        self.hip = hip
        self.bend = bend
        self.cannon_len = lengths[:, 2].copy()
        self.toe_len = lengths[:, 3].copy()
        # fore and hind legs have their own lengths: one batched solve with each pair's first
        self.planar = PlanarTwoLink(lengths[PAIR_FIRST, 0], lengths[PAIR_FIRST, 1], max_reach)
        # per leg, as floats: bend, cannon and toe lengths, and the planar chain's l1, l2,
        # minimum and maximum reach
        pl = self.planar
        self._hip_rows = np.asarray(hip, dtype=float).tolist()
        self._legs = list(
            zip(
                *(
                    np.asarray(v, dtype=float).tolist()
                    for v in (bend, self.cannon_len, self.toe_len, pl.l1, pl.l2, pl.rmin, pl.rmax)
                ),
                strict=True,
            )
        )

    def solve(
        self,
        foot_target: Sequence[Sequence[float]],
        cannon_pitch: Sequence[float],
        toe_pitch: Sequence[float],
    ) -> np.ndarray:
        """Joint angles (4, 5) [rad], as `leg_ik`, with the targets and pitches given per leg
        as floats."""
        # float math per leg (numpy's per-call cost dwarfs the arithmetic on four legs), in
        # the order of the whole-array expressions of PlanarTwoLink.angles; math's sin, cos
        # and atan2 are libm's, as numpy's, while hypot stays numpy's (math.hypot rounds
        # differently)
        d = [
            [t - h for t, h in zip(target, hip, strict=True)]
            for target, hip in zip(foot_target, self._hip_rows, strict=True)
        ]
        dx, dy, dz = zip(*d, strict=True)
        dist_yz = np.hypot(dy, dz).tolist()
        down, back = [], []
        for (_, cannon_len, toe_len, *_), x, h, cp, tp in zip(
            self._legs, dx, dist_yz, cannon_pitch, toe_pitch, strict=True
        ):
            # in-plane coordinates: u1 along "down" (the distance below the hip in the rolled
            # leg plane), u2 along "back" (a segment at pitch theta points along
            # (cos theta, sin theta))
            down.append(h - cannon_len * math.cos(cp) - toe_len * math.cos(tp))
            back.append(-x - cannon_len * math.sin(cp) - toe_len * math.sin(tp))
        reach = np.hypot(down, back).tolist()
        angles = []
        for (bend, _, _, l1, l2, rmin, rmax), r, u1, u2, y, z, cp, tp in zip(
            self._legs, reach, down, back, dy, dz, cannon_pitch, toe_pitch, strict=True
        ):
            a1, theta2 = clamped_angles_float(l1, l2, r, bend, rmin, rmax)
            theta1 = (math.atan2(u2, u1) + a1 + math.pi) % (2.0 * math.pi) - math.pi
            angles.append([math.atan2(y, -z), theta1, theta2, cp - theta1 - theta2, tp - cp])
        return np.array(angles)


def leg_ik(
    foot_target: np.ndarray,
    hip: np.ndarray,
    lengths: np.ndarray,
    cannon_pitch: np.ndarray,
    toe_pitch: np.ndarray,
    bend: np.ndarray,
    max_reach: float = 0.995,
) -> np.ndarray:
    """Joint angles (4, 5) [rad]: roll, pitch, knee/elbow, hock/wrist, toe of each leg.

    foot_target, hip: (4, 3) [m] in leg-frame coordinates (foot-sphere centre, hip joint);
    lengths: (4, 4) upper, lower, cannon, toe [m]; cannon_pitch, toe_pitch: (4,) absolute
    pitch [rad] of those segments in the leg plane (0 = hanging straight down, positive =
    swung back); bend: (4,) sign of the knee/elbow angle (+1 knees, -1 elbows).
    """
    target, cannon, toe = (
        np.asarray(v, dtype=float).tolist() for v in (foot_target, cannon_pitch, toe_pitch)
    )
    return LegIK(hip, lengths, bend, max_reach).solve(target, cannon, toe)
