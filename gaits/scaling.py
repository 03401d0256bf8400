"""Froude scaling of gait parameters to a dog of another size.

Two dogs move alike (dynamic similarity) when their gaits have the same Froude number
v^2 / (g L): lengths scale by the leg-length ratio s, times by sqrt(s) (g is the same),
masses by the mass ratio (s^3 for a dog of the same build). A parameter's unit, which its
name carries as a suffix, fixes its factor L^a T^b M^c:

    suffix        unit       a     b    c   factor for mass ratio s^3
    _m            m          1     0    0   s
    _s            s          0     1    0   s^0.5
    _mps          m/s        1    -1    0   s^0.5
    _per_s        1/s        0    -1    0   s^-0.5
    _s_per_m      s/m       -1     1    0   s^-0.5
    _N_per_m      N/m        0    -2    1   s^2
    _Ns_per_m     N s/m      0    -1    1   s^2.5
    _Nm_per_rad   N m/rad    2    -2    1   s^4
    _Nms_per_rad  N m s/rad  2    -1    1   s^4.5
    _rad, _phase  -          0     0    0   1

plus the names of DIMENSIONLESS, which carry no unit (shares, scales, shape factors).
"""

from __future__ import annotations

import math
from functools import cache

from quadsim.gaits.errors import GaitError

# suffix -> (length, time, mass) exponents; the longest suffix that fits a name wins
UNIT_EXPONENTS: dict[str, tuple[float, float, float]] = {
    "_Nms_per_rad": (2.0, -1.0, 1.0),
    "_Nm_per_rad": (2.0, -2.0, 1.0),
    "_Ns_per_m": (0.0, -1.0, 1.0),
    "_N_per_m": (0.0, -2.0, 1.0),
    "_per_s": (0.0, -1.0, 0.0),
    "_s_per_m": (-1.0, 1.0, 0.0),
    "_phase": (0.0, 0.0, 0.0),
    "_rad": (0.0, 0.0, 0.0),
    "_mps": (1.0, -1.0, 0.0),
    "_m": (1.0, 0.0, 0.0),
    "_s": (0.0, 1.0, 0.0),
}
SUFFIXES_LONGEST_FIRST = sorted(UNIT_EXPONENTS, key=len, reverse=True)
# parameters without a unit in their name: shares of a weight or of a gain, shape factors
DIMENSIONLESS = (
    "stance_pull_max",
    "stance_hip_pd",
    "spine_torque_share",
    "ground_pitch_share",
    "hip_ground_share",
    "turn_lean",
    "stride_speed_exponent",
    "stance_push_fwd",
    "stance_push_up",
    "spine_stiffness",
    "swing_lift_skew",
    "swing_reach_early",
)


@cache  # called for every value of every gait built: a blend, an optimizer candidate
def unit_exponents(name: str) -> tuple[float, float, float]:
    """The (length, time, mass) exponents of the parameter `name` (a flat name such as
    "swing_height_m.LF" is read by its parameter name); raises GaitError for a name whose
    unit is unknown, so that a new parameter must say how it scales."""
    base = name.split(".")[0]
    if base in DIMENSIONLESS:
        return (0.0, 0.0, 0.0)
    for suffix in SUFFIXES_LONGEST_FIRST:
        if base.endswith(suffix):
            return UNIT_EXPONENTS[suffix]
    raise GaitError(
        f"parameter {base!r} has no unit suffix ({', '.join(UNIT_EXPONENTS)}) and is not "
        "listed as dimensionless in gaits/scaling.py: say how it scales with the dog"
    )


def froude_factor(name: str, length_ratio: float, mass_ratio: float) -> float:
    """The factor that carries the parameter `name` to a dog whose legs are `length_ratio`
    times as long and whose mass is `mass_ratio` times as large (times scale by
    sqrt(length_ratio) at equal Froude number)."""
    if not (length_ratio > 0.0 and mass_ratio > 0.0):
        raise GaitError(
            f"scale ratios must be positive, got length {length_ratio!r}, mass {mass_ratio!r}"
        )
    a, b, c = unit_exponents(name)
    if (a, b, c) == (0.0, 0.0, 0.0):
        return 1.0
    return length_ratio**a * math.sqrt(length_ratio) ** b * mass_ratio**c


def speed_factor(length_ratio: float) -> float:
    """The factor of a speed [m/s] at equal Froude number: sqrt(length_ratio)."""
    return froude_factor("speed_mps", length_ratio, 1.0)
