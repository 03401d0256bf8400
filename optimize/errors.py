"""Exceptions of the optimize package.

Every error a user can cause (a bad reference file, a run directory from another
gait, an unknown executor spec) is a ``ValueError`` subclass whose message names
the problem and, where there are any, the valid choices. The CLI turns them into
one line on stderr and exit status 2.
"""

from quadsim.errors import QuadsimError


class OptimizeError(QuadsimError):
    """Base class of the user-facing errors of ``optimize``."""


class RunDirError(OptimizeError):
    """A run directory does not fit the requested run (other gait, dimension, ...)."""


class ExecutorSpecError(OptimizeError):
    """An executor spec string is not one of the valid forms."""


class MissingDependencyError(ImportError, OptimizeError):
    """An optional dependency (e.g. dask for ``quadsim[dask]``) is not installed."""


class ObjectiveError(OptimizeError):
    """A run log lacks the arrays an objective term needs, or the arrays disagree."""


class EvaluationError(OptimizeError):
    """Every evaluation of a run's first generation failed: the setup, not the candidates."""


class TargetsError(OptimizeError):
    """A footfall-targets name or file is unknown, unreadable or inconsistent."""
