"""Skill files as documents: which skill file a name or path means, the parameters its
`[bounds]` table frees for `quadsim optimize --skill` (mapped to and from the unit box), and
the file written back with the tuned values and their provenance."""

from __future__ import annotations

import copy
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from quadsim.skills.errors import SkillError

PRESET_DIR = Path(__file__).parent / "presets"
JUMPS = ("jump-onto", "jump-off")  # the skills whose files hold a leap (skills/jump.py)


def skill_file(name_or_path: str | Path) -> Path:
    """The file of a skill: a preset's name (skills/presets/NAME.toml) or a .toml path."""
    text = str(name_or_path)
    if text.endswith(".toml"):
        path = Path(text)
        if not path.is_file():
            raise SkillError(f"skill file {text!r} does not exist")
        return path
    path = PRESET_DIR / f"{text}.toml"
    if not path.is_file():
        names = sorted(p.stem for p in PRESET_DIR.glob("*.toml"))
        raise SkillError(f"unknown skill {text!r}; skills: {', '.join(names)}")
    return path


def read_skill(name_or_path: str | Path) -> dict[str, Any]:
    """The TOML document of a skill file (SkillError naming the file if it does not parse)."""
    path = skill_file(name_or_path)
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SkillError(f"skill file {path} is not valid TOML: {e}") from None


def _get(doc: Mapping[str, Any], path: str) -> Any:
    node: Any = doc
    for part in path.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _set(doc: dict[str, Any], path: str, value: float) -> None:
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[int(last) if isinstance(node, list) else last] = value


@dataclass
class SkillFile:
    """A skill file's document and the bounds [low, high] of its free parameters, by dotted
    path from the document's root ("leap.fore_up", "leap.fore_tuck.elbow")."""

    doc: dict[str, Any]
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)  # where the values came from

    @staticmethod
    def load(name_or_path: str | Path) -> SkillFile:
        doc = read_skill(name_or_path)
        where = skill_file(name_or_path)
        bounds: dict[str, tuple[float, float]] = {}
        table = doc.pop("bounds", {})
        if not isinstance(table, dict):
            raise SkillError(f'{where}: bounds must be a table of "PATH" = [low, high]')
        for path, pair in table.items():
            try:
                value = float(_get(doc, path))
                low, high = (float(v) for v in pair)
            except (KeyError, IndexError, ValueError, TypeError):
                raise SkillError(
                    f"{where}: bounds {path!r} must name a number of the file and give [low, high]"
                ) from None
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise SkillError(f"{where}: bounds {path!r} must be finite with low < high")
            if not low <= value <= high:
                raise SkillError(f"{where}: {path} = {value:g} lies outside its bounds")
            bounds[path] = (low, high)
        gait = doc.get("gait")
        if isinstance(gait, str) and gait.endswith(".toml") and not Path(gait).is_absolute():
            doc["gait"] = str((where.parent / gait).resolve())  # so a tuned copy finds it too
        provenance = doc.pop("provenance", {})
        if not isinstance(doc.get("skill"), str) or not isinstance(provenance, dict):
            raise SkillError(f'{where}: a skill file names its skill (skill = "NAME")')
        return SkillFile(doc, bounds, provenance)

    @property
    def name(self) -> str:
        return str(self.doc["skill"])

    def free_names(self) -> tuple[str, ...]:
        return tuple(self.bounds)

    def to_unit(self) -> list[float]:
        """The free parameters in the unit box (0: low, 1: high)."""
        return [(float(_get(self.doc, p)) - lo) / (hi - lo) for p, (lo, hi) in self.bounds.items()]

    def from_unit(self, x: Sequence[float]) -> SkillFile:
        """A copy with the free parameters at `x` (clipped to the unit box)."""
        if len(x) != len(self.bounds):
            raise SkillError(f"{self.name} has {len(self.bounds)} free parameters, got {len(x)}")
        doc = copy.deepcopy(self.doc)
        for xi, (path, (lo, hi)) in zip(x, self.bounds.items(), strict=True):
            _set(doc, path, round(lo + min(max(float(xi), 0.0), 1.0) * (hi - lo), 6))
        return SkillFile(doc, dict(self.bounds))  # new values: the file's provenance is not theirs

    def to_toml(self, provenance: Mapping[str, object] | None = None) -> str:
        """The file's text: its document, its bounds, and `provenance` (else its own)."""
        doc = dict(self.doc)
        if self.bounds:
            doc["bounds"] = {p: list(b) for p, b in self.bounds.items()}
        prov = self.provenance if provenance is None else provenance
        if prov:
            doc["provenance"] = dict(prov)
        head = "# quadsim skill file (skills/skillfile.py); [bounds]: what optimize --skill tunes\n"
        return head + tomli_w.dumps(doc)

    def save(self, path: str | Path, provenance: Mapping[str, object] | None = None) -> None:
        """Write the file atomically."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(self.to_toml(provenance))
        os.replace(tmp, path)
