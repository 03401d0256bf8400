"""Footfall statistics on contact patterns with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from gaits.footfalls import footfall_stats


def pattern(period: float, duty: float, offsets: dict[str, float], seconds: float = 6.0):
    t = np.arange(0.0, seconds, 0.001)
    feet = ["LF", "RF", "LH", "RH"]
    contact = np.stack([((t / period - offsets[f]) % 1.0) < duty for f in feet], axis=1)
    return t, contact


def test_trot_pattern_gives_its_duty_period_and_diagonal_phases() -> None:
    t, c = pattern(0.4, 0.4, {"LH": 0.0, "RF": 0.0, "RH": 0.5, "LF": 0.5})
    stats = footfall_stats(t, c)
    assert stats["stride_period_s"] == pytest.approx(0.4, abs=2e-3)
    for foot in ["LF", "RF", "LH", "RH"]:
        assert stats["duty_factor"][foot] == pytest.approx(0.4, abs=0.01)
    assert stats["phase_offset"]["LH"] == pytest.approx(0.0, abs=0.01)
    rf = stats["phase_offset"]["RF"]
    assert min(rf, 1.0 - rf) == pytest.approx(0.0, abs=0.01)  # circular: 0.99 is 0
    assert stats["phase_offset"]["LF"] == pytest.approx(0.5, abs=0.01)


def test_lateral_sequence_walk_phases() -> None:
    offsets = {"LH": 0.0, "LF": 0.25, "RH": 0.5, "RF": 0.75}
    stats = footfall_stats(*pattern(0.6, 0.6, offsets))
    for foot, phase in offsets.items():
        assert stats["phase_offset"][foot] == pytest.approx(phase, abs=0.01)


def test_no_steps_gives_no_period() -> None:
    t = np.arange(0, 2, 0.001)
    stats = footfall_stats(t, np.ones((len(t), 4), dtype=bool))
    assert stats["stride_period_s"] is None
    assert stats["duty_factor"]["LF"] == 1.0


def test_bounces_at_touchdown_do_not_split_a_stance() -> None:
    t, c = pattern(0.4, 0.4, {"LH": 0.0, "RF": 0.0, "RH": 0.5, "LF": 0.5})
    bounced = c.copy()
    starts = np.flatnonzero(np.diff(c[:, 0].astype(int)) == 1) + 1
    for s in starts:  # the foot leaves the ground twice for 3 ms just after each strike
        bounced[s + 5 : s + 8, 0] = False
        bounced[s + 12 : s + 15, 0] = False
    stats = footfall_stats(t, bounced)
    assert stats["stride_period_s"] == pytest.approx(0.4, abs=2e-3)
    assert stats["duty_factor"]["LF"] == pytest.approx(0.4, abs=0.01)
