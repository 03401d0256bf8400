"""The run log's file: what is written is read back, and a bad file gets a clear error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from quadsim import QuadsimError
from quadsim.runlog import REQUIRED, RunLogError, load_log, save_log


def test_a_saved_log_loads_with_the_same_arrays(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    log = {name: rng.normal(size=(5, 3)) for name in REQUIRED}
    log["joint_names"] = np.array(["a", "b"])
    save_log(tmp_path / "run.npz", log)
    back = load_log(tmp_path / "run.npz")
    assert set(back) == set(log)
    for name, array in log.items():
        np.testing.assert_array_equal(back[name], array)


def test_missing_unreadable_and_incomplete_logs_are_named(tmp_path: Path) -> None:
    assert issubclass(RunLogError, QuadsimError)
    with pytest.raises(RunLogError, match="does not exist"):
        load_log(tmp_path / "none.npz")
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(RunLogError, match="not a readable .npz"):
        load_log(tmp_path / "junk.npz")
    save_log(tmp_path / "part.npz", {"t": np.zeros(3)})
    with pytest.raises(RunLogError, match="lacks arrays: base_pos, base_vel, foot_contact"):
        load_log(tmp_path / "part.npz")
