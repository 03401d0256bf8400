"""Errors raised by the dog model."""


class ModelError(ValueError):
    """A dog specification or preset that cannot be built; the message names the problem."""
