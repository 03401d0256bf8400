"""Footfall statistics on contact patterns with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from quadsim.gaits.footfalls import contact_by_phase, footfall_stats


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


def test_contact_by_phase_finds_a_late_strike_and_an_early_lift_off() -> None:
    period, duty = 0.4, 0.5
    offsets = {"LH": 0.0, "RF": 0.0, "RH": 0.5, "LF": 0.5}
    t, planned = pattern(period, duty, offsets)
    phase = (t / period) % 1.0
    contact = planned.copy()
    contact[:, 0] &= ((phase - 0.5) % 1.0) >= 0.1  # LF strikes 0.1 of a stride late
    contact[:, 2] &= (phase % 1.0) < 0.4  # LH lifts off 0.1 of a stride early
    contact[:, 3] |= ((phase - 0.5) % 1.0) >= 0.9  # RH comes down 0.1 of a stride early
    out = contact_by_phase(phase, contact, planned, bins=20)
    assert out["stance_in_contact"] == pytest.approx(
        {"LF": 0.8, "RF": 1.0, "LH": 0.8, "RH": 1.0}, abs=0.01
    )
    assert out["swing_in_contact"] == pytest.approx(
        {"LF": 0.0, "RF": 0.0, "LH": 0.0, "RH": 0.2}, abs=0.01
    )
    x = out["phase"]
    assert x.shape == (20,) and out["contact"].shape == out["planned"].shape == (20, 4)
    lf, lh = out["contact"][:, 0], out["contact"][:, 2]
    # (a sample on a bin's edge may fall either side: shares within 0.01)
    assert np.all(lf[(x > 0.5) & (x < 0.6)] < 0.01) and np.all(lf[(x > 0.6) & (x < 1.0)] > 0.99)
    assert np.all(lh[(x > 0.4) & (x < 0.5)] < 0.01) and np.all(lh[x < 0.4] > 0.99)
    assert np.all(out["planned"][x > 0.5, 0] > 0.99) and np.all(out["planned"][x < 0.5, 0] < 0.01)


def test_contact_by_phase_leaves_empty_bins_empty() -> None:
    phase = np.full(50, 0.26)
    out = contact_by_phase(phase, np.ones((50, 4), bool), np.ones((50, 4), bool), bins=4)
    assert out["contact"][1].tolist() == [1.0] * 4
    assert np.isnan(out["contact"][[0, 2, 3]]).all()
    assert out["swing_in_contact"]["LF"] is None
