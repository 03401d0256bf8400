"""The legs' analytic IK: hip roll from the lateral offset, then the two-link (law of
cosines) solution in the leg plane for the upper and lower segments, with the cannon
(wrist/hock) and toe pitches given as angles in the leg plane."""

from __future__ import annotations

import numpy as np

from ik.two_link import solve_2d_unchecked

PAIR_FIRST = [0, 0, 2, 2]  # the legs whose lengths each pair (fore, hind) uses


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
    d = foot_target - hip
    roll = np.arctan2(d[:, 1], -d[:, 2])
    # in-plane coordinates: u1 along "down" (the distance below the hip in the rolled leg
    # plane), u2 along "back" (a segment at pitch theta points along (cos theta, sin theta))
    u = np.empty((4, 2))
    u[:, 0] = (np.hypot(d[:, 1], d[:, 2]) - lengths[:, 2] * np.cos(cannon_pitch)
               - lengths[:, 3] * np.cos(toe_pitch))  # fmt: skip
    u[:, 1] = -d[:, 0] - lengths[:, 2] * np.sin(cannon_pitch) - lengths[:, 3] * np.sin(toe_pitch)
    # fore and hind legs have their own lengths: one batched solve with each pair's first
    l1, l2 = lengths[PAIR_FIRST, 0], lengths[PAIR_FIRST, 1]
    theta1, theta2, _ = solve_2d_unchecked(l1, l2, u, bend, max_reach)
    angles = np.empty((4, 5))
    angles[:, 0] = roll
    angles[:, 1] = theta1
    angles[:, 2] = theta2
    angles[:, 3] = cannon_pitch - theta1 - theta2
    angles[:, 4] = toe_pitch - cannon_pitch
    return angles
