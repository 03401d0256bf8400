"""The legs' analytic IK: hip roll from the lateral offset, then the two-link (law of
cosines) solution in the leg plane for the upper and lower segments, with the cannon
(wrist/hock) and toe pitches given as angles in the leg plane."""

from __future__ import annotations

import numpy as np

from ik.two_link import PlanarTwoLink

PAIR_FIRST = [0, 0, 2, 2]  # the legs whose lengths each pair (fore, hind) uses


class LegIK:
    """`leg_ik` for legs fixed at construction (hips, lengths, bends): the controller solves
    it every step, so what depends on the legs alone is worked out here once."""

    def __init__(self, hip: np.ndarray, lengths: np.ndarray, bend: np.ndarray,
                 max_reach: float = 0.995) -> None:  # fmt: skip
        self.hip = hip
        self.bend = bend
        self.cannon_len = lengths[:, 2].copy()
        self.toe_len = lengths[:, 3].copy()
        # fore and hind legs have their own lengths: one batched solve with each pair's first
        self.planar = PlanarTwoLink(lengths[PAIR_FIRST, 0], lengths[PAIR_FIRST, 1], max_reach)
        self._angles = np.empty((4, 5))

    def solve(self, foot_target: np.ndarray, cannon_pitch: np.ndarray,
              toe_pitch: np.ndarray) -> np.ndarray:  # fmt: skip
        """Joint angles (4, 5) [rad], as `leg_ik`; the array is reused by the next call."""
        d = foot_target - self.hip
        dy, dz = d[:, 1], d[:, 2]
        # in-plane coordinates: u1 along "down" (the distance below the hip in the rolled leg
        # plane), u2 along "back" (a segment at pitch theta points along (cos theta, sin theta))
        down = (np.hypot(dy, dz) - self.cannon_len * np.cos(cannon_pitch)
                - self.toe_len * np.cos(toe_pitch))  # fmt: skip
        back = -d[:, 0] - self.cannon_len * np.sin(cannon_pitch) - self.toe_len * np.sin(toe_pitch)
        theta1, theta2 = self.planar.angles(down, back, self.bend)
        angles = self._angles
        angles[:, 0] = np.arctan2(dy, -dz)  # the hip roll
        angles[:, 1] = theta1
        angles[:, 2] = theta2
        angles[:, 3] = cannon_pitch - theta1 - theta2
        angles[:, 4] = toe_pitch - cannon_pitch
        return angles


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
    return LegIK(hip, lengths, bend, max_reach).solve(foot_target, cannon_pitch, toe_pitch)
