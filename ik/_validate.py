"""Input checks shared by the solvers (raise :class:`ik.IKError` subclasses)."""

from __future__ import annotations

import numpy as np

from .errors import BoneLengthError, NonFiniteTargetError, ShapeError


def as_points(x: object, dim: int, name: str) -> np.ndarray:
    """Return ``x`` as a new float array of shape ``(..., dim)``; check it is finite."""
    try:
        a = np.array(x, dtype=float)  # copy: inputs are never modified
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"{name} must be an array of shape (..., {dim}): {exc}") from None
    if a.ndim == 0 or a.shape[-1] != dim:
        raise ShapeError(f"{name} must have shape (..., {dim}), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise NonFiniteTargetError(f"{name} contains NaN or infinity: {a!r}")
    return a


def bone_length(x: object, name: str) -> float:
    """Return ``x`` as a positive finite float, else raise :class:`BoneLengthError`."""
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise BoneLengthError(f"{name} must be a positive number, got {x!r}") from None
    if not np.isfinite(v) or v <= 0.0:
        raise BoneLengthError(f"{name} must be a positive finite length, got {v!r}")
    return v


def positive(x: object, name: str) -> float:
    v = float(x)  # type: ignore[arg-type]
    if not np.isfinite(v) or v <= 0.0:
        raise ShapeError(f"{name} must be positive and finite, got {v!r}")
    return v
