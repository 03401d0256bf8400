"""Errors raised for gait names, gait files and gait parameters."""


class GaitError(ValueError):
    """A bad gait name, gait file, parameter or speed; the message names the valid choices."""
