"""Gait selection by speed: bands, and linear blends of two gaits inside their overlap.

Blending keeps every leg's phase continuous: the swing starts of two gaits are blended on
the circle, and each gait of the chain is first shifted as a whole (a gait shifted in phase
is the same gait: its swing starts and its spine flexion move together) to sit nearest the
one before it, so that no leg is carried half a stride as the speed crosses an overlap.
Walk -> trot, for example: the fore feet move a quarter stride later against the hind ones,
and nothing else changes in the graph. A gait also keeps the lead of the one before it: a
canter or gallop mirrored left for right is the same gait on the other lead, and the
mirror is taken when it sits nearer. Otherwise a right-lead canter blending into a
left-lead gallop swaps its leads half way, passing through a bound with its fore feet
together and a long flight. A symmetric gait is never mirrored: its mirror is itself half
a stride on, but with its spine flexing half a stride off its feet.

In a turn a canter or gallop leads with its inside legs (`on_lead`), as dogs and horses do:
turning right at 30 deg/s on its left lead, the transverse gallop fell within 5 s (seeds 1
and 3); on the right lead, at 11-15 s (docs/notebook.md, 2026-12-07).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from quadsim.gaits.errors import GaitError
from quadsim.gaits.graph import LEGS
from quadsim.gaits.params import MIRROR, GaitParams, preset_names
from quadsim.gaits.scaling import speed_factor
from quadsim.gaits.waves import HARMONICS, LATERAL_WAVES, WAVES, harmonic_order, phase_name

# The speed bands of the automatic gait choice [m/s], slowest gait first.
AUTO_BANDS: dict[str, tuple[float, float]] = {
    "walk": (0.0, 1.5),
    "trot": (1.0, 2.5),
    "canter": (2.0, 3.5),
    "transverse-gallop": (3.5, 5.5),
}
# Bands that only touch (canter 2-3.5, gallop 3.5-5.5) are blended over this width just
# below the speed where they meet, so that no leg's phase jumps there either and the faster
# gait is whole from the start of its band: a gait is weakest at its top speed [m/s].
MIN_BLEND_MPS = 0.3
START_KEYS = tuple(f"swing_start_phase.{leg}" for leg in LEGS)
WAVE_PHASE_KEYS = tuple(f"{phase_name(w)}.{h}" for w, *_ in WAVES for h in HARMONICS)
# every parameter that is a phase of the stride: a phase shift moves them all together
PHASE_KEYS = (*START_KEYS, *WAVE_PHASE_KEYS)
# the circle each phase lives on: harmonic n of a stride wave repeats every 1/n of a stride
PHASE_PERIOD = {key: 1.0 for key in PHASE_KEYS} | {
    key: 1.0 / harmonic_order(key) for key in WAVE_PHASE_KEYS
}
PHASE_SHIFTS = np.linspace(0.0, 1.0, 40, endpoint=False)


@dataclass(frozen=True)
class Blend:
    """The gait in force at one speed: its parameters, the dominant gait's name and index."""

    params: GaitParams
    gait: str
    index: int


