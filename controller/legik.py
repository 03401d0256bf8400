"""The legs' analytic IK: hip roll from the lateral offset, then the two-link (law of
cosines) solution in the leg plane for the upper and lower segments, with the cannon
(wrist/hock) and toe pitches given as angles in the leg plane."""

from __future__ import annotations

import numpy as np

from ik.two_link import solve_2d_unchecked


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
    down = np.hypot(d[:, 1], d[:, 2])  # distance below the hip in the rolled leg plane
    # in-plane coordinates: u1 along "down", u2 along "back" (a segment at pitch theta
    # points along (cos theta, sin theta))
    u = np.stack([down, -d[:, 0]], axis=1)
    u -= lengths[:, 2:3] * np.stack([np.cos(cannon_pitch), np.sin(cannon_pitch)], axis=1)
    u -= lengths[:, 3:4] * np.stack([np.cos(toe_pitch), np.sin(toe_pitch)], axis=1)
    angles = np.empty((4, 5))
    angles[:, 0] = roll
    for pair in (slice(0, 2), slice(2, 4)):  # fore and hind legs have their own lengths
        l1, l2 = lengths[pair.start, 0], lengths[pair.start, 1]
        theta1, theta2, _ = solve_2d_unchecked(l1, l2, u[pair], bend[pair], max_reach)
        angles[pair, 1] = theta1
        angles[pair, 2] = theta2
    angles[:, 3] = cannon_pitch - angles[:, 1] - angles[:, 2]
    angles[:, 4] = toe_pitch - cannon_pitch
    return angles
