"""Cheap, picklable stand-in objectives fn(x_unit, seed) for tests, the CLI and benchmarks.

Module-level so that spawn-context workers and Dask workers can import them.
"""

from __future__ import annotations

import os
import time

import numpy as np

#: Minimum of :func:`shifted_sphere` (every coordinate).
SPHERE_CENTER = 0.3


def shifted_sphere(x: np.ndarray, seed: int = 0) -> float:
    """sum((x - 0.3)^2): minimum 0 at x = 0.3 (deterministic, ignores seed)."""
    x = np.asarray(x, dtype=float)
    return float(np.sum((x - SPHERE_CENTER) ** 2))


def noisy_sphere(x: np.ndarray, seed: int = 0) -> float:
    """Shifted sphere plus seed-dependent noise (std 1e-3), reproducible per seed."""
    return shifted_sphere(x) + 1e-3 * float(np.random.default_rng(seed).standard_normal())


def sphere_record(x: np.ndarray, seed: int = 0) -> dict[str, float]:
    """Shifted sphere as a record: total and two terms (first half / second half)."""
    x = np.asarray(x, dtype=float)
    h = len(x) // 2
    a = float(np.sum((x[:h] - SPHERE_CENTER) ** 2))
    b = float(np.sum((x[h:] - SPHERE_CENTER) ** 2))
    return {"total": a + b, "f_a": a, "f_b": b}


def slow_sphere(x: np.ndarray, seed: int = 0, delay_s: float = 0.01) -> float:
    """Shifted sphere after sleeping ``delay_s``."""
    time.sleep(delay_s)
    return shifted_sphere(x)


def busy_sphere(x: np.ndarray, seed: int = 0, work_s: float = 0.02) -> float:
    """Shifted sphere after ~``work_s`` of CPU-bound numpy work (benchmark stand-in)."""
    t_end = time.perf_counter() + work_s
    a = np.random.default_rng(seed).standard_normal((64, 64))
    while time.perf_counter() < t_end:
        a = np.tanh(a @ a.T * 1e-2)
    return shifted_sphere(x) + 0.0 * float(a[0, 0])


def flaky(x: np.ndarray, seed: int = 0) -> float:
    """Shifted sphere, but misbehaves by x[0]: > 0.9 raises, < 0.05 kills its process,
    in [0.45, 0.5) hangs for 60 s (for executor tests)."""
    x0 = float(np.asarray(x)[0])
    if x0 > 0.9:
        raise RuntimeError("flaky: simulated controller error")
    if x0 < 0.05:
        os._exit(13)
    if 0.45 <= x0 < 0.5:
        time.sleep(60)
    return shifted_sphere(x)


_CALLS = {"n": 0}


def interrupt_after(x: np.ndarray, seed: int = 0, n: int = 25) -> float:
    """Shifted sphere that raises KeyboardInterrupt on its (n+1)-th call in this process."""
    _CALLS["n"] += 1
    if _CALLS["n"] > n:
        raise KeyboardInterrupt
    return shifted_sphere(x)


def reset_calls() -> None:
    _CALLS["n"] = 0


def flaky_no_crash(x: np.ndarray, seed: int = 0) -> float:
    """Shifted sphere that raises for x[0] > 0.9 (safe in-process)."""
    if float(np.asarray(x)[0]) > 0.9:
        raise RuntimeError("flaky: simulated controller error")
    return shifted_sphere(x)