class GaitSchedule:
    """Gaits chosen by speed: `at(speed)` is the one gait whose band holds the speed, or
    the linear blend of two neighbours inside their overlap. `lead` (> 0 left, < 0 right):
    the side the first gait with a lead leads on (a turn's inside); 0: as its file has it."""

    def __init__(
        self,
        gaits: Sequence[GaitParams],
        bands: Sequence[tuple[float, float]],
        min_blend_mps: float = MIN_BLEND_MPS,
        lead: float = 0.0,
    ) -> None:
        if len(gaits) != len(bands) or not gaits:
            raise GaitError("a gait schedule needs one speed band per gait")
        for (lo0, hi0), (lo1, hi1) in zip(bands, bands[1:], strict=False):
            if not (lo0 <= lo1 <= hi0 <= hi1):
                raise GaitError(
                    f"speed bands must rise and touch or overlap, got {lo0}-{hi0} "
                    f"then {lo1}-{hi1} m/s"
                )
        self.names = tuple(g.gait for g in gaits)
        self.bands = tuple((float(lo), float(hi)) for lo, hi in bands)
        self.min_blend_mps = min_blend_mps
        shifted = [on_lead(gaits[0], lead)]
        for g in gaits[1:]:
            leads = (g,) if g.symmetric else (g, _mirrored(g))
            if lead and all(h.symmetric for h in shifted):  # the first with a lead: the turn's
                leads = (on_lead(g, lead),)
            placed = [_phase_shifted(h, _nearest_shift(shifted[-1], h)) for h in leads]
            shifted.append(min(placed, key=lambda h: _start_distance(shifted[-1], h)))
        self.gaits = tuple(shifted)

    @classmethod
    def auto(
        cls,
        max_speed: float | None = None,
        length_ratio: float = 1.0,
        mass_ratio: float = 1.0,
        use: Mapping[str, GaitParams] | None = None,
        lead: float = 0.0,
    ) -> GaitSchedule:
        """The presets of AUTO_BANDS that exist, up to the one whose band holds max_speed,
        for a dog `length_ratio` and `mass_ratio` times the shepherd: gaits and bands
        Froude-scaled, so that it changes gait at the same Froude numbers. `use`: gaits to
        play in place of the presets of their names (a tuned trot among the others); `lead`:
        as for GaitSchedule."""
        use = dict(use or {})
        unknown = sorted(set(use) - set(AUTO_BANDS))
        if unknown:
            raise GaitError(
                f"cannot use {', '.join(unknown)} in the automatic gaits; they are "
                + ", ".join(AUTO_BANDS)
            )
        for name, gait in use.items():
            if gait.gait != name:
                raise GaitError(f"the gait used as {name} is a {gait.gait}")
        have = set(preset_names())
        names = [n for n in AUTO_BANDS if n in have]
        speed = speed_factor(length_ratio)
        bands = [(AUTO_BANDS[n][0] * speed, AUTO_BANDS[n][1] * speed) for n in names]
        if max_speed is not None:
            top = max(hi for _, hi in bands)
            if max_speed > top:
                raise GaitError(
                    f"speed {max_speed} m/s is above the automatic gaits' range "
                    f"(up to {round(top, 3)} m/s with {', '.join(names)})"
                )
        gaits = [use[n] if n in use else GaitParams.load(n) for n in names]
        if (length_ratio, mass_ratio) != (1.0, 1.0):
            gaits = [g.scaled_to(length_ratio, mass_ratio) for g in gaits]
        return cls(gaits, bands, min_blend_mps=MIN_BLEND_MPS * speed, lead=lead)

    @property
    def speed_range(self) -> tuple[float, float]:
        return self.bands[0][0], self.bands[-1][1]

    def at(self, speed: float) -> Blend:
        """The gait for `speed` [m/s] (clamped to the schedule's range)."""
        lo, hi = self.speed_range
        v = min(max(speed, lo), hi)
        for k in range(len(self.gaits) - 1):
            overlap_lo, overlap_hi = self.bands[k + 1][0], self.bands[k][1]
            if overlap_hi - overlap_lo < self.min_blend_mps:
                overlap_lo = overlap_hi - self.min_blend_mps
            if v < overlap_lo:
                return Blend(self.gaits[k], self.names[k], k)
            if v < overlap_hi:
                w = (v - overlap_lo) / (overlap_hi - overlap_lo)
                k_dom = k + 1 if w >= 0.5 else k
                return Blend(blend(self.gaits[k], self.gaits[k + 1], w), self.names[k_dom], k_dom)
        return Blend(self.gaits[-1], self.names[-1], len(self.gaits) - 1)


