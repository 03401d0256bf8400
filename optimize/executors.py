"""Executors for candidate evaluations and a fault-tolerant batch evaluation.

* ``"serial"``: in-process, one at a time (tests, debugging; no timeouts).
* ``"local"``: a process pool (``spawn``/``forkserver`` context, so each worker opens
  its own pybullet client) that can be rebuilt after a worker died or hung.
* ``"dask-local"``: a ``distributed.LocalCluster`` with N single-threaded workers.
* ``"dask://HOST:PORT"``: an existing Dask scheduler.

All are ``concurrent.futures.Executor``s. Dask is imported only when asked for
(optional extra ``quadsim[dask]``).

:func:`evaluate_batch` makes a candidate that raises, kills its worker, or runs past
the timeout cost that candidate the penalty, never the run.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ProcessPoolExecutor,
    wait,
)
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import numpy as np

from quadsim.optimize.errors import ExecutorSpecError, MissingDependencyError

__all__ = [
    "SerialExecutor",
    "LocalPoolExecutor",
    "DaskExecutor",
    "make_executor",
    "EvalOutcome",
    "evaluate_batch",
    "evaluate_batch_outcomes",
]

EXECUTOR_CHOICES = "serial, local, dask-local, dask://HOST:PORT"
CONNECT_TIMEOUT_S = 10.0  # how long a dask:// scheduler may take to answer


class SerialExecutor(Executor):
    """Runs each call at submit time in this process (results are ready futures)."""

    def __init__(self) -> None:
        self._shutdown = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        if self._shutdown:
            raise RuntimeError("cannot schedule new futures after shutdown")
        f: Future = Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - delivered through the future
            f.set_exception(e)
        return f

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._shutdown = True

    @property
    def n_workers(self) -> int:
        return 1


class LocalPoolExecutor(Executor):
    """A process pool that can be rebuilt (``restart``) after a crash or a hung worker.

    workers: default ``os.cpu_count()``; context: "spawn" (default) or "forkserver".
    """

    def __init__(self, workers: int | None = None, context: str = "spawn") -> None:
        if context not in ("spawn", "forkserver"):
            raise ExecutorSpecError(f"context must be 'spawn' or 'forkserver', got {context!r}")
        self.workers = int(workers or os.cpu_count() or 1)
        if self.workers < 1:
            raise ExecutorSpecError(f"workers must be >= 1, got {workers}")
        self.context = context
        self.restarts = 0
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=mp.get_context(self.context))

    @property
    def n_workers(self) -> int:
        return self.workers

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return self._pool.submit(fn, *args, **kwargs)

    def restart(self) -> None:
        """Kill every worker (hung or not) and start a fresh pool."""
        old = self._pool
        procs = list(getattr(old, "_processes", {}).values() or [])
        for p in procs:
            if p.is_alive():
                p.kill()
        old.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.join(timeout=5)
        self._pool = self._new_pool()
        self.restarts += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


class DaskExecutor(Executor):
    """A thin adapter over ``distributed.Client.get_executor()``; owns the client (and the
    LocalCluster it started, if any)."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as e:
            raise MissingDependencyError(
                "the Dask executor needs dask.distributed: pip install 'quadsim[dask]'"
            ) from e
        self._cluster = None
        if address is None:
            n = int(workers or os.cpu_count() or 1)
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
            )
            self.client = Client(self._cluster)
            self._n = n
        else:
            _probe(address)
            try:
                self.client = Client(address, timeout=f"{CONNECT_TIMEOUT_S:g}s")
            except OSError as exc:  # dask's TimeoutError and refused connections
                raise ExecutorSpecError(
                    f"no Dask scheduler answers at {address} within {CONNECT_TIMEOUT_S:g} s "
                    f"({type(exc).__name__}); start one (`dask scheduler`) or choose "
                    f"another executor: {EXECUTOR_CHOICES}"
                ) from None
            self._n = max(1, len(self.client.scheduler_info().get("workers", {})))
        self._ex = self.client.get_executor(pure=False)

    @property
    def n_workers(self) -> int:
        return self._n

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return self._ex.submit(fn, *args, **kwargs)

    def restart(self) -> None:
        """Cancel what is queued (Dask restarts dead workers itself)."""
        for f in list(getattr(self._ex, "_futures", ())):
            f.cancel()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        try:
            self._ex.shutdown(wait=wait)
        finally:
            self.client.close()
            if self._cluster is not None:
                self._cluster.close()


