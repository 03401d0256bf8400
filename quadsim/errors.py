"""The one root of every error quadsim raises for bad input."""


class QuadsimError(ValueError):
    """Bad input: a gait, file, parameter or command the project cannot use.

    The message names the problem and the valid choices; the CLI prints it as one line and
    exits with status 2. Any other exception is a bug and keeps its traceback.
    """
