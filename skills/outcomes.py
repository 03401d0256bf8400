"""Whether a skill did what it is for, read from its run log (issue 30's physical outcomes):
heights are the pelvis's and the chest's link origins, as fractions of their standing
heights: the log's `standing_heights_m` (the dog as placed standing), else its start."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

STANDING_S = 0.4  # [s] a log without standing heights: its start, standing, stands for them
SIT_PELVIS_MAX = 0.50
SIT_CHEST_MIN = 0.75
STRAIGHT_ELBOW_RAD = 0.35  # a fore leg is straight when its elbow bends less than this
LIE_MAX = 0.35  # chest and pelvis, lying
STOOD_MIN = 0.90  # chest and pelvis, standing again
STAND_UP_WITHIN_S = 3.0


@dataclass(frozen=True)
class Heights:
    """Per log sample: time [s], pelvis and chest heights as fractions of standing, and the
    fore legs' elbow angles [rad]."""

    t: np.ndarray
    pelvis: np.ndarray
    chest: np.ndarray
    elbows: np.ndarray

    @staticmethod
    def of(log: Mapping[str, np.ndarray]) -> Heights:
        t = np.asarray(log["t"])
        names = [str(n) for n in log["link_names"]]
        pelvis = np.asarray(log["link_pos"])[:, names.index("pelvis"), 2]
        chest = np.asarray(log["link_pos"])[:, names.index("chest"), 2]
        start = t < t[0] + STANDING_S
        joints = [str(n) for n in log["joint_names"]]
        elbows = np.asarray(log["joint_q"])[:, [joints.index("LF_elbow"), joints.index("RF_elbow")]]
        if "standing_heights_m" in log:  # runs log them: a gait lowers the body at once
            pelvis_up, chest_up = np.asarray(log["standing_heights_m"], dtype=float)
        else:
            pelvis_up, chest_up = pelvis[start].mean(), chest[start].mean()
        return Heights(t, pelvis / pelvis_up, chest / chest_up, elbows)

    def window(self, start_s: float, end_s: float) -> np.ndarray:
        return (self.t >= start_s) & (self.t <= end_s)


def _standing(h: Heights, span: tuple[float, float]) -> bool:
    """Standing (chest and pelvis high) through `span` [s]."""
    w = h.window(*span)
    return bool(w.any() and min(h.pelvis[w].min(), h.chest[w].min()) >= STOOD_MIN)


def _sit_figures(h: Heights, w: np.ndarray) -> tuple[bool, dict]:
    figures = {
        "pelvis_max": round(float(h.pelvis[w].max()), 3),
        "chest_min": round(float(h.chest[w].min()), 3),
        "elbow_bend_max_rad": round(float(np.abs(h.elbows[w]).max()), 3),
    }
    ok = (
        figures["pelvis_max"] <= SIT_PELVIS_MAX
        and figures["chest_min"] >= SIT_CHEST_MIN
        and figures["elbow_bend_max_rad"] <= STRAIGHT_ELBOW_RAD
    )
    return ok, figures


def _lie_figures(h: Heights, w: np.ndarray) -> tuple[bool, dict]:
    figures = {
        "pelvis_max": round(float(h.pelvis[w].max()), 3),
        "chest_max": round(float(h.chest[w].max()), 3),
    }
    return max(figures.values()) <= LIE_MAX, figures


def _posture(
    h: Heights,
    hold: tuple[float, float],
    stood: tuple[float, float] | None,
    measure: Callable[[Heights, np.ndarray], tuple[bool, dict]],
) -> dict:
    """The posture `measure` judges, held through `hold`; standing through `stood`, unless
    None (another skill follows)."""
    w = h.window(*hold)
    if not w.any():  # the run ended before the posture was held
        return {"ok": False}
    ok, figures = measure(h, w)
    if stood is None:
        return {"ok": ok, **figures}
    again = _standing(h, stood)
    return {"ok": ok and again, **figures, "stood_again": again}


def sat(h: Heights, hold: tuple[float, float], stood: tuple[float, float] | None) -> dict:
    """Sitting through `hold` (pelvis low, chest high, fore legs straight)."""
    return _posture(h, hold, stood, _sit_figures)


def lay(h: Heights, hold: tuple[float, float], stood: tuple[float, float] | None) -> dict:
    """Lying through `hold` (chest and pelvis low)."""
    return _posture(h, hold, stood, _lie_figures)


def stood_up(
    h: Heights, start_s: float, until_s: float, within_s: float = STAND_UP_WITHIN_S
) -> dict:
    """From `start_s`, chest and pelvis at standing height within `within_s` [s], and
    staying there until `until_s`."""
    up = (h.t >= start_s) & (np.minimum(h.pelvis, h.chest) >= STOOD_MIN)
    took = float(h.t[up][0] - start_s) if up.any() else None
    ok = took is not None and took <= within_s and _standing(h, (start_s + took, until_s))
    return {"ok": bool(ok), "took_s": None if took is None else round(took, 3)}
