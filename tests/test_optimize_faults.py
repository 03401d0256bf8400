"""Faults in long optimizations (issue 31): a worker killed with kill -9, a lost Dask worker,
a checkpoint that cannot be written, a reference without strides, an absent scheduler."""

from __future__ import annotations

import errno
import functools
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from quadsim.optimize import cmaes, testfns
from quadsim.optimize.cmaes import CHECKPOINT, RunConfig, load_checkpoint, run
from quadsim.optimize.executors import LocalPoolExecutor, make_executor
from quadsim.scripts.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"
POP = 8  # pycma's population in 4 dimensions
GENERATIONS = 6
SLOW = functools.partial(testfns.slow_sphere, delay_s=0.05)


def _cfg() -> RunConfig:
    return RunConfig(dim=4, gait="sphere", seed=5, max_evals=POP * GENERATIONS)


def _kill_mid_run(
    run_dir: Path, pids: Callable[[], list[int]], killed: list[int]
) -> threading.Thread:
    """A thread that, once generation 2 is checkpointed, kills one worker with SIGKILL while
    the next generation's evaluations run."""

    def kill() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (run_dir / CHECKPOINT).exists() and load_checkpoint(run_dir)["generation"] >= 2:
                time.sleep(0.08)  # inside generation 3: every worker is busy sleeping
                pid = pids()[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.01)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def _same_run_as_serial(history: list[dict], tmp_path: Path) -> None:
    serial = run(SLOW, _cfg(), tmp_path / "serial", quiet=True)
    assert history == serial.history  # the killed evaluation was run again, value for value


def test_a_pool_worker_killed_with_kill_9_costs_only_its_evaluation(tmp_path: Path) -> None:
    ex = LocalPoolExecutor(2)
    killed: list[int] = []
    rd = tmp_path / "pool"
    try:
        pids = lambda: [p.pid for p in ex._pool._processes.values()]  # noqa: E731
        thread = _kill_mid_run(rd, pids, killed)
        r = run(SLOW, _cfg(), rd, executor=ex, quiet=True)
        thread.join(timeout=5)
    finally:
        ex.shutdown()
    assert killed and ex.restarts >= 1  # a worker died mid-run and the pool was rebuilt
    assert r.evals == POP * GENERATIONS and r.stop_reason == "budget"
    assert sum(row["n_failed"] for row in r.history) == 0
    _same_run_as_serial(r.history, tmp_path)


@pytest.mark.slow
def test_a_lost_dask_worker_costs_only_its_evaluation(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    ex = make_executor("dask-local", 2)
    killed: list[int] = []
    rd = tmp_path / "dask"
    try:
        before = ex.client.run(os.getpid)
        pids = lambda: sorted(before.values())  # noqa: E731
        thread = _kill_mid_run(rd, pids, killed)
        r = run(SLOW, _cfg(), rd, executor=ex, quiet=True)
        thread.join(timeout=5)
        assert killed
        ex.client.wait_for_workers(2, timeout=60)  # the nanny brought a new worker up
        assert killed[0] not in ex.client.run(os.getpid).values()
    finally:
        ex.shutdown()
    assert r.evals == POP * GENERATIONS and r.stop_reason == "budget"
    assert sum(row["n_failed"] for row in r.history) == 0  # Dask ran it again elsewhere
    _same_run_as_serial(r.history, tmp_path)


def test_a_checkpoint_that_cannot_be_written_is_one_line_and_keeps_the_last(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    out = tmp_path / "run"
    argv = ["optimize", "--gait", "sphere", "--objective", "sphere", "--dim", "4", "--quiet"]
    assert main([*argv, "--executor", "serial", "--evals", "16", "--out", str(out)]) == 0
    before = (out / CHECKPOINT).read_bytes()
    capsys.readouterr()
    real_replace = os.replace

    def full_disk(src: str, dst: str) -> None:  # the disk fills up as the checkpoint is moved
        if str(dst).endswith(CHECKPOINT):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(cmaes.os, "replace", full_disk)
    assert main(["optimize", "--resume", str(out), "--evals", "32", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "No space left on device" in err and "intact" in err and str(out) in err
    monkeypatch.undo()
    assert (out / CHECKPOINT).read_bytes() == before
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert main(["optimize", "--resume", str(out), "--evals", "32", "--quiet"]) == 0
    assert load_checkpoint(out)["evals"] == 32


def test_a_reference_without_strides_stops_before_any_evaluation(tmp_path: Path, capsys) -> None:
    clip = DATA / "dog_walk00_joint_pos.txt"
    if not clip.is_file():
        pytest.skip("dog mocap not in ../shared/data")
    standing = tmp_path / "standing.txt"  # the dog's first pose, held for two seconds
    standing.write_text(
        clip.read_text().splitlines()[0]
        + "\n" * 1
        + "\n".join([clip.read_text().splitlines()[0]] * 119)
        + "\n"
    )
    out = tmp_path / "run"
    argv = ["optimize", "--gait", "trot", "--reference", str(standing), "--evals", "2"]
    assert main([*argv, "--out", str(out), "--executor", "serial", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "standing.txt" in err
    assert "touches down" in err or "stride" in err
    assert not (out / "history.csv").exists()


def test_an_absent_dask_scheduler_is_named_at_once(tmp_path: Path, capsys, monkeypatch) -> None:
    distributed = pytest.importorskip("distributed")

    def no_client(*args: object, **kwargs: object) -> None:
        raise AssertionError("dask's Client retries a refused connection for 10 s")

    # a refused connection is told at once, by one TCP connection, before dask's Client
    monkeypatch.setattr(distributed, "Client", no_client)
    argv = ["optimize", "--gait", "trot", "--evals", "2", "--out", str(tmp_path / "d")]
    assert main([*argv, "--executor", "dask://127.0.0.1:1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "tcp://127.0.0.1:1" in err
    assert "Connection refused" in err
    assert not (tmp_path / "d" / "history.csv").exists()
