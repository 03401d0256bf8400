"""Footfall analysis of a run: duty factors, stride period and phase offsets from contacts.

Contacts of a simulated foot are untidy: it bounces as it lands and may scuff the ground
during a swing. The stride period and the phase offsets are therefore measured from whole
contact signals (autocorrelation, cross-correlation), which brief contacts barely move.
"""

from __future__ import annotations

import numpy as np

from quadsim.models import LEGS as FEET

# The footfall order each named gait must show (see footfall_pattern).
PATTERN_OF_GAIT = {
    "walk": "lateral-walk",
    "trot": "trot",
    "pace": "pace",
    "canter": "canter",
    "transverse-gallop": "transverse-gallop",
    "rotary-gallop": "rotary-gallop",
}
# In a symmetrical run, pairs this far apart [stride] still land as couplets: Hildebrand's
# line halfway between a couplet and evenly spaced beats (a quarter of a stride apart).
RUN_COUPLETS_APART = 0.125


def touchdowns(t: np.ndarray, contact: np.ndarray) -> list[np.ndarray]:
    """Touchdown times [s] per foot: where contact (T, 4) turns from False to True."""
    c = np.asarray(contact, dtype=bool)
    return [t[1:][(~c[:-1, k]) & c[1:, k]] for k in range(c.shape[1])]


def clean_contacts(
    t: np.ndarray,
    contact: np.ndarray,
    min_stance_s: float = 0.02,
    max_bounce_s: float = 0.03,
    periodic: bool = False,
) -> np.ndarray:
    """The stance of each foot from raw contacts (T, k): the one stance detector of runs,
    motion capture (quadsim.mocap.footfalls.detect_stance) and the tests. Gaps shorter than
    `max_bounce_s` [s] are filled (a foot bouncing as it lands), then stances shorter than
    `min_stance_s` [s] dropped (a foot skimming). periodic: the samples are one cycle that
    wraps around."""
    c = np.asarray(contact, dtype=bool)
    if not periodic:
        c = ~_drop_short_runs(~c, t, max_bounce_s)
        return _drop_short_runs(c, t, min_stance_s)
    out = c.copy()
    for k in range(c.shape[1]):
        col = c[:, k]
        if col.all() or not col.any():
            continue
        shift = int(np.argmax(col != col[-1]))  # a run starts here: no run wraps after the roll
        rolled = clean_contacts(t, np.roll(col, -shift)[:, None], min_stance_s, max_bounce_s)
        out[:, k] = np.roll(rolled[:, 0], shift)
    return out


def footfall_stats(
    t: np.ndarray,
    contact: np.ndarray,
    min_stance_s: float = 0.02,
    max_bounce_s: float = 0.03,
    min_period_s: float = 0.15,
    max_period_s: float = 2.0,
) -> dict:
    """Duty factor per foot, stride period [s] and touchdown phase relative to LH in [0, 1).

    The period is the first strong peak of the contacts' autocorrelation within
    [min_period_s, max_period_s]; the phase of a foot is the lag [stride fraction] at which
    its contact signal best matches LH's. Returns {"duty_factor": {foot: x},
    "phase_offset": {foot: x}, "stride_period_s": x}; a value is None where the feet did
    not step enough to measure it (fewer than two strides, or no periodic stepping).
    """
    t = np.asarray(t, dtype=float)
    c = clean_contacts(t, contact, min_stance_s, max_bounce_s)
    duty = {f: round(float(np.mean(c[:, k])), 4) for k, f in enumerate(FEET)}
    none = {"duty_factor": duty, "phase_offset": dict.fromkeys(FEET), "stride_period_s": None}
    if len(t) < 4:
        return none
    dt = float(np.median(np.diff(t)))
    x = c.astype(float) - c.mean(axis=0)
    if np.all(x.std(axis=0) < 1e-9):
        return none
    period_steps = _period_steps(x, int(min_period_s / dt), int(max_period_s / dt))
    if period_steps is None or period_steps * 2 > len(t):
        return none
    period = period_steps * dt
    lh = x[:, FEET.index("LH")]
    phase: dict[str, float | None] = {}
    lags = np.arange(period_steps)
    n = len(t) - period_steps
    for k, foot in enumerate(FEET):
        # foot k touches down `lag` steps after LH when x_k(t + lag) matches x_LH(t)
        score = [np.dot(lh[:n], x[lag : lag + n, k]) for lag in lags]
        phase[foot] = round(float(lags[int(np.argmax(score))] / period_steps) % 1.0, 4)
    return {"duty_factor": duty, "phase_offset": phase, "stride_period_s": round(period, 4)}


