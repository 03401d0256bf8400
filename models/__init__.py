"""The dog's body: DogSpec, the skeleton map and URDF generation. Knows nothing of control."""

from models.errors import ModelError
from models.skeleton import Joint, LegMap, Link, Skeleton, build_skeleton
from models.spec import FORE, HIND, LEGS, PRESETS, DogSpec, JointLimits, preset
from models.urdf import urdf_text

__all__ = [
    "FORE", "HIND", "LEGS", "PRESETS", "DogSpec", "Joint", "JointLimits", "LegMap", "Link",
    "ModelError", "Skeleton", "build_skeleton", "preset", "urdf_text",
]  # fmt: skip
