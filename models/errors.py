"""Errors raised by the dog model."""

from quadsim.errors import QuadsimError


class ModelError(QuadsimError):
    """A dog specification or preset that cannot be built; the message names the problem."""
