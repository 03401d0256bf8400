"""Footfall analysis of a run: duty factors, stride period and phase offsets from contacts."""

from __future__ import annotations

import numpy as np

FEET = ("LF", "RF", "LH", "RH")


def touchdowns(t: np.ndarray, contact: np.ndarray) -> list[np.ndarray]:
    """Touchdown times [s] per foot: where contact (T, 4) turns from False to True."""
    c = np.asarray(contact, dtype=bool)
    return [t[1:][(~c[:-1, k]) & c[1:, k]] for k in range(c.shape[1])]


def footfall_stats(t: np.ndarray, contact: np.ndarray, min_stance_s: float = 0.02,
                   max_bounce_s: float = 0.03) -> dict:  # fmt: skip
    """Duty factor per foot, stride period [s] and touchdown phase relative to LH in [0, 1).

    Gaps in contact shorter than `max_bounce_s` [s] (a foot bouncing as it lands) are
    filled, then contacts shorter than `min_stance_s` [s] (a foot skimming the ground) dropped.
    Returns {"duty_factor": {foot: x}, "phase_offset": {foot: x}, "stride_period_s": x};
    a value is None where the feet did not step enough to measure it.
    """
    t = np.asarray(t, dtype=float)
    c = ~_debounce(~np.asarray(contact, dtype=bool), t, max_bounce_s)
    c = _debounce(c, t, min_stance_s)
    downs = touchdowns(t, c)
    periods = [np.median(np.diff(d)) for d in downs if len(d) >= 3]
    period = float(np.median(periods)) if periods else None
    duty = {f: round(float(np.mean(c[:, k])), 4) for k, f in enumerate(FEET)}
    phase: dict[str, float | None] = dict.fromkeys(FEET)
    ref = downs[FEET.index("LH")]
    if period is not None and len(ref) >= 2:
        for k, f in enumerate(FEET):
            if len(downs[k]) == 0:
                continue
            # each touchdown against the latest LH touchdown before it, as a circular mean
            idx = np.searchsorted(ref, downs[k], side="right") - 1
            ok = idx >= 0
            if not np.any(ok):
                continue
            frac = ((downs[k][ok] - ref[idx[ok]]) / period) % 1.0
            angle = np.angle(np.mean(np.exp(2j * np.pi * frac)))
            phase[f] = round(float((angle / (2 * np.pi)) % 1.0), 4)
    return {"duty_factor": duty, "phase_offset": phase,
            "stride_period_s": None if period is None else round(period, 4)}  # fmt: skip


def _debounce(contact: np.ndarray, t: np.ndarray, min_len_s: float) -> np.ndarray:
    """Remove contact runs shorter than `min_len_s` [s]."""
    out = contact.copy()
    if len(t) < 2:
        return out
    dt = float(np.median(np.diff(t)))
    min_len = max(int(round(min_len_s / dt)), 1)
    for k in range(out.shape[1]):
        col = out[:, k]
        edges = np.flatnonzero(np.diff(np.concatenate(([0], col.astype(np.int8), [0]))))
        for start, stop in zip(edges[::2], edges[1::2], strict=True):
            if stop - start < min_len:
                col[start:stop] = False
    return out
