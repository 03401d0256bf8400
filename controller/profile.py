"""Commands that change over a run: piecewise-linear profiles of time (speed, heading)."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from quadsim.controller.errors import SimError


class ProfileError(SimError):
    """A malformed profile; the message names the knot that is wrong."""


@dataclass(frozen=True)
class Profile:
    """A value [unit of the profile] against time [s]: linear between knots, constant before
    the first knot and after the last."""

    times: tuple[float, ...]
    values: tuple[float, ...]

    @classmethod
    def constant(cls, value: float) -> Profile:
        return cls((0.0,), (float(value),))

    @classmethod
    def parse(cls, text: str, what: str = "profile", unit: str = "") -> Profile:
        """A profile from "T:V,T:V,..." (times in seconds, increasing)."""
        example = f'e.g. "0:0.5,10:5.0,20:5.0" (time s : {what}{" " + unit if unit else ""})'
        knots = [k.strip() for k in str(text).split(",")]
        if not text or not text.strip():
            raise ProfileError(f"{what} profile is empty; {example}")
        times: list[float] = []
        values: list[float] = []
        for i, knot in enumerate(knots, start=1):
            parts = knot.split(":")
            try:
                if len(parts) != 2:
                    raise ValueError
                t, v = float(parts[0]), float(parts[1])
            except ValueError:
                raise ProfileError(
                    f"{what} profile knot {i} ({knot!r}) must be T:V; {example}"
                ) from None
            if not (math.isfinite(t) and math.isfinite(v)) or t < 0:
                raise ProfileError(
                    f"{what} profile knot {i} ({knot!r}): time must be >= 0 and both numbers finite"
                )
            if times and t <= times[-1]:
                raise ProfileError(
                    f"{what} profile knot {i} ({knot!r}) is out of time order: "
                    f"{t:g} s does not come after {times[-1]:g} s"
                )
            times.append(t)
            values.append(v)
        return cls(tuple(times), tuple(values))

    def __call__(self, t: float) -> float:
        k = bisect.bisect_right(self.times, t)
        if k == 0 or k == len(self.times):
            return self.values[max(k - 1, 0)]
        return self.values[k - 1] + self.slope(t) * (t - self.times[k - 1])

    def slope(self, t: float) -> float:
        """d value / dt at `t` (the slope of the segment `t` lies in; 0 outside the knots)."""
        k = bisect.bisect_right(self.times, t)
        if k == 0 or k == len(self.times):
            return 0.0
        return (self.values[k] - self.values[k - 1]) / (self.times[k] - self.times[k - 1])

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def max(self) -> float:
        return max(self.values)
