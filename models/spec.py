"""DogSpec: dimensions, masses, joint limits and torque limits of the simulated dog.

Frames: every link frame is parallel to the base (pelvis) frame when all joint angles are
zero; x forward, y left, z up. Legs hang straight down at zero angles, the spine is
straight, the neck and tail point along their rest directions. Units: m, kg, rad, N*m.

Segment mass fractions follow the canine segment inertial data of Amit, Gomberg, Milgram
and Shahar, "Segmental inertial properties in dogs determined by magnetic resonance
imaging", The Veterinary Journal 182 (2009) 94-99 (fractions of body mass, rounded; the
trunk share is split over pelvis, spine segments and chest by length).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from quadsim.models.errors import ModelError

GRAVITY_MPS2 = 9.81  # the world the dog is built for; World sets it in pybullet
LEGS = ("LF", "RF", "LH", "RH")  # the one leg (and foot) order of every array
FORE = ("LF", "RF")
HIND = ("LH", "RH")

# Fraction of total body mass per segment (Amit et al. 2009, rounded; sums to 1).
MASS_FRACTIONS: dict[str, float] = {
    "pelvis": 0.12,
    "spine": 0.30,  # split evenly over the spine segments
    "chest": 0.19,
    "neck": 0.05,  # split evenly over the neck segments
    "head": 0.06,
    "tail": 0.01,  # split evenly over the tail segments
    "upper_arm": 0.035,  # scapula + brachium, each foreleg
    "forearm": 0.015,
    "fore_cannon": 0.007,  # carpus + metacarpus
    "fore_toe": 0.003,
    "thigh": 0.05,  # each hind leg
    "shank": 0.017,
    "hind_cannon": 0.006,  # tarsus + metatarsus
    "hind_toe": 0.002,
}


@dataclass(frozen=True)
class JointLimits:
    """Joint angle range [rad] and torque limit [N*m] of one degree of freedom."""

    lower: float
    upper: float
    torque: float


@dataclass(frozen=True)
class DogSpec:
    """A parametric quadruped. All lengths [m], masses [kg], angles [rad], torques [N*m].

    Leg segment lengths run joint to joint; the foot sphere sits at the end of the toe.
    Angle sign conventions (rotation about the joint axis, right hand):
    pitch joints turn about +y, so a positive pitch swings a hanging segment backwards;
    roll (abduction) turns about +x; yaw about +z.
    """

    name: str = "shepherd"
    total_mass: float = 34.0
    # trunk
    pelvis_size: tuple[float, float, float] = (0.18, 0.17, 0.15)
    spine_segments: int = 3
    spine_segment_length: float = 0.12
    spine_radius: float = 0.075
    chest_size: tuple[float, float, float] = (0.24, 0.20, 0.22)
    # hips relative to the pelvis frame, shoulders relative to the chest frame (left side)
    hip_offset: tuple[float, float, float] = (-0.03, 0.075, -0.05)
    shoulder_offset: tuple[float, float, float] = (0.14, 0.085, -0.08)
    # neck, head, tail
    neck_segments: int = 2
    neck_segment_length: float = 0.13
    neck_radius: float = 0.05
    neck_elevation: float = math.radians(38.0)  # rest direction above horizontal
    head_size: tuple[float, float, float] = (0.25, 0.11, 0.1)
    tail_segments: int = 2
    tail_segment_length: float = 0.17
    tail_radius: float = 0.02
    tail_depression: float = math.radians(40.0)  # rest direction below horizontal
    # legs: joint-to-joint lengths
    upper_arm: float = 0.17
    forearm: float = 0.19
    fore_cannon: float = 0.08
    fore_toe: float = 0.035
    thigh: float = 0.19
    shank: float = 0.21
    hind_cannon: float = 0.11
    hind_toe: float = 0.035
    limb_radius: float = 0.03
    foot_radius: float = 0.025
    # mass of the massless-in-spirit links that join two DOFs of one joint [kg]
    connector_mass: float = 0.05
    # Floor on every link's principal moments [kg*m^2]: the paws and tail tip are so light
    # that stiff PD on them would ring at 1 kHz (pybullet has no joint armature for URDF).
    min_link_inertia: float = 1.5e-3
    # joint limits per joint kind
    limits: dict[str, JointLimits] = field(
        default_factory=lambda: {
            "spine_pitch": JointLimits(-0.35, 0.35, 250.0),
            "spine_yaw": JointLimits(-0.3, 0.3, 200.0),
            "neck_pitch": JointLimits(-0.8, 0.8, 80.0),
            "neck_yaw": JointLimits(-0.8, 0.8, 60.0),
            "head_pitch": JointLimits(-0.9, 0.9, 40.0),
            "head_yaw": JointLimits(-0.6, 0.6, 30.0),
            "tail_pitch": JointLimits(-1.0, 1.0, 12.0),
            "tail_yaw": JointLimits(-1.0, 1.0, 12.0),
            "shoulder_pitch": JointLimits(-1.5, 1.6, 180.0),
            "shoulder_roll": JointLimits(-0.5, 0.5, 150.0),
            "elbow": JointLimits(-2.4, 0.1, 150.0),
            "wrist": JointLimits(-0.4, 1.8, 70.0),
            "fore_toe": JointLimits(-1.2, 1.0, 25.0),
            "hip_pitch": JointLimits(-1.8, 1.2, 200.0),
            "hip_roll": JointLimits(-0.5, 0.5, 150.0),
            "knee": JointLimits(-0.1, 2.4, 180.0),
            "hock": JointLimits(-2.0, 0.4, 120.0),
            "hind_toe": JointLimits(-1.0, 1.2, 25.0),
        }
    )
    # standing pose [rad] per joint kind (legs only; spine/neck/tail stand at zero)
    stand_pose: dict[str, float] = field(
        default_factory=lambda: {
            "shoulder_pitch": 0.26,
            "elbow": -0.5,
            "wrist": 0.28,
            "fore_toe": -0.04,
            "hip_pitch": -0.53,
            "knee": 1.16,
            "hock": -0.89,
            "hind_toe": 0.26,
        }
    )

    def __post_init__(self) -> None:
        positive = {
            "total_mass": self.total_mass,
            "spine_segment_length": self.spine_segment_length,
            "neck_segment_length": self.neck_segment_length,
            "tail_segment_length": self.tail_segment_length,
            "upper_arm": self.upper_arm,
            "forearm": self.forearm,
            "fore_cannon": self.fore_cannon,
            "fore_toe": self.fore_toe,
            "thigh": self.thigh,
            "shank": self.shank,
            "hind_cannon": self.hind_cannon,
            "hind_toe": self.hind_toe,
            "foot_radius": self.foot_radius,
        }
        for key, value in positive.items():
            if not (value > 0 and math.isfinite(value)):
                raise ModelError(f"DogSpec.{key} must be a positive number, got {value!r}")
        if self.spine_segments < 3 or self.neck_segments < 2 or self.tail_segments < 2:
            raise ModelError(
                "DogSpec needs at least 3 spine, 2 neck and 2 tail segments, got "
                f"{self.spine_segments}, {self.neck_segments}, {self.tail_segments}"
            )
        for kind, lim in self.limits.items():
            if not lim.lower < lim.upper or lim.torque <= 0:
                raise ModelError(f"joint limits of {kind!r} are not a valid range: {lim}")

    @property
    def leg_length(self) -> float:
        """A hind leg hip to toe, joint to joint [m]: the length gaits scale by."""
        return self.thigh + self.shank + self.hind_cannon + self.hind_toe

    def froude_ratios(self) -> tuple[float, float]:
        """(leg length, mass) of this dog against the shepherd's, for whom the gaits are
        written: the ratios they are Froude-scaled by (gaits/scaling.py)."""
        return self.leg_length / SHEPHERD.leg_length, self.total_mass / SHEPHERD.total_mass

    def segment_mass(self, part: str) -> float:
        """Mass [kg] of one segment of `part` (a key of MASS_FRACTIONS)."""
        count = {
            "spine": self.spine_segments,
            "neck": self.neck_segments,
            "tail": self.tail_segments,
        }.get(part, 1)
        return self.total_mass * MASS_FRACTIONS[part] / count

    def scaled(self, name: str, total_mass: float) -> DogSpec:
        """The same dog built for another body mass: lengths ~ m^(1/3), torques ~ m^(4/3)."""
        s = (total_mass / self.total_mass) ** (1.0 / 3.0)
        length_fields = [
            "spine_segment_length",
            "spine_radius",
            "neck_segment_length",
            "neck_radius",
            "tail_segment_length",
            "tail_radius",
            "upper_arm",
            "forearm",
            "fore_cannon",
            "fore_toe",
            "thigh",
            "shank",
            "hind_cannon",
            "hind_toe",
            "limb_radius",
            "foot_radius",
        ]
        vector_fields = [
            "pelvis_size",
            "chest_size",
            "hip_offset",
            "shoulder_offset",
            "head_size",
        ]
        changes: dict[str, object] = {k: getattr(self, k) * s for k in length_fields}
        changes.update({k: tuple(v * s for v in getattr(self, k)) for k in vector_fields})
        torque_scale = s**4  # force ~ m ~ s^3, lever arm ~ s
        changes["limits"] = {
            k: JointLimits(v.lower, v.upper, v.torque * torque_scale)
            for k, v in self.limits.items()
        }
        changes["connector_mass"] = self.connector_mass * s**3
        changes["min_link_inertia"] = self.min_link_inertia * s**5
        return replace(self, name=name, total_mass=total_mass, **changes)


SHEPHERD = DogSpec()
SMALL_DOG = SHEPHERD.scaled("small", 10.0)

PRESETS: dict[str, DogSpec] = {"shepherd": SHEPHERD, "small": SMALL_DOG}


def preset(name: str) -> DogSpec:
    """The DogSpec preset called `name`; raises ModelError listing the valid names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ModelError(
            f"unknown dog preset {name!r}; choose one of: {', '.join(sorted(PRESETS))}"
        ) from None