def _probe(address: str) -> None:
    """One TCP connection to a tcp://HOST:PORT scheduler, so that a refused one is told at
    once (dask's Client retries a refused connection until its timeout, 10 s)."""
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ExecutorSpecError(
            f"no Dask scheduler answers at {address} ({exc.strerror or type(exc).__name__}); "
            f"start one (`dask scheduler`) or choose another executor: {EXECUTOR_CHOICES}"
        ) from None


def make_executor(spec: str = "local", workers: int | None = None) -> Executor:
    """An executor from a spec: serial | local | dask-local | dask://HOST:PORT."""
    if spec == "serial":
        return SerialExecutor()
    if spec in ("local", "spawn", "forkserver"):
        return LocalPoolExecutor(workers, context="spawn" if spec == "local" else spec)
    if spec == "dask-local":
        return DaskExecutor(None, workers)
    if spec.startswith("dask://"):
        hostport = spec[len("dask://") :]
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise ExecutorSpecError(f"bad Dask address {spec!r}; expected dask://HOST:PORT")
        return DaskExecutor(f"tcp://{host}:{port}", workers)
    raise ExecutorSpecError(f"unknown executor {spec!r}; valid: {EXECUTOR_CHOICES}")


# --------------------------------------------------------------------------- batch evaluation


class _SoftTimeout(Exception):
    pass


def _raise_soft_timeout(signum: int, frame: Any) -> None:
    raise _SoftTimeout()


