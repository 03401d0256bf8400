"""Executors and fault-tolerant batch evaluation."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from quadsim.optimize import testfns
from quadsim.optimize.errors import ExecutorSpecError, MissingDependencyError
from quadsim.optimize.executors import (
    LocalPoolExecutor,
    SerialExecutor,
    evaluate_batch,
    evaluate_batch_outcomes,
    make_executor,
)

PEN = 1e5


def _xs(first: list[float]) -> list[np.ndarray]:
    return [np.array([v, 0.3]) for v in first]


def test_serial_batch_error_costs_only_that_candidate() -> None:
    ex = SerialExecutor()
    got = evaluate_batch(ex, testfns.flaky, _xs([0.3, 0.95, 0.5]), [0, 0, 0], 5.0, PEN)
    assert got == [0.0, PEN, pytest.approx(0.04)]


def test_local_pool_survives_error_crash_and_hang() -> None:
    ex = LocalPoolExecutor(2)
    try:
        xs = _xs([0.2, 0.95, 0.01, 0.47, 0.6, 0.7])
        outs = evaluate_batch_outcomes(ex, testfns.flaky, xs, [0] * 6, 1.0, PEN)
        assert [o.status for o in outs] == ["ok", "error", "crash", "timeout", "ok", "ok"]
        vals = evaluate_batch(ex, testfns.flaky, xs[:1] + xs[4:], [0, 0, 0], 1.0, PEN)
        assert vals == pytest.approx([0.01, 0.09, 0.16])
        assert ex.restarts >= 1  # the pool was rebuilt and still works
    finally:
        ex.shutdown()


def test_batch_matches_serial_and_keeps_order() -> None:
    rng = np.random.default_rng(1)
    xs = list(rng.random((7, 3)))
    seeds = list(range(7))
    want = evaluate_batch(SerialExecutor(), testfns.noisy_sphere, xs, seeds, None, PEN)
    ex = make_executor("local", 2)
    try:
        assert evaluate_batch(ex, testfns.noisy_sphere, xs, seeds, 10.0, PEN) == want
    finally:
        ex.shutdown()


def test_bad_specs_are_clear() -> None:
    with pytest.raises(ExecutorSpecError, match="valid: serial, local, dask-local"):
        make_executor("threads")
    with pytest.raises(ExecutorSpecError, match="dask://HOST:PORT"):
        make_executor("dask://nohost")
    with pytest.raises(ValueError, match="2 candidates but 1 seeds"):
        evaluate_batch(SerialExecutor(), testfns.shifted_sphere, _xs([0.1, 0.2]), [0], 1, PEN)


def test_missing_dask_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingDependencyError, match=r"quadsim\[dask\]"):
        make_executor("dask-local", 1)


def test_an_unreachable_scheduler_is_one_clear_error_naming_its_address(monkeypatch) -> None:
    pytest.importorskip("distributed")
    from quadsim.optimize import executors

    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(ExecutorSpecError, match=r"no Dask scheduler answers at tcp://127.0.0.1:1 "):
        make_executor("dask://127.0.0.1:1")


def test_dask_local_cluster_evaluates_and_penalizes() -> None:
    pytest.importorskip("distributed")
    ex = make_executor("dask-local", 2)
    try:
        xs = _xs([0.3, 0.95, 0.5])
        assert evaluate_batch(ex, testfns.flaky, xs, [0, 0, 0], 10.0, PEN) == [
            0.0,
            PEN,
            pytest.approx(0.04),
        ]
    finally:
        ex.shutdown()
