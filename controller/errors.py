"""Errors raised by the simulation and the controller."""


class SimError(ValueError):
    """A request the World cannot carry out (bad push, bad terrain, no display...)."""
