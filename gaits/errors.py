"""Errors raised for gait names, gait files and gait parameters."""

from quadsim.errors import QuadsimError


class GaitError(QuadsimError):
    """A bad gait name, gait file, parameter or speed; the message names the valid choices."""
