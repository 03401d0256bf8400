"""Errors raised by the simulation and the controller."""

from quadsim.errors import QuadsimError


class SimError(QuadsimError):
    """A request the World cannot carry out (bad push, bad terrain, no display...)."""
