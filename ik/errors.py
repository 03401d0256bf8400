"""Exceptions raised by the IK toolkit.

All of them derive from :class:`IKError`, itself a :class:`quadsim.QuadsimError` (a
``ValueError``), so the CLI prints them as one line.
"""

from quadsim.errors import QuadsimError


class IKError(QuadsimError):
    """Invalid input to an IK function (message names the problem)."""


class NonFiniteTargetError(IKError):
    """A target, root or direction contains NaN or infinity."""


class BoneLengthError(IKError):
    """A bone length is zero, negative or not finite."""


class ShapeError(IKError):
    """An array has the wrong shape (the message gives the expected one)."""


class ConstraintError(IKError):
    """A joint constraint is malformed (bad axis, limits out of order, unknown joint)."""
