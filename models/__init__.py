"""The dog's body: DogSpec, the skeleton map and URDF generation. Knows nothing of control."""

from quadsim.models.errors import ModelError
from quadsim.models.skeleton import Joint, LegMap, Link, Skeleton, build_skeleton
from quadsim.models.spec import (
    FORE,
    GRAVITY_MPS2,
    HIND,
    LEGS,
    PRESETS,
    DogSpec,
    JointLimits,
    preset,
)
from quadsim.models.urdf import urdf_text

__all__ = [
    "FORE",
    "GRAVITY_MPS2",
    "HIND",
    "LEGS",
    "PRESETS",
    "DogSpec",
    "Joint",
    "JointLimits",
    "LegMap",
    "Link",
    "ModelError",
    "Skeleton",
    "build_skeleton",
    "preset",
    "urdf_text",
]
