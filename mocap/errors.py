"""Errors of motion-capture input and analysis."""

from quadsim.errors import QuadsimError


class ReferenceFormatError(QuadsimError):
    """A motion-capture or marker file is missing or malformed (message names file and line)."""


class ReferenceAnalysisError(QuadsimError):
    """A motion has too few footfalls or strides for the requested statistic."""


class RetargetError(QuadsimError):
    """Bad retarget input (message names the problem)."""