def contact_by_phase(
    phase: np.ndarray, contact: np.ndarray, planned_stance: np.ndarray, bins: int = 40
) -> dict:
    """Where a run's contacts depart from its gait graph, stride by stride.

    phase: (T,) gait phase [0, 1); contact, planned_stance: (T, 4) bool, feet LF, RF, LH,
    RH. Returns "phase" (bins,) bin centres, "contact" and "planned" (bins, 4): the share of
    samples in each phase bin with the foot in contact / planned in stance (NaN for an empty
    bin), and per foot "stance_in_contact" (share of the planned stance spent on the ground:
    late strikes and early lift-offs lower it) and "swing_in_contact" (share of the planned
    swing spent on the ground: scuffs, early strikes, feet left down).
    """
    phase = np.asarray(phase, dtype=float) % 1.0
    contact = np.asarray(contact, dtype=bool)
    planned = np.asarray(planned_stance, dtype=bool)
    which = np.minimum((phase * bins).astype(int), bins - 1)
    count = np.bincount(which, minlength=bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_bin = {
            name: np.stack(
                [np.bincount(which, weights=x[:, k], minlength=bins) / count for k in range(4)],
                axis=1,
            )
            for name, x in (("contact", contact), ("planned", planned))
        }
    stance_in, swing_in = {}, {}
    for k, foot in enumerate(FEET):
        on, plan = contact[:, k], planned[:, k]
        stance_in[foot] = round(float(on[plan].mean()), 4) if plan.any() else None
        swing_in[foot] = round(float(on[~plan].mean()), 4) if (~plan).any() else None
    return {
        "phase": (np.arange(bins) + 0.5) / bins,
        **per_bin,
        "stance_in_contact": stance_in,
        "swing_in_contact": swing_in,
    }


def _period_steps(x: np.ndarray, lo: int, hi: int) -> int | None:
    """Lag of the first autocorrelation peak of the summed contact signals in [lo, hi]."""
    n = len(x)
    hi = min(hi, n // 2)
    if hi <= lo:
        return None
    ac = np.array([np.sum(x[: n - lag] * x[lag:]) for lag in range(hi + 1)])
    if ac[0] <= 0:
        return None
    ac /= ac[0]
    for lag in range(max(lo, 1), hi):
        if ac[lag] >= ac[lag - 1] and ac[lag] >= ac[lag + 1] and ac[lag] > 0.3:
            return lag
    return None


def _drop_short_runs(mask: np.ndarray, t: np.ndarray, min_len_s: float) -> np.ndarray:
    """`mask` (T, k) with True runs shorter than `min_len_s` [s] set False."""
    out = mask.copy()
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


def beats(offsets: dict[str, float], together: float = 0.08) -> list[list[str]]:
    """The touchdowns of one stride as beats, in order: feet whose phase offsets [0, 1) lie
    within `together` of each other (around the circle) share a beat. The stride starts
    after its longest pause, so a gallop reads from its first hind foot."""
    feet = sorted(offsets, key=offsets.get)
    phases = [offsets[f] for f in feet]
    gaps = [(phases[(k + 1) % 4] - phases[k]) % 1.0 for k in range(4)]
    start = (int(np.argmax(gaps)) + 1) % 4
    feet, phases = feet[start:] + feet[:start], phases[start:] + phases[:start]
    out = [[feet[0]]]
    for k in range(1, 4):
        if (phases[k] - phases[k - 1]) % 1.0 < together:
            out[-1].append(feet[k])
        else:
            out.append([feet[k]])
    return out


def footfall_pattern(
    offsets: dict[str, float | None],
    together: float = 0.08,
    duty: dict[str, float | None] | None = None,
) -> str:
    """Name the footfall order of phase offsets: "trot" (diagonal pairs), "pace" (lateral
    pairs), "bound" (fore pair, hind pair), "lateral-walk" / "diagonal-walk" (four beats,
    a hind foot followed by the fore foot of its own / the other side), "canter" (one hind,
    the other hind with its diagonal fore, the last fore), "transverse-gallop" /
    "rotary-gallop" (both hinds, then both fores; lead fore on the side of the lead hind /
    the other side), or "other".

    duty: the feet's duty factors, if known. Hildebrand draws the line between walks and
    runs at a duty factor of 0.5. In a walk (feet down over half the stride on average)
    footfalls count as separate beats down to half of `together` apart, so the lateral
    couplets of a real dog's walk (dog_walk00: LF 0.07 after LH, RF 0.06 after RH) are a
    walk, not a pace. In a symmetrical run (each pair of feet landing half a stride apart)
    feet up to RUN_COUPLETS_APART apart share a beat, so a real dog's trot, whose fore feet
    land 0.09-0.12 of a stride before their diagonal hind feet (dog_trot), is a trot.

    A run summary's offsets are None for a foot that did not step: ValueError names it. Duty
    factors with a None in them are not used."""
    missing = sorted(f for f in FEET if offsets.get(f) is None)
    if missing:
        raise ValueError(
            f"no phase offset for {', '.join(missing)} (a foot that did not step "
            "has no place in the footfall order); feet: " + ", ".join(FEET)
        )
    if duty is not None and None not in duty.values():  # else the timing alone
        if sum(duty.values()) > 0.5 * len(duty):
            together = 0.5 * together
        elif _symmetrical(offsets):
            together = max(together, RUN_COUPLETS_APART)
    seq = beats(offsets, together)
    sizes = [len(b) for b in seq]
    side = {f: f[0] for f in FEET}
    if sizes == [2, 2]:
        a = set(seq[0])
        if a in ({"LF", "RH"}, {"RF", "LH"}):
            return "trot"
        if a in ({"LF", "LH"}, {"RF", "RH"}):
            return "pace"
        return "bound"
    if sizes == [1, 2, 1]:
        first, pair, last = seq[0][0], set(seq[1]), seq[2][0]
        other_hind = "RH" if first == "LH" else "LH"
        diagonal_fore = "LF" if other_hind == "RH" else "RF"
        if first.endswith("H") and pair == {other_hind, diagonal_fore} and last.endswith("F"):
            return "canter"
        return "other"
    if sizes == [1, 1, 1, 1]:
        order = [b[0] for b in seq]
        kinds = "".join(f[1] for f in order)
        if kinds == "HHFF":  # lead = the second foot of each pair
            return "transverse-gallop" if side[order[1]] == side[order[3]] else "rotary-gallop"
        if kinds in ("HFHF", "FHFH"):
            hind = next(k for k, f in enumerate(order) if f.endswith("H"))
            fore_after = order[(hind + 1) % 4]
            return "lateral-walk" if side[fore_after] == side[order[hind]] else "diagonal-walk"
    return "other"


def _symmetrical(offsets: dict[str, float], tolerance: float = 0.1) -> bool:
    """Hildebrand's symmetrical gaits: the two hind feet, and the two fore feet, land half a
    stride apart (within `tolerance` [stride])."""
    return all(
        abs((offsets[right] - offsets[left]) % 1.0 - 0.5) <= tolerance
        for left, right in (("LH", "RH"), ("LF", "RF"))
    )
