"""Footfall targets from the literature (`quadsim optimize --targets NAME|FILE`).

The shared motion-capture clips cover only the walk and the trot; the pace, canter and
gallops are scored against ``gaits/targets/<gait>.toml``: stride period, duty factor and
touchdown phase (relative to LH) of each foot at a speed, for this dog's leg length, with a
``[source]`` table naming where each number comes from and what was estimated.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quadsim.models import LEGS
from quadsim.optimize.errors import TargetsError

if TYPE_CHECKING:  # the objective imports scipy: not for the commands' --help
    from quadsim.optimize.objective import FootfallTargets

__all__ = ["TARGETS_DIR", "GaitTargets", "target_names", "target_file", "load_targets"]

# package data of quadsim.gaits, a sibling of this package installed or in the checkout
TARGETS_DIR = Path(__file__).resolve().parents[1] / "gaits" / "targets"
FIELDS = ("gait", "speed_mps", "period_s", "period_range_s", "duty_factor", "phase_offset")


@dataclass(frozen=True)
class GaitTargets:
    """One target file: the footfalls, the speed they hold at and where they come from.

    period_range_s: the stride periods the sources allow at that speed [s];
    source: the file's [source] table (citations, conversion, what is estimated).
    """

    name: str
    path: str
    gait: str
    speed_mps: float
    footfalls: FootfallTargets
    period_range_s: tuple[float, float]
    source: dict[str, Any] = field(default_factory=dict)


def target_names() -> list[str]:
    """Names of the shipped footfall targets."""
    return sorted(p.stem for p in TARGETS_DIR.glob("*.toml"))


def _resolve(name_or_path: str | Path) -> Path:
    text = str(name_or_path)
    if text.endswith(".toml"):
        path = Path(text)
        if not path.is_file():
            raise TargetsError(f"no targets file {text!r}")
        return path.resolve()
    path = TARGETS_DIR / f"{text}.toml"
    if not path.is_file():
        raise TargetsError(
            f"unknown footfall targets {text!r}; valid: {', '.join(target_names())} "
            "or a targets .toml file"
        )
    return path


def _per_foot(data: dict[str, Any], key: str, where: str) -> tuple[float, float, float, float]:
    table = data[key]
    if not isinstance(table, dict) or set(table) != set(LEGS):
        raise TargetsError(f"{where}: {key} needs exactly the feet {', '.join(LEGS)}")
    lf, rf, lh, rh = (float(table[foot]) for foot in LEGS)
    return lf, rf, lh, rh


def _checked(data: dict[str, Any], where: str) -> GaitTargets:
    """The targets of a parsed file; every number out of its range is named."""
    from quadsim.optimize.objective import FootfallTargets

    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise TargetsError(f"{where}: missing {', '.join(missing)}")
    duty = _per_foot(data, "duty_factor", where)
    phase = _per_foot(data, "phase_offset", where)
    period = float(data["period_s"])
    low, high = (float(x) for x in data["period_range_s"])
    speed = float(data["speed_mps"])
    problems = [
        f"duty_factor.{foot} {d:g} not in (0, 1)"
        for foot, d in zip(LEGS, duty, strict=True)
        if not 0 < d < 1
    ]
    problems += [
        f"phase_offset.{foot} {p:g} not in [0, 1)"
        for foot, p in zip(LEGS, phase, strict=True)
        if not 0 <= p < 1
    ]
    if phase[LEGS.index("LH")] != 0:  # phases are measured from LH's touchdown
        problems.append("phase_offset.LH must be 0")
    if not 0 < low <= period <= high:
        problems.append(f"period_s {period:g} not in period_range_s [{low:g}, {high:g}]")
    if not speed > 0:
        problems.append(f"speed_mps {speed:g} must be positive")
    if problems:
        raise TargetsError(f"{where}: " + "; ".join(problems))
    return GaitTargets(
        name=Path(where).stem,
        path=where,
        gait=str(data["gait"]),
        speed_mps=speed,
        footfalls=FootfallTargets(period, duty, phase),
        period_range_s=(low, high),
        source=dict(data.get("source", {})),
    )


@lru_cache(maxsize=16)
def _load(path: str) -> GaitTargets:
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TargetsError(f"cannot read footfall targets {path!r}: {exc}") from exc
    return _checked(data, path)


def target_file(name_or_path: str | Path) -> GaitTargets:
    """The targets a shipped name (`canter`) or a .toml file holds, checked."""
    return _load(str(_resolve(name_or_path)))


def load_targets(name_or_path: str | Path) -> FootfallTargets:
    """The footfall targets of a shipped name or a .toml file (for the footfall terms)."""
    return target_file(name_or_path).footfalls
