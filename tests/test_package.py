"""The install: one import package, `quadsim`, and no generic top-level names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import quadsim
from quadsim.controller.errors import SimError
from quadsim.gaits.errors import GaitError
from quadsim.ik.errors import IKError
from quadsim.models.errors import ModelError
from quadsim.optimize.errors import OptimizeError
from quadsim.scripts.common import CliError

API = ("simulate", "World", "Controller", "GaitParams", "Profile", "Push", "QuadsimError")


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_import_quadsim_exposes_the_api_from_outside_the_checkout(tmp_path: Path) -> None:
    names = ", ".join(API)
    out = _python(
        f"import quadsim; from quadsim import {names}; print(quadsim.__version__)", tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == quadsim.__version__


@pytest.mark.parametrize("name", ["controller", "models", "gaits", "ik", "optimize", "scripts"])
def test_no_generic_top_level_name_is_installed(tmp_path: Path, name: str) -> None:
    out = _python(f"import {name}", tmp_path)
    assert out.returncode != 0
    assert "ModuleNotFoundError" in out.stderr


def test_the_ik_toolkit_does_not_import_pybullet(tmp_path: Path) -> None:
    out = _python(
        "import sys; from quadsim.ik import fabrik; print('pybullet' in sys.modules)", tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_the_optimizers_help_names_its_conditions_without_pybullet(tmp_path: Path) -> None:
    # the --conditions help is written from the values the episodes use
    code = (
        "import sys; from quadsim.scripts.optimize_cmd import add_parser; "
        "from quadsim.optimize.conditions import conditions_help as h; "
        "print('pybullet' in sys.modules, h())"
    )
    out = _python(code, tmp_path)
    assert out.returncode == 0, out.stderr
    loaded, text = out.stdout.split(" ", 1)
    assert loaded == "False"
    for words in ("turn (30 deg/s)", "steps (6 cm", "hill (10 deg)", "25 N s on the trot"):
        assert words in text


@pytest.mark.parametrize(
    "error", [SimError, GaitError, IKError, ModelError, OptimizeError, CliError]
)
def test_every_input_error_derives_from_the_one_root(error: type) -> None:
    assert issubclass(error, quadsim.QuadsimError)
    assert issubclass(quadsim.QuadsimError, ValueError)


BENCHMARKS = [
    path
    for path in sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))
    if '__name__ == "__main__"' in path.read_text()  # scripts, not their shared modules
]


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_every_benchmark_script_starts(script: Path) -> None:
    """Its imports resolve and its arguments parse (a renamed name had broken three)."""
    out = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "usage:" in out.stdout