def _call_with_timeout(fn: Callable[..., Any], x: np.ndarray, seed: int, timeout_s: float):  # noqa: ANN202
    """Worker side: run fn(x, seed); in a main thread, an itimer ends it after timeout_s."""
    use_alarm = (
        timeout_s is not None
        and math.isfinite(timeout_s)
        and timeout_s > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not use_alarm:
        return fn(x, seed)
    old = signal.signal(signal.SIGALRM, _raise_soft_timeout)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return fn(x, seed)
    except _SoftTimeout:
        raise TimeoutError(f"evaluation ran past {timeout_s} s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class EvalOutcome:
    """What one evaluation gave: value (float or record), or the penalty and why."""

    value: Any
    status: str = "ok"  # ok | error | timeout | crash
    message: str = ""


def evaluate_batch_outcomes(
    executor: Executor,
    fn: Callable[[np.ndarray, int], Any],
    xs: Sequence[np.ndarray],
    seeds: Sequence[int],
    timeout_s: float | None,
    penalty: float,
    *,
    poll_s: float = 0.02,
    hard_timeout_factor: float = 2.0,
) -> list[EvalOutcome]:
    """Evaluate fn(xs[i], seeds[i]) for all i; failures become ``penalty`` outcomes.

    * fn raises -> status "error";
    * runs past ``timeout_s`` -> "timeout" (soft: a timer in the worker; hard: after
      ``hard_timeout_factor * timeout_s`` the executor is restarted and the rest resubmitted);
    * the worker process dies -> "crash": the pool is rebuilt, the candidates that were
      running are re-run one at a time to find the one that kills its worker; the others
      are resubmitted.
    KeyboardInterrupt propagates (after cancelling what is queued).
    """
    n = len(xs)
    if len(seeds) != n:
        raise ValueError(f"{n} candidates but {len(seeds)} seeds")
    out: list[EvalOutcome | None] = [None] * n
    hard = None if not timeout_s else hard_timeout_factor * timeout_s + 1.0
    todo = list(range(n))
    isolate: list[int] = []
    try:
        while todo or isolate:
            if todo:
                batch, todo = todo, []
                suspects, rerun = _run_round(
                    executor, fn, xs, seeds, batch, timeout_s, hard, penalty, out, poll_s
                )
                todo += rerun
                isolate += suspects
            else:
                i = isolate.pop(0)
                suspects, rerun = _run_round(
                    executor, fn, xs, seeds, [i], timeout_s, hard, penalty, out, poll_s
                )
                if suspects or rerun:  # alone and it still broke the pool: the culprit
                    out[i] = EvalOutcome(penalty, "crash", "worker process died")
    except BaseException:
        restart = getattr(executor, "restart", None)
        if restart is not None and not isinstance(executor, SerialExecutor):
            restart()
        raise
    return [o if o is not None else EvalOutcome(penalty, "error", "not evaluated") for o in out]


def _run_round(executor, fn, xs, seeds, idx, timeout_s, hard, penalty, out, poll_s):  # noqa: ANN001, ANN202
    """Submit ``idx``; returns (suspects, innocents) to re-run if the pool broke."""
    futs: dict[Future, int] = {}
    for i in idx:
        futs[executor.submit(_call_with_timeout, fn, xs[i], int(seeds[i]), timeout_s)] = i
    started: dict[Future, float] = {}
    pending = set(futs)
    broken = False
    crashed = False
    suspects: list[int] = []
    while pending:
        done, pending = wait(pending, timeout=poll_s, return_when=FIRST_COMPLETED)
        now = time.monotonic()
        for f in pending:
            if f not in started and f.running():
                started[f] = now
        for f in done:
            i = futs[f]
            if f.cancelled():
                continue
            exc = f.exception()
            if exc is None:
                out[i] = EvalOutcome(f.result())
            elif isinstance(exc, BrokenProcessPool):
                broken = crashed = True
                if f in started:
                    suspects.append(i)
            elif isinstance(exc, TimeoutError):
                out[i] = EvalOutcome(penalty, "timeout", str(exc))
            else:
                out[i] = EvalOutcome(penalty, "error", f"{type(exc).__name__}: {exc}")
        if hard is not None and not broken:
            late = [f for f in pending if f in started and now - started[f] > hard]
            if late:
                for f in late:
                    out[futs[f]] = EvalOutcome(penalty, "timeout", f"no answer after {hard:.0f} s")
                    pending.discard(f)
                broken = True  # a hung worker: rebuild the pool, re-run the rest
                for f in pending:
                    f.cancel()
                pending = set()
        if broken and pending:
            # collect the rest quickly: they all fail once the pool is broken
            done, pending = wait(pending, timeout=5.0)
            for f in done:
                i = futs[f]
                if not f.cancelled() and f.exception() is None:
                    out[i] = EvalOutcome(f.result())
                elif (
                    f in started
                    and not f.cancelled()
                    and isinstance(f.exception(), BrokenProcessPool)
                ):
                    suspects.append(i)
            for f in pending:
                f.cancel()
            pending = set()
    if not broken:
        return [], []
    restart = getattr(executor, "restart", None)
    if restart is None:
        raise RuntimeError("executor broke and cannot be restarted")
    restart()
    if len(idx) == 1:
        return ([idx[0]] if out[idx[0]] is None else []), []
    rest = [i for i in idx if out[i] is None and i not in suspects]
    if crashed and not suspects:  # the crash was too quick to see who ran: isolate them all
        return rest, []
    return suspects, rest


def evaluate_batch(
    executor: Executor,
    fn: Callable[[np.ndarray, int], Any],
    xs: Sequence[np.ndarray],
    seeds: Sequence[int],
    timeout_s: float | None,
    penalty: float,
) -> list[float]:
    """Scores of fn(xs[i], seeds[i]) (records are reduced with ``float``); a candidate whose
    evaluation raises, crashes its worker or times out scores ``penalty``."""
    res = []
    for o in evaluate_batch_outcomes(executor, fn, xs, seeds, timeout_s, penalty):
        try:
            v = float(o.value)
        except (TypeError, ValueError):
            v = penalty
        res.append(v if math.isfinite(v) else penalty)
    return res
