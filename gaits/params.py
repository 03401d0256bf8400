"""GaitParams: every number of a gait, typed, documented and bounded, with a unit-box view.

A gait file is TOML, one gait per file (schema 2)::

    schema_version = 2
    gait = "trot"
    speed_band_mps = [1.0, 2.5]
    symmetric = true

    [params]
    period_s = 0.36384  # stride period T
    swing_height_m = { fore = 0.09, hind = 0.1 }  # foot lift at mid-swing
    kp_height_N_per_m = { front = 6000.0, back = 8000.0 }
    height_back_wave_m = { h2 = 0.012 }
    ...

    [provenance]
    command = "quadsim optimize --gait trot ..."
    seed = 3
    ...

Units are in the key names; each line's comment says what the number moves. Parameters at
their default (ParamSpec.default: waves, steering, the pull limit, the swing shape) are left
out. A per-leg parameter is one number for all four legs, a table {fore, hind}, or a table
keyed LF, RF, LH, RH; a per-frame one is one number or {front, back}; a stride wave
(gaits/waves.py) is a table of its harmonics h1..h4, those left out 0. Floats are written to
5 significant digits. Phases live on the circle [0, 1). A symmetric gait ties right to left:
its free vector holds only the left legs' values and `from_unit` mirrors them, the right
legs lifting off half a stride after the left ones.

Schema 1 files (every key written out, one table per per-leg parameter) still load, and so
do files with parameters that were since renamed or retired.
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
from quadsim.gaits.scaling import froude_factor, speed_factor
from quadsim.gaits.waves import HARMONICS, WAVES, amplitude_name, phase_name

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
SIGNIFICANT_DIGITS = 5
PRESET_DIR = Path(__file__).parent / "presets"
# each preset's speed in the middle of its use on the shepherd [m/s]: benchmarks and tests
NOMINAL_SPEED_MPS: dict[str, float] = {
    "walk": 1.0,
    "trot": 2.0,
    "pace": 1.5,
    "canter": 3.0,
    "transverse-gallop": 4.5,
    "rotary-gallop": 5.0,
}
MIRROR = {"RF": "LF", "RH": "LH"}
LEG_GROUPS = {"fore": ("LF", "RF"), "hind": ("LH", "RH")}  # shorthand keys of per-leg tables
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
    circular: bool = False  # a phase: lower 0, upper 1, values wrap onto [0, 1)

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

    def bounds(self, length_ratio: float = 1.0, mass_ratio: float = 1.0) -> tuple[float, float]:
        """(lower, upper) for a dog `length_ratio` times as long and `mass_ratio` times as
        heavy as the one the bounds are written for (Froude-scaled, gaits/scaling.py)."""
        if length_ratio == 1.0 and mass_ratio == 1.0:  # the shepherd's: no work per value
            return self.lower, self.upper
        factor = froude_factor(self.name, length_ratio, mass_ratio)
        return self.lower * factor, self.upper * factor


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
                1.0,
                f"{moves} over the stride: phase where harmonic n peaks",
                default=0.0,
                per_harmonic=True,
                circular=True,
            )
        )
    return tuple(specs)


# name (units in the suffix), bounds, meaning. Order fixes the vector layout.
SCHEMA: tuple[ParamSpec, ...] = (
    ParamSpec("period_s", 0.2, 1.5, "stride period T"),
    ParamSpec(
        "swing_start_phase", 0.0, 1.0, "phase at which the leg lifts off", True, circular=True
    ),
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
        "spine_torque_share",
        0.0,
        1.0,
        "share of the chest's pitch and yaw torque the spine applies (the rest: the fore legs)",
        default=0.0,
    ),
    ParamSpec(
        "ground_pitch_share",
        0.0,
        1.0,
        "share of the slope of the ground under the feet the body pitches with (terrain)",
        default=0.0,
    ),
    ParamSpec(
        "hip_ground_share",
        0.0,
        1.0,
        "share of each frame's height taken over the land under its hips, not its feet (terrain)",
        default=0.0,
    ),
    ParamSpec(
        "stance_push_fwd",
        -0.5,
        0.5,
        "forward force a stance foot adds at mid-stance, in its frame's weights",
        True,
        0.0,
    ),
    ParamSpec(
        "stance_push_up",
        -0.5,
        0.5,
        "upward force a stance foot adds at mid-stance, in its frame's weights",
        True,
        0.0,
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
    ParamSpec(
        "turn_lean",
        0.0,
        1.5,
        "share of the lean h v w / g by which the feet land outward in a turn",
        default=0.0,
    ),
    ParamSpec(
        "quicken_s_per_m",
        0.0,
        4.0,
        "share by which the stride clock speeds up per m/s of the pelvis's velocity error "
        "beyond quicken_deadband_mps (at most doubled): quicker steps out of a push",
        default=0.0,
    ),
    ParamSpec(
        "turn_quicken_s_per_rad",
        0.0,
        1.0,
        "share by which the stride clock speeds up per rad/s of turn (with a push's "
        "quickening at most doubled): shorter strides in a turn",
        default=0.0,
    ),
    ParamSpec(
        "quicken_deadband_mps",
        0.05,
        1.5,
        "velocity error the stride clock does not quicken for",
        default=0.3,
    ),
    ParamSpec(
        "stride_speed_exponent",
        0.0,
        1.5,
        "how the stride period falls with the commanded speed v above v_ref: "
        "period_s (v_ref / v)^e up to v = 2 v_ref (0: one period; 1: one stride length)",
        default=0.0,
    ),
    ParamSpec(
        "stride_speed_ref_mps",
        0.3,
        8.0,
        "the speed v_ref up to which the stride lasts period_s",
        default=2.0,
    ),
    ParamSpec(
        "stance_extend_max_m",
        0.005,
        2.0,
        "farthest a stance leg reaches beyond its foot at once, to pose its frame at the "
        "desired height and tilt (1: no limit; small: no kick landing under a tilted body)",
        default=1.0,
    ),
    ParamSpec("spine_stiffness", 0.2, 3.0, "scale of the spine PD gains"),
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
# parameters that older files carry and nothing reads any more: skipped on load
RETIRED = ("spine_front_share",)


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
    `length_ratio` and `mass_ratio` say which dog the numbers are for: 1 for the shepherd
    the schema's bounds are written for, else the dog they were Froude-scaled to
    (`scaled_to`), whose bounds scale with them.
    """

    gait: str
    values: Mapping[str, float]
    speed_band_mps: tuple[float, float]
    symmetric: bool = True
    free: tuple[str, ...] | None = None
    provenance: Mapping[str, object] = field(default_factory=dict)
    length_ratio: float = 1.0
    mass_ratio: float = 1.0

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
            lower, upper = self.bounds_of(spec)
            if not lower <= value <= upper or (spec.circular and value == upper):
                raise GaitError(
                    f"parameter {flat} = {value} of gait {self.gait!r} is outside "
                    f"its bounds [{lower}, {upper}{')' if spec.circular else ']'} "
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

    # ------------------------------------------------------------------ scale
    def bounds_of(self, spec: ParamSpec) -> tuple[float, float]:
        """The bounds of `spec` for the dog this gait is scaled to."""
        return spec.bounds(self.length_ratio, self.mass_ratio)

    def scaled_to(self, length_ratio: float, mass_ratio: float) -> GaitParams:
        """This gait for a dog whose legs are `length_ratio` times as long and whose mass
        is `mass_ratio` times as large, at the same Froude number: every parameter and the
        speed band scaled by its unit (gaits/scaling.py); ratios relative to this gait's
        dog, so scaling by 1 and 1 gives the gait back."""
        values = {
            flat: value * froude_factor(flat, length_ratio, mass_ratio)
            for flat, value in self.values.items()
        }
        speed = speed_factor(length_ratio)
        lo, hi = self.speed_band_mps
        return _replace(
            self,
            values=values,
            speed_band_mps=(lo * speed, hi * speed),
            length_ratio=self.length_ratio * length_ratio,
            mass_ratio=self.mass_ratio * mass_ratio,
        )

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
            raise GaitError(
                f"speed {speed_mps} m/s is outside the {self.gait} band "
                f"{round(lo, 3)}-{round(hi, 3)} m/s"
            )

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
            lower, upper = self.bounds_of(SPEC_BY_NAME[flat.split(".")[0]])
            out.append((self.values[flat] - lower) / (upper - lower))
        return np.array(out)

    @classmethod
    def from_unit(cls, x: np.ndarray, template: GaitParams) -> GaitParams:
        """`template` with its free parameters set from the unit-box vector `x` (clipped;
        phases wrapped onto their circle): every vector of the box is a valid gait."""
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
            lower, upper = template.bounds_of(spec)
            value = float(lower + u * (upper - lower))
            values[flat] = value % 1.0 if spec.circular else value
        if template.symmetric:
            _mirror(values)
        return _replace(template, values=values)

    # ------------------------------------------------------------------ files
    def to_toml(self, provenance: Mapping[str, object] | None = None) -> str:
        """The gait file: defaults left out, shorthand where legs or frames share a value,
        floats to 5 significant digits, each parameter's meaning in a comment."""
        lines = [
            "# quadsim gait file; units in the key names, defaults left out (gaits/params.py)",
            f"schema_version = {SCHEMA_VERSION}",
            f"gait = {_toml_value(self.gait)}",
            f"speed_band_mps = {_toml_value(list(self.speed_band_mps))}",
            f"symmetric = {_toml_value(self.symmetric)}",
        ]
        if (self.length_ratio, self.mass_ratio) != (1.0, 1.0):  # exact: the bounds hang on them
            lines.append(f"dog_length_ratio = {self.length_ratio!r}  # legs against the shepherd's")
            lines.append(f"dog_mass_ratio = {self.mass_ratio!r}  # mass against the shepherd's")
        lines += ["", "[params]"]
        for spec in SCHEMA:
            value = self._written(spec)
            if value is not None:
                lines.append(f"{spec.name} = {_toml_value(value)}  # {spec.doc}")
        prov = dict(provenance if provenance is not None else self.provenance)
        if prov:
            lines += ["", "[provenance]"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in prov.items() if v is not None]
        return "\n".join(lines) + "\n"

    def _written(self, spec: ParamSpec) -> object:
        """How `spec` is written: a number, a shorthand table, or None (at its default)."""
        if not spec.keyed:
            value = self.values[spec.name]
            return None if value == spec.default else value
        by_key = {k: self.values[key_name(spec.name, k)] for k in spec.keys}
        if spec.per_harmonic:
            table = {k: v for k, v in by_key.items() if v != spec.default}
            return table or None
        if spec.default is not None and all(v == spec.default for v in by_key.values()):
            return None
        if len(set(by_key.values())) == 1:
            return next(iter(by_key.values()))
        if spec.per_leg and all(len({by_key[k] for k in g}) == 1 for g in LEG_GROUPS.values()):
            return {name: by_key[legs[0]] for name, legs in LEG_GROUPS.items()}
        return by_key

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
        if version not in READABLE_VERSIONS:
            raise GaitError(
                f"{where}: schema_version must be one of {READABLE_VERSIONS}, got {version!r}"
            )
        for key in ("gait", "params", "speed_band_mps"):
            if key not in doc:
                raise GaitError(f"{where}: missing key {key!r}")
        values: dict[str, float] = {}
        for name, value in doc["params"].items():
            if name in RETIRED:
                continue
            if name in RENAMED:
                values[f"{RENAMED[name]}.{HARMONICS[0]}"] = _number(value, name, where)
                continue
            spec = SPEC_BY_NAME.get(name)
            if spec is None:
                raise GaitError(
                    f"{where}: unknown parameter {name!r}; known: {', '.join(SPEC_BY_NAME)}"
                )
            if spec.keyed:
                values.update(_keyed_values(spec, value, where))
            else:
                values[name] = _number(value, name, where)
        for spec in SCHEMA:
            if spec.default is not None:
                for k in spec.keys:
                    values.setdefault(key_name(spec.name, k), spec.default)
        for flat, value in values.items():  # a phase written as 1.0 (rounded) is phase 0
            if value == 1.0 and SPEC_BY_NAME[flat.split(".")[0]].circular:
                values[flat] = 0.0
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
                length_ratio=_number(doc.get("dog_length_ratio", 1.0), "dog_length_ratio", where),
                mass_ratio=_number(doc.get("dog_mass_ratio", 1.0), "dog_mass_ratio", where),
            )
        except GaitError as exc:
            raise GaitError(f"{where}: {exc}") from None


