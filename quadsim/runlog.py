"""The run log: the arrays a run records (200 Hz), written and read as a compressed .npz.
Its contract is in docs/design.md."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from quadsim.errors import QuadsimError

# the arrays every reader may rely on
REQUIRED = ("t", "base_pos", "base_vel", "foot_contact", "joint_tau")


class RunLogError(QuadsimError):
    """A run log that is missing, unreadable or lacks arrays."""


def save_log(path: str | Path, log: dict[str, np.ndarray]) -> None:
    """Write the run log as a compressed .npz."""
    np.savez_compressed(path, **log)


def load_log(path: str | Path, required: tuple[str, ...] = REQUIRED) -> dict[str, np.ndarray]:
    """The arrays of the run log at `path`, which must hold `required`."""
    p = Path(path)
    if not p.is_file():
        raise RunLogError(f"run log {str(path)!r} does not exist")
    try:
        with np.load(p) as data:
            log = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise RunLogError(f"run log {str(path)!r} is not a readable .npz file ({exc})") from None
    missing = set(required) - set(log)
    if missing:
        raise RunLogError(f"run log {str(path)!r} lacks arrays: {', '.join(sorted(missing))}")
    return log
