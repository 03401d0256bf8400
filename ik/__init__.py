"""Pure-numpy inverse kinematics: analytic two-link, CCD, Jacobian methods and FABRIK.

Public surface::

    from quadsim.ik import Chain, Tree, IKResult, fabrik, ccd, jacobian_ik, two_link

See :mod:`ik.chain` for frames, joint coordinates and constraint conventions. No
pybullet, no dog: everything takes arrays and returns new arrays.
"""

from .ccd import ccd
from .chain import Chain, Joint, Tree
from .errors import BoneLengthError, ConstraintError, IKError, NonFiniteTargetError, ShapeError
from .fabrik import fabrik, fabrik_batch
from .jacobian import dls_step, jacobian_ik
from .result import IKResult
from .two_link import solve_2d, solve_3d, two_link

__all__ = [
    "BoneLengthError",
    "Chain",
    "ConstraintError",
    "IKError",
    "IKResult",
    "Joint",
    "NonFiniteTargetError",
    "ShapeError",
    "Tree",
    "ccd",
    "dls_step",
    "fabrik",
    "fabrik_batch",
    "jacobian_ik",
    "solve_2d",
    "solve_3d",
    "two_link",
]