def _keyed_values(spec: ParamSpec, value: object, where: str) -> dict[str, float]:
    """The flat values of a per-leg, per-frame or per-harmonic parameter written as one
    number or as a table (per-leg tables may use the shorthand keys fore and hind; keys
    left out of a table take the parameter's default, where it has one)."""
    if not isinstance(value, Mapping):
        number = _number(value, spec.name, where)
        return {key_name(spec.name, k): number for k in spec.keys}
    allowed = set(spec.keys) | (set(LEG_GROUPS) if spec.per_leg else set())
    table: dict[str, float] = {}
    for key, item in value.items():
        if key not in allowed:
            raise GaitError(
                f"{where}: parameter {spec.name!r} has no key {key!r}; "
                f"use one number or a table with keys {', '.join(sorted(allowed))}"
            )
        number = _number(item, f"{spec.name}.{key}", where)
        for k in LEG_GROUPS.get(key, (key,)):
            table.setdefault(k, number)
    for key in [k for k in value if k in spec.keys]:  # a leg named on its own wins
        table[key] = _number(value[key], f"{spec.name}.{key}", where)
    missing = [k for k in spec.keys if k not in table]
    if missing and spec.default is None:
        raise GaitError(
            f"{where}: parameter {spec.name!r} lacks {', '.join(missing)}; give one number "
            f"or a table with keys {', '.join(sorted(allowed))}"
        )
    return {key_name(spec.name, k): table[k] for k in spec.keys if k in table}


def _toml_value(value: object) -> str:
    """One TOML value: floats to 5 significant digits, tables inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = f"{value:.{SIGNIFICANT_DIGITS}g}"
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return tomli_w.dumps({"v": value})[4:].strip()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} to a gait file")


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