def blend(a: GaitParams, b: GaitParams, w: float) -> GaitParams:
    """(1 - w) a + w b for every parameter; phases on their circle (shortest way)."""
    values = {}
    for key, va in a.values.items():
        vb = b.values[key]
        if key in PHASE_KEYS:
            period = PHASE_PERIOD[key]
            d = ((vb - va) / period + 0.5) % 1.0 - 0.5
            values[key] = _wrap_phase(va + w * d * period)
        else:  # held between its ends: rounding must not carry a bound's value past it
            values[key] = min(max(va + w * (vb - va), min(va, vb)), max(va, vb))
    band = (
        min(a.speed_band_mps[0], b.speed_band_mps[0]),
        max(a.speed_band_mps[1], b.speed_band_mps[1]),
    )
    source = {"source": f"blend of {a.gait} and {b.gait}", "weight": w}
    return replace(
        a,
        gait=a.gait if w < 0.5 else b.gait,
        values=values,
        speed_band_mps=band,
        symmetric=a.symmetric and b.symmetric,
        free=None,
        provenance=source,
    )


def _starts(g: GaitParams) -> np.ndarray:
    return np.array([g.values[k] for k in START_KEYS])


def _nearest_shift(a: GaitParams, b: GaitParams) -> float:
    """The global phase shift of b that brings its swing starts nearest a's (on the circle)."""
    d = (_starts(b)[None, :] + PHASE_SHIFTS[:, None] - _starts(a)[None, :] + 0.5) % 1.0 - 0.5
    return float(PHASE_SHIFTS[int(np.argmin(np.sum(d * d, axis=1)))])


def _start_distance(a: GaitParams, b: GaitParams) -> float:
    """Sum of squared distances (on the circle) between the swing starts of a and b."""
    d = (_starts(b) - _starts(a) + 0.5) % 1.0 - 0.5
    return float(np.sum(d * d))


def lead_side(g: GaitParams) -> int:
    """The side of the gait's lead: 1 left, -1 right, 0 for a symmetric gait. The lead fore
    is the one that strikes second of the pair, less than half a stride after the other."""
    if g.symmetric:
        return 0
    strike = {
        leg: g.values[f"swing_start_phase.{leg}"] + g.values[f"swing_duration_phase.{leg}"]
        for leg in ("LF", "RF")
    }
    return 1 if (strike["LF"] - strike["RF"]) % 1.0 < 0.5 else -1


def on_lead(g: GaitParams, side: float) -> GaitParams:
    """g on the lead of `side` (> 0 left, < 0 right; 0 leaves it): mirrored if it leads on
    the other side. Symmetric gaits have no lead."""
    lead = lead_side(g)
    return _mirrored(g) if lead and side and (lead > 0) != (side > 0) else g


def _mirrored(g: GaitParams) -> GaitParams:
    """g mirrored left for right: every per-leg value moves to the leg on the other side,
    and a sideways wave changes sign (harmonic n moves by half its own period)."""
    other = {**MIRROR, **{left: right for right, left in MIRROR.items()}}

    def mirror(key: str) -> str:
        name, _, leg = key.partition(".")
        return f"{name}.{other[leg]}" if leg in other else key

    values = {key: g.values[mirror(key)] for key in g.values}
    for wave in LATERAL_WAVES:
        for h in HARMONICS:
            key = f"{phase_name(wave)}.{h}"
            period = PHASE_PERIOD[key]  # on the harmonic's own circle: mirrored twice is as before
            values[key] = _wrap_phase((values[key] + 0.5 * period) % period)
    return replace(g, values=values)


def _phase_shifted(g: GaitParams, shift: float) -> GaitParams:
    if shift == 0.0:
        return g
    values = dict(g.values)
    for key in PHASE_KEYS:
        values[key] = _wrap_phase(values[key] + shift)
    return replace(g, values=values)


def _wrap_phase(phase: float) -> float:
    """`phase` in [0, 0.999] (the parameter's bounds): within 0.001 below 1 counts as 0."""
    p = phase % 1.0
    return 0.0 if p > 0.999 else p
