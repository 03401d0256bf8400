"""GaitGraph: the stride period and, per leg, the swing interval in gait phase."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from quadsim.gaits.errors import GaitError
from quadsim.gaits.footfalls import footfall_pattern
from quadsim.models import LEGS


@dataclass(frozen=True)
class GaitGraph:
    """Period T [s]; swing of leg k from phase `swing_start[k]` for `swing_duration[k]`
    (fractions of the stride, the start in [0, 1), wrapping past 1). Phase = t / T mod 1."""

    period_s: float
    swing_start: tuple[float, float, float, float]
    swing_duration: tuple[float, float, float, float]

    def __post_init__(self) -> None:
        if not 0.1 <= self.period_s <= 3.0:
            raise GaitError(f"gait period must be in [0.1, 3] s, got {self.period_s}")
        for leg, s, d in zip(LEGS, self.swing_start, self.swing_duration, strict=True):
            if not (0.0 <= s < 1.0 and 0.05 <= d <= 0.95):
                raise GaitError(
                    f"swing of {leg} must start in [0, 1) and last 0.05-0.95 of "
                    f"the stride, got start {s}, duration {d}"
                )

    @cached_property
    def _legs(self) -> list[tuple[float, float]]:  # per leg (start, duration), made once
        return [
            (float(s), float(d)) for s, d in zip(self.swing_start, self.swing_duration, strict=True)
        ]

    @property
    def duty_factor(self) -> np.ndarray:
        """Fraction of the stride each leg is in stance (LF, RF, LH, RH)."""
        return 1.0 - np.asarray(self.swing_duration)

    def progress(self, phase: float) -> tuple[list[float], list[float]]:
        """Per leg at `phase`: swing progress (as swing_progress) and stance progress (as
        stance_progress), in float math (the controller reads them every step)."""
        swing, stance = [], []
        for start, dur in self._legs:
            since = (phase - start) % 1.0
            swing.append(since / dur if since < dur else -1.0)
            since_touchdown = (phase - start - dur) % 1.0
            stance.append(since_touchdown / (1.0 - dur) if since_touchdown < 1.0 - dur else -1.0)
        return swing, stance

    def swing_progress(self, phase: float) -> np.ndarray:
        """Per leg: progress through swing in [0, 1) at `phase`, or -1 where in stance."""
        return np.array(self.progress(phase)[0])

    def stance_progress(self, phase: float) -> np.ndarray:
        """Per leg: progress through stance in [0, 1) at `phase`, or -1 where in swing."""
        return np.array(self.progress(phase)[1])

    def touchdown_phase(self) -> np.ndarray:
        """Phase at which each leg's swing ends (its touchdown), in [0, 1)."""
        return (np.asarray(self.swing_start) + np.asarray(self.swing_duration)) % 1.0

    def phase_offsets(self) -> dict[str, float]:
        """Touchdown phase of each leg relative to LH, in [0, 1) (the run-summary convention)."""
        td = self.touchdown_phase()
        return {leg: float((td[k] - td[2]) % 1.0) for k, leg in enumerate(LEGS)}

    def footfall_pattern(self) -> str:
        """The planned footfall order, named as gaits.footfalls.footfall_pattern names it."""
        return footfall_pattern(
            self.phase_offsets(), duty=dict(zip(LEGS, self.duty_factor.tolist(), strict=True))
        )
