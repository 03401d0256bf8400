"""GaitParams: every number of a gait, typed, documented and bounded, with a unit-box view.

A gait file is TOML, one gait per file:

    schema_version = 1
    gait = "trot"
    [params]
    period_s = 0.42
    swing_height_m = { LF = 0.09, RF = 0.09, LH = 0.1, RH = 0.1 }
    ...
    [provenance]
    source = "preset"

Per-leg parameters are tables keyed LF, RF, LH, RH (a single number sets all four). A
symmetric gait ties right to left: its free vector holds only the left legs' values and
`from_unit` mirrors them, the right legs lifting off half a stride after the left ones.
Stride waves (gaits/waves.py: leg-frame heights, pitch, head, tail and spine over the
stride) are tables keyed h1..h4, an amplitude and a peak phase per harmonic; all zero is no
wave (files that predate the spine waves give `spine_flex_rad` and `spine_flex_phase`, read
as harmonic 1). The
leg frames' gains are tables keyed front, back.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import tomli_w

from quadsim.gaits.errors import GaitError
from quadsim.gaits.graph import LEGS, GaitGraph
from quadsim.gaits.waves import HARMONICS, WAVES, amplitude_name, phase_name

SCHEMA_VERSION = 1
PRESET_DIR = Path(__file__).parent / "presets"
MIRROR = {"RF": "LF", "RH": "LH"}
FRAMES = ("front", "back")  # the leg frames: chest with the fore legs, pelvis with the hind
# stance_pull_max at its bound lifts the limit: the gallops' height control asks for pulls of
# up to 6-9 frame weights at times, and the optimizer's unit box wants the small values
PULL_UNLIMITED = 10.0


@dataclass(frozen=True)
class ParamSpec:
    name: str
    lower: float
    upper: float
    doc: str
    per_leg: bool = False
    default: float | None = None  # the value of a file written before the parameter existed
    per_harmonic: bool = False
    per_frame: bool = False

    @property
    def keys(self) -> tuple[str, ...] | tuple[None]:
        """The table keys of a per-leg, per-harmonic or per-frame parameter; (None,) for a
        number."""
        if self.per_leg:
            return LEGS
        return HARMONICS if self.per_harmonic else FRAMES if self.per_frame else (None,)

    @property
    def keyed(self) -> bool:
        return self.per_leg or self.per_harmonic or self.per_frame


def _wave_specs() -> tuple[ParamSpec, ...]:
    specs = []
    for wave, unit, largest, moves in WAVES:
        specs.append(
            ParamSpec(
                amplitude_name(wave),
                0.0,
                largest,
                f"{moves} over the stride: amplitude of harmonic n [{unit}]",
                default=0.0,
                per_harmonic=True,
            )
        )
        specs.append(
            ParamSpec(
                phase_name(wave),
                0.0,
                0.999,
                f"{moves} over the stride: phase where harmonic n peaks",
                default=0.0,
                per_harmonic=True,
            )
        )
    return tuple(specs)


# name (units in the suffix), bounds, meaning. Order fixes the vector layout.
SCHEMA: tuple[ParamSpec, ...] = (
    ParamSpec("period_s", 0.2, 1.5, "stride period T"),
    ParamSpec("swing_start_phase", 0.0, 0.999, "phase at which the leg lifts off", True),
    ParamSpec("swing_duration_phase", 0.1, 0.9, "fraction of the stride in swing", True),
    ParamSpec("height_front_m", 0.35, 0.65, "chest (front leg frame) height above ground"),
    ParamSpec("height_back_m", 0.35, 0.65, "pelvis (back leg frame) height above ground"),
    ParamSpec("body_pitch_rad", -0.25, 0.25, "leg-frame pitch, nose down positive"),
    ParamSpec(
        "kp_height_N_per_m", 0.0, 30000.0, "leg-frame height virtual-force gain", per_frame=True
    ),
    ParamSpec("kd_height_Ns_per_m", 0.0, 2000.0, "leg-frame vertical damping", per_frame=True),
    ParamSpec(
        "stance_pull_max",
        0.0,
        PULL_UNLIMITED,
        "largest pull of the height control on the stance feet, in frame weights "
        f"(0: they only push; {PULL_UNLIMITED:g}: no limit)",
        per_frame=True,
        default=PULL_UNLIMITED,
    ),
    ParamSpec(
        "kv_sagittal_Ns_per_m",
        0.0,
        2000.0,
        "forward velocity virtual-force gain k_v",
        per_frame=True,
    ),
    ParamSpec(
        "kv_coronal_Ns_per_m", 0.0, 2000.0, "sideways velocity virtual-force gain", per_frame=True
    ),
    ParamSpec(
        "kp_orient_Nm_per_rad",
        0.0,
        4000.0,
        "leg-frame pitch/roll gain (stance hips)",
        per_frame=True,
    ),
    ParamSpec("kd_orient_Nms_per_rad", 0.0, 300.0, "leg-frame pitch/roll damping", per_frame=True),
    ParamSpec(
        "stance_hip_pd", 0.0, 1.0, "share of joint PD kept on supporting hips", per_frame=True
    ),
    ParamSpec(
        "kp_yaw_Nm_per_rad", 0.0, 2000.0, "leg-frame heading gain (stance feet)", per_frame=True
    ),
    ParamSpec("kd_yaw_Nms_per_rad", 0.0, 300.0, "leg-frame heading damping", per_frame=True),
    ParamSpec("fp_sagittal_s", 0.0, 0.4, "foot placement feedback s_fp, forward", True),
    ParamSpec("fp_coronal_s", 0.0, 0.4, "foot placement feedback s_fp, sideways", True),
    ParamSpec(
        "steer_fp_per_s",
        0.0,
        20.0,
        "foot-placement steering: turn rate aimed for per radian of heading error",
        default=0.0,
    ),
    ParamSpec("spine_stiffness", 0.2, 3.0, "scale of the spine PD gains"),
    ParamSpec("spine_front_share", 0.0, 1.0, "share of the spine torque taken by the front frame"),
    ParamSpec("head_pitch_rad", -0.6, 0.6, "head pitch in the world, nose down positive"),
    ParamSpec("tail_pitch_rad", -0.8, 0.8, "tail base pitch relative to the pelvis"),
    ParamSpec("swing_height_m", 0.02, 0.25, "foot lift at mid-swing", True),
    ParamSpec(
        "swing_lift_skew",
        -1.0,
        1.0,
        "swing height path: > 0 lifts the foot early in the swing, < 0 late",
        True,
        0.0,
    ),
    ParamSpec(
        "swing_reach_early",
        -0.25,
        0.25,
        "swing path: > 0 the foot moves ahead early in the swing, < 0 late",
        True,
        0.0,
    ),
    ParamSpec("step_offset_x_m", -0.2, 0.2, "nominal foot placement ahead of the hip", True),
    ParamSpec("step_offset_y_m", -0.1, 0.1, "nominal foot placement outward of the hip", True),
    ParamSpec("stance_cannon_rad", -0.6, 0.6, "cannon (wrist/hock) pitch in stance", True),
    ParamSpec("swing_cannon_rad", -1.5, 1.5, "cannon pitch at mid-swing", True),
    ParamSpec("toe_off_rad", -1.2, 1.2, "toe pitch at lift-off", True),
    ParamSpec("foot_strike_rad", -1.2, 1.2, "toe pitch at foot strike", True),
    ParamSpec("toe_off_lead_s", 0.0, 0.2, "toe-off trajectory starts dt_A before lift-off", True),
    ParamSpec("strike_lead_s", 0.0, 0.2, "foot-strike trajectory starts dt_B before strike", True),
    *_wave_specs(),
)
SPEC_BY_NAME = {p.name: p for p in SCHEMA}
# names of files written before a parameter became a wave: their value is its harmonic 1
RENAMED = {"spine_flex_rad": "spine_flex_wave_rad", "spine_flex_phase": "spine_flex_wave_phase"}


def _keys() -> list[tuple[str, str | None]]:
    return [(p.name, key) for p in SCHEMA for key in p.keys]


ALL_KEYS: tuple[tuple[str, str | None], ...] = tuple(_keys())


def key_name(name: str, key: str | None) -> str:
    """The flat name of one parameter: "period_s", "swing_height_m.LF", "pitch_wave_rad.h2"."""
    return name if key is None else f"{name}.{key}"


@dataclass(frozen=True)
class GaitParams:
    """All parameters of one gait. `values` maps flat names ("swing_height_m.LF") to floats.

    `speed_band_mps` is the (min, max) forward speed the gait is made for; `symmetric`
    ties the right legs to the left ones in the free vector; `free` lists the flat names
    the optimizer may change (default: all that the symmetry leaves free).
    """

    gait: str
    values: Mapping[str, float]
    speed_band_mps: tuple[float, float]
    symmetric: bool = True
    free: tuple[str, ...] | None = None
    provenance: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        expected = {key_name(n, leg) for n, leg in ALL_KEYS}
        missing = sorted(expected - set(self.values))
        if missing:
            raise GaitError(f"gait {self.gait!r} lacks parameter(s): {', '.join(missing)}")
        unknown = sorted(set(self.values) - expected)
        if unknown:
            raise GaitError(
                f"gait {self.gait!r} has unknown parameter(s): {', '.join(unknown)}"
                f"; known: {', '.join(p.name for p in SCHEMA)}"
            )
        for flat, value in self.values.items():
            spec = SPEC_BY_NAME[flat.split(".")[0]]
            if not (isinstance(value, int | float) and math.isfinite(value)):
                raise GaitError(
                    f"parameter {flat} of gait {self.gait!r} must be a number, got {value!r}"
                )
            if not spec.lower <= value <= spec.upper:
                raise GaitError(
                    f"parameter {flat} = {value} of gait {self.gait!r} is outside "
                    f"its bounds [{spec.lower}, {spec.upper}] "
                    f"({spec.doc})"
                )
        lo, hi = self.speed_band_mps
        if not 0.0 <= lo < hi:
            raise GaitError(
                f"speed band of gait {self.gait!r} must be 0 <= min < max, "
                f"got {self.speed_band_mps}"
            )
        if self.free is not None:
            bad = sorted(set(self.free) - set(self.default_free()))
            if bad:
                raise GaitError(
                    f"unknown free parameter(s) {', '.join(bad)}; choose from: "
                    f"{', '.join(self.default_free())}"
                )
        self.graph()  # a valid gait graph

    # ------------------------------------------------------------------ access
    def __getitem__(self, flat: str) -> float:
        return float(self.values[flat])

    def leg(self, name: str) -> np.ndarray:
        """A per-leg parameter as an array in LF, RF, LH, RH order."""
        return np.array([self.values[f"{name}.{leg}"] for leg in LEGS])

    def frames(self, name: str) -> list[float]:
        """A per-frame parameter as [front, back]."""
        return [float(self.values[f"{name}.{k}"]) for k in FRAMES]

    def harmonics(self, name: str) -> np.ndarray:
        """A per-harmonic parameter as an array in h1, h2, ... order."""
        return np.array([self.values[f"{name}.{k}"] for k in HARMONICS])

    def graph(self) -> GaitGraph:
        return GaitGraph(
            self["period_s"],
            tuple(self.leg("swing_start_phase")),
            tuple(self.leg("swing_duration_phase")),
        )

    def check_speed(self, speed_mps: float) -> None:
        """Raise GaitError naming the band when `speed_mps` is outside this gait's band."""
        lo, hi = self.speed_band_mps
        if not (lo <= speed_mps <= hi):
            raise GaitError(f"speed {speed_mps} m/s is outside the {self.gait} band {lo}-{hi} m/s")

    # ------------------------------------------------------------------ vector view
    def default_free(self) -> tuple[str, ...]:
        """Names the optimizer may change: all, or with symmetry only the left legs'."""
        return tuple(
            key_name(n, leg) for n, leg in ALL_KEYS if not (self.symmetric and leg in MIRROR)
        )

    def free_names(self) -> list[str]:
        return list(self.free if self.free is not None else self.default_free())

    def with_free(self, names: Iterable[str]) -> GaitParams:
        """The same gait with only `names` free (plain names free all their legs)."""
        wanted: list[str] = []
        allowed = self.default_free()
        for name in names:
            if name in allowed:
                wanted.append(name)
            elif name in SPEC_BY_NAME and SPEC_BY_NAME[name].keyed:
                wanted += [f for f in allowed if f.split(".")[0] == name]
            else:
                raise GaitError(
                    f"unknown free parameter {name!r}; choose from: "
                    f"{', '.join(p.name for p in SCHEMA)} or per-leg names "
                    "like swing_height_m.LF or pitch_wave_rad.h2"
                )
        return _replace(self, free=tuple(dict.fromkeys(wanted)))

    def to_unit(self) -> np.ndarray:
        """The free parameters mapped into [0, 1] by their bounds."""
        out = []
        for flat in self.free_names():
            spec = SPEC_BY_NAME[flat.split(".")[0]]
            out.append((self.values[flat] - spec.lower) / (spec.upper - spec.lower))
        return np.array(out)

    @classmethod
    def from_unit(cls, x: np.ndarray, template: GaitParams) -> GaitParams:
        """`template` with its free parameters set from the unit-box vector `x` (clipped)."""
        names = template.free_names()
        x = np.asarray(x, dtype=float)
        if x.shape != (len(names),):
            raise GaitError(
                f"expected a vector of {len(names)} free parameters, got shape {x.shape}"
            )
        if not np.all(np.isfinite(x)):
            raise GaitError("parameter vector contains NaN or infinity")
        values = dict(template.values)
        for flat, u in zip(names, np.clip(x, 0.0, 1.0), strict=True):
            spec = SPEC_BY_NAME[flat.split(".")[0]]
            values[flat] = float(spec.lower + u * (spec.upper - spec.lower))
        if template.symmetric:
            _mirror(values)
        return _replace(template, values=values)

    # ------------------------------------------------------------------ files
    def to_toml(self, provenance: Mapping[str, object] | None = None) -> str:
        params: dict[str, object] = {}
        for spec in SCHEMA:
            if spec.keyed:
                params[spec.name] = {k: self.values[f"{spec.name}.{k}"] for k in spec.keys}
            else:
                params[spec.name] = self.values[spec.name]
        doc = {
            "schema_version": SCHEMA_VERSION,
            "gait": self.gait,
            "speed_band_mps": list(self.speed_band_mps),
            "symmetric": self.symmetric,
            "params": params,
            "provenance": dict(provenance if provenance is not None else self.provenance),
        }
        units = "\n".join(f"# {s.name}: {s.doc} [{s.lower}, {s.upper}]" for s in SCHEMA)
        return f"# quadsim gait file; units are in the key names.\n{units}\n\n" + tomli_w.dumps(doc)

    def save(self, path: str | Path, provenance: Mapping[str, object] | None = None) -> None:
        """Write the gait as TOML (atomically), with a [provenance] table."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(self.to_toml(provenance))
        tmp.replace(path)

    @classmethod
    def load(cls, source: str | Path) -> GaitParams:
        """A gait from a TOML file path, or a preset name (see `preset_names()`)."""
        text_path = Path(source)
        if text_path.suffix != ".toml" and str(source) in preset_names():
            text_path = PRESET_DIR / f"{source}.toml"
        elif text_path.suffix != ".toml":
            raise GaitError(
                f"unknown gait {str(source)!r}; known gaits: "
                f"{', '.join(preset_names())} (or a .toml gait file)"
            )
        try:
            doc = tomllib.loads(text_path.read_text())
        except FileNotFoundError:
            raise GaitError(f"gait file {str(text_path)!r} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise GaitError(f"gait file {str(text_path)!r} is not valid TOML: {exc}") from None
        return cls.from_dict(doc, where=str(text_path))

    @classmethod
    def from_dict(cls, doc: Mapping, where: str = "gait") -> GaitParams:
        version = doc.get("schema_version")
        if version != SCHEMA_VERSION:
            raise GaitError(f"{where}: schema_version must be {SCHEMA_VERSION}, got {version!r}")
        for key in ("gait", "params", "speed_band_mps"):
            if key not in doc:
                raise GaitError(f"{where}: missing key {key!r}")
        values: dict[str, float] = {}
        params = doc["params"]
        for name, value in params.items():
            if name in RENAMED:
                values[f"{RENAMED[name]}.{HARMONICS[0]}"] = _number(value, name, where)
                continue
            spec = SPEC_BY_NAME.get(name)
            if spec is None:
                raise GaitError(
                    f"{where}: unknown parameter {name!r}; known: {', '.join(SPEC_BY_NAME)}"
                )
            if spec.keyed and not isinstance(value, int | float):
                if not isinstance(value, Mapping) or set(value) != set(spec.keys):
                    what = "leg" if spec.per_leg else "harmonic" if spec.per_harmonic else "frame"
                    keys = ", ".join(spec.keys)
                    raise GaitError(
                        f"{where}: parameter {name!r} needs one number, or one per "
                        f"{what} {{{keys}}}, got {value!r}"
                    )
                values.update(
                    {f"{name}.{k}": _number(value[k], f"{name}.{k}", where) for k in spec.keys}
                )
            elif spec.keyed:  # one number for every leg, harmonic or frame
                values.update({f"{name}.{k}": _number(value, name, where) for k in spec.keys})
            else:
                values[name] = _number(value, name, where)
        for spec in SCHEMA:
            if spec.default is not None:
                for k in spec.keys:
                    values.setdefault(key_name(spec.name, k), spec.default)
        band = doc["speed_band_mps"]
        if not (isinstance(band, list) and len(band) == 2):
            raise GaitError(f"{where}: speed_band_mps must be [min, max], got {band!r}")
        try:
            return cls(
                gait=str(doc["gait"]),
                values=values,
                speed_band_mps=(float(band[0]), float(band[1])),
                symmetric=bool(doc.get("symmetric", True)),
                provenance=dict(doc.get("provenance", {})),
            )
        except GaitError as exc:
            raise GaitError(f"{where}: {exc}") from None


def _number(value: object, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GaitError(f"{where}: parameter {name!r} must be a number, got {value!r}")
    return float(value)


def _mirror(values: dict[str, float]) -> None:
    """Right legs copy the left ones; in a symmetric gait they lift off half a stride later."""
    for spec in SCHEMA:
        if spec.per_leg:
            for right, left in MIRROR.items():
                value = values[f"{spec.name}.{left}"]
                if spec.name == "swing_start_phase":
                    value = (value + 0.5) % 1.0
                values[f"{spec.name}.{right}"] = value


def _replace(p: GaitParams, **changes: object) -> GaitParams:
    from dataclasses import replace

    return replace(p, **changes)


def preset_names() -> list[str]:
    """Names of the gait presets shipped as TOML files."""
    return sorted(f.stem for f in PRESET_DIR.glob("*.toml"))
