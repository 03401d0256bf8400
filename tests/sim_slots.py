"""At most one long simulation per core across the whole test session.

The two slow modules run at once on pytest-xdist's workers, each with its own process pool:
without a session-wide limit they ran four simulations on two cores, and every simulated
second cost about 13% more CPU (about 1.19 s against 1.05 s, from the whole suite's CPU
time). A simulation here first takes one of `SLOTS` lock files (flock: released by the OS
even if the process dies).
"""

from __future__ import annotations

import functools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # no flock (Windows): simulations just share the cores
    fcntl = None  # type: ignore[assignment]

SLOTS = os.cpu_count() or 1
LOCK_DIR = Path(tempfile.gettempdir())
POLL_S = 0.02


def one_per_core(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` (a module-level function, so that process pools can pickle it) runs only while
    it holds a slot."""

    @functools.wraps(fn)
    def slotted(*args: Any, **kwargs: Any) -> Any:
        if fcntl is None:
            return fn(*args, **kwargs)
        files = [open(LOCK_DIR / f"quadsim-test-sim-slot-{k}.lock", "a") for k in range(SLOTS)]
        try:
            while True:
                for f in files:
                    try:
                        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue
                    try:
                        return fn(*args, **kwargs)
                    finally:
                        fcntl.flock(f, fcntl.LOCK_UN)
                time.sleep(POLL_S)
        finally:
            for f in files:
                f.close()

    return slotted
