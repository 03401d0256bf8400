from __future__ import annotations

from pathlib import Path

import pytest

MOCAP_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "dog_mocap"


@pytest.fixture
def mocap_dir() -> Path:
    if not MOCAP_DIR.is_dir():
        pytest.skip(f"dog motion capture not found at {MOCAP_DIR}")
    return MOCAP_DIR
