"""The spine's leg-frame orientations as quaternions (the split along the spine joints is
the compiled controller.legchain.spine_pitch_yaw)."""

from __future__ import annotations

import math


def pitch_yaw_quat(pitch: float, cos_half_yaw: float, sin_half_yaw: float) -> list[float]:
    """The rotation yaw about z after pitch about y (R = Rz(yaw) Ry(pitch)) as a quaternion
    (xyzw), given the cosine and sine of half the yaw (shared by the orientations of one
    heading)."""
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = float(cos_half_yaw), float(sin_half_yaw)
    return [-sy * sp, cy * sp, sy * cp, cy * cp]
