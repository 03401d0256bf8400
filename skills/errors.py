"""Errors raised for skill names and skill files."""

from quadsim.errors import QuadsimError


class SkillError(QuadsimError):
    """A bad skill name or skill file; the message names the valid choices."""


class PlanError(SkillError):
    """A plan that cannot be run: the message names the step and what is wrong."""
