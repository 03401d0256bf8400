"""The result record every solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["IKResult"]


@dataclass(frozen=True)
class IKResult:
    """Outcome of one IK solve (or of a batch, with a leading batch axis).

    Attributes:
        positions: joint positions [length units of the chain], shape ``(nodes, dim)``
            (root first; ``nodes = bones + 1`` for a chain), or ``(B, nodes, dim)`` in
            batch mode.
        angles: joint coordinates ``q`` (see :attr:`ik.Tree.dof`) [rad; ball joints as
            rotation vectors in the parent bone frame], or ``None`` if not computed.
        error: distance from the end effector(s) to the target(s) [length units], max
            over effectors; shape ``()`` or ``(B,)``.
        iterations: iterations (sweeps) used; unreachable FABRIK targets take exactly 1.
        converged: ``error <= tol``.
        reason: why the solver stopped: ``"converged"``, ``"unreachable"``, ``"stalled"``
            (end-effector moved less than ``eps`` between iterations) or ``"max_iter"``.
            In batch mode an array of strings.
        history: error after each iteration (single solves only; empty in batch mode).
        restarts: how many times the solver restarted from another pose (FABRIK,
            jacobian_ik) or straightened a chain onto an arc (FABRIK); 0 for the others.
    """

    positions: np.ndarray
    angles: np.ndarray | None
    error: float | np.ndarray
    iterations: int | np.ndarray
    converged: bool | np.ndarray
    reason: str | np.ndarray
    history: tuple[float, ...] = field(default=())
    restarts: int | np.ndarray = 0
