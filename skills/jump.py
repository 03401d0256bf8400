"""Jumps onto and off platforms (issue 30): a state machine over the gaits' machinery. The
dog trots up to the edge (the gait controller), then a leap: the legs posed by PD toward
keyframe poses while the feet push through J^T (virtual forces in the world, mapped into each
leg frame), a flight with the fore legs reaching for the landing and the hind legs tucked,
a landing held in the standing pose with the feet carrying the body, and the trot again,
whose leg frames follow the ground under the feet."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from pathlib import Path

import numpy as np

from quadsim.controller.kinematics import quat_to_matrix, yaw_of
from quadsim.controller.loop import CHEST, Controller
from quadsim.controller.pd import ServoCommand, gain_arrays
from quadsim.controller.stand import leg_kinematics
from quadsim.controller.state import DogState
from quadsim.controller.terrain import GroundMap, platform_box
from quadsim.gaits.errors import GaitError
from quadsim.gaits.params import GaitParams
from quadsim.ik._rot import skew
from quadsim.models import GRAVITY_MPS2, Skeleton
from quadsim.skills.errors import PlanError, SkillError
from quadsim.skills.posture import STAND, pose_angles
from quadsim.skills.skillfile import JUMPS, SkillFile

FORE_FEET, HIND_FEET = [0, 1], [2, 3]
FRICTION = 0.8  # the feet's horizontal force at most this share of their vertical one
LANDED_WITHIN_M = 0.05  # a foot has landed when it touches the far side's ground this close


@dataclass(frozen=True)
class Leap:
    """How one kind of jump is done. Distances [m] along the heading, forces as multiples
    of the body's weight (all four feet together), times [s] from the leap's start.

    speed_mps: the approach's trot, trot_on_mps the trot's after the landing (slower: a
    6 m platform); trigger_m: the chest this far before the edge starts the leap. The fore
    feet push fore_up (up) until fore_push_s, then tuck (fore_tuck) and reach for the
    landing (fore_reach) from fore_reach_s; the hind feet push hind_up and hind_forward from
    hind_start_s for hind_push_s (posed hind_extend), then tuck (hind_tuck) and reach
    (hind_reach) once both hind feet are hind_clear_m past the edge, from hind_reach_s at
    the latest; the neck and head posed `head` throughout (up: a dog landing nose first
    hits the ground with it). Poses by joint kind, as skills' keyframes.

    The landing: a foot that touches the far side's ground after its push has landed, its
    leg eased to standing over land_ease_s. The landed feet carry the trunk as a damped
    spring (land_stiffness [1/s^2], land_damping [1/s]) to its height at launch over the
    far side's ground, ease its velocity toward trot_on_mps along x and 0 across, and turn
    it level with a moment of weight x leg length x (land_level [1/rad] x tilt -
    land_level_damping [s] x angular velocity): the forces shared by the landed feet by
    least squares, within a friction cone. settle_s: after the last foot lands, before the
    trot."""

    speed_mps: float
    trot_on_mps: float
    trigger_m: float
    fore_up: float
    fore_push_s: float
    fore_tuck: dict[str, float | str]
    fore_reach_s: float
    fore_reach: dict[str, float | str]
    hind_start_s: float
    hind_push_s: float
    hind_up: float
    hind_forward: float
    hind_extend: dict[str, float | str]
    hind_tuck: dict[str, float | str]
    hind_reach_s: float
    hind_reach: dict[str, float | str]
    hind_clear_m: float
    head: dict[str, float | str]
    land_ease_s: float
    settle_s: float
    land_stiffness: float
    land_damping: float
    land_level: float
    land_level_damping: float


STAND_FORE = {"shoulder_pitch": "stand", "elbow": "stand", "wrist": "stand"}
STAND_HIND = {"hip_pitch": "stand", "knee": "stand", "hock": "stand"}


POSES = ("fore_tuck", "fore_reach", "hind_extend", "hind_tuck", "hind_reach", "head")


def load_jump(name_or_path: str | Path) -> tuple[Leap, GaitParams]:
    """The leap of a jump's skill file (skills/presets/jump-onto.toml, jump-off.toml, or a
    tuned copy's path) and the trot it names (`gait`: a preset, or a gait file beside the
    skill file; "trot" if none), the one its leap was tuned with, for the approach and the
    trot on. A SkillError names what is missing, extra or of the wrong kind."""
    doc = SkillFile.load(name_or_path).doc
    if doc.get("skill") not in JUMPS or not isinstance(doc.get("leap"), dict):
        raise SkillError(
            f"{name_or_path}: a jump's skill file names skill {' or '.join(JUMPS)} "
            "and has a [leap] table"
        )
    table = doc["leap"]
    wanted = {f.name for f in fields(Leap)}
    needed = {f.name for f in fields(Leap) if f.default is MISSING}
    missing, extra = sorted(needed - set(table)), sorted(set(table) - wanted)
    if missing or extra:
        raise SkillError(
            f"{name_or_path}: its [leap] table lacks {', '.join(missing) or 'nothing'} and has "
            f"unknown {', '.join(extra) or 'nothing'}"
        )
    for name in wanted:  # numbers, and poses of numbers or "stand"
        value = table.get(name, 0.0)
        if name in POSES:
            angles = value.values() if isinstance(value, dict) else [None]
            ok, want = all(v == STAND or _is_number(v) for v in angles), "a pose {JOINT = angle}"
        else:
            ok, want = _is_number(value), "a number"
        if not ok:
            raise SkillError(f"{name_or_path}: leap.{name} must be {want}, got {value!r}")
    gait = doc.get("gait", "trot")
    if not isinstance(gait, str):
        raise SkillError(f"{name_or_path}: gait must name a trot preset or gait file, got {gait!r}")
    try:
        trot = GaitParams.load(gait)
    except GaitError as exc:
        raise SkillError(f"{name_or_path}: its gait: {exc}") from None
    if trot.gait != "trot":
        raise SkillError(f"{name_or_path}: its gait {gait!r} is a {trot.gait}; a jump trots")
    return Leap(**table), trot


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def gait_controller(skeleton: Skeleton, state: DogState, trot: GaitParams) -> Controller:
    """A controller of `trot` facing the dog's heading now, its speed ramp starting at the
    dog's forward speed (a trot resumed, not started from standing). It trots as on flat
    ground: the jumps were tuned so, and the leap crosses the edge itself."""
    c = Controller(skeleton, trot, dt=1e-3)
    c.command.heading_rad = float(yaw_of(state.base_quat[None])[0])
    return c


class JumpController:
    """Trots toward an edge `edge_x` [m] (along +x), leaps `kind` (jump-onto: up onto a
    platform `height` [m] high; jump-off: down from it), lands and trots on. `phase` says
    where it is: approach, launch, flight, land, trot; `times` when each began [s]."""

    def __init__(
        self,
        skeleton: Skeleton,
        ground_map: GroundMap,
        kind: str,
        edge_x: float,
        height: float,
        gait: Controller | None = None,
        source: str | Path | None = None,
    ) -> None:
        self.skeleton, self.ground_map = skeleton, ground_map
        self.kind, self.edge_x, self.height = kind, edge_x, height
        self.leap, self.trot = load_jump(kind if source is None else source)
        self.gait = gait
        self.phase = "approach"
        self.times: dict[str, float] = {}
        self.kp, self.kd = gain_arrays(skeleton)
        self.legs, self.leg_idx = leg_kinematics(skeleton)
        self.mass_kg = skeleton.total_mass
        self.weight_n = self.mass_kg * GRAVITY_MPS2
        self.trunk_height_m = 0.0  # the trunk's height over the ground at launch [m]
        self._base = skeleton.stand_angles()  # the leap's poses start from it (set at launch)
        self._poses: dict[tuple[str, str | None], np.ndarray] = {}  # made once each
        self._zero = np.zeros(len(self._base))
        self._landed = np.zeros(4, dtype=bool)
        # per landed pair: when it landed, its pose then and its standing pose
        self._land_from: dict[int, tuple[float, np.ndarray, np.ndarray]] = {}
        self.landing_z = ground_map.height(edge_x + 0.05, 0.0)  # the far side's ground [m]
        self.foot_radius = skeleton.spec.foot_radius

    # ------------------------------------------------------------------ the step

    def step(self, state: DogState) -> ServoCommand:
        if self.gait is None:
            self.gait = gait_controller(self.skeleton, state, self.trot)
        if self.phase == "approach":
            self.gait.command.speed_mps = self.leap.speed_mps
            chest_x = state.link_pos[CHEST, 0]
            if chest_x >= self.edge_x - self.leap.trigger_m:
                self._enter("launch", state)
            else:
                return self.gait.step(state)
        if self.phase == "trot":
            return self.gait.step(state)
        return self._leap_step(state)

    def _enter(self, phase: str, state: DogState) -> None:
        self.phase = phase
        self.times[phase] = state.t
        if phase == "launch":
            self._base = pose_angles(self.skeleton, state.q, self.leap.head)
            x, y, z = self._trunk_middle(state)
            self.trunk_height_m = float(z - self.ground_map.height(x, y))
        elif phase == "trot":
            speed = float(state.base_vel[0])
            self.gait = gait_controller(self.skeleton, state, self.trot)
            self.gait.state.speed = min(max(speed, 0.0), self.leap.speed_mps)
            self.gait.command.speed_mps = self.leap.trot_on_mps

    def _leap_step(self, state: DogState) -> ServoCommand:
        """The leap: the fore and hind legs each push (through J^T), tuck and reach for the
        landing on their own clocks (PD toward the poses); a foot that lands after its push
        stands and carries its share of the body."""
        leap, sk = self.leap, self.skeleton
        since = state.t - self.times["launch"]
        push = np.zeros((4, 3))  # what each foot pushes on the ground [N, world]
        half = self.weight_n / 2
        if since < leap.fore_push_s:
            push[FORE_FEET, 2] = -leap.fore_up * half
            fore = "stand"
        else:
            fore = "fore_reach" if since >= leap.fore_reach_s else "fore_tuck"
        hind_end = leap.hind_start_s + leap.hind_push_s
        hind = None
        if leap.hind_start_s <= since < hind_end:
            push[HIND_FEET] = (-leap.hind_forward * half, 0.0, -leap.hind_up * half)
            hind = "hind_extend"
        elif since >= hind_end:
            clear = state.foot_pos[HIND_FEET, 0].min() >= self.edge_x + leap.hind_clear_m
            hind = "hind_reach" if clear or since >= leap.hind_reach_s else "hind_tuck"
        pose = self._leap_pose(fore, hind)
        pushed = np.array([since >= leap.fore_push_s] * 2 + [since >= hind_end] * 2)
        on_far_side = (state.foot_pos[:, 0] > self.edge_x) & (
            np.abs(state.foot_pos[:, 2] - self.foot_radius - self.landing_z) < LANDED_WITHIN_M
        )
        self._landed |= pushed & on_far_side & state.foot_contact & (since > hind_end)
        for pair, stand in ((FORE_FEET, STAND_FORE), (HIND_FEET, STAND_HIND)):
            if self._landed[pair].any():  # eased to standing: straightening at once kicks
                key = pair[0]
                if key not in self._land_from:
                    self._land_from[key] = (state.t, pose, pose_angles(sk, pose, stand))
                t0, before, standing = self._land_from[key]
                a = min((state.t - t0) / leap.land_ease_s, 1.0)
                idx = self.leg_idx[pair].ravel()
                pose = pose.copy()  # the cached poses stay as made
                pose[idx] = (before + (standing - before) * a * a * (3 - 2 * a))[idx]
        down = self._landed & state.foot_contact
        if down.any():
            if self.phase == "launch":
                self.phase, self.times["land"] = "land", state.t
            push[down] = -self._share(state, down, self._landing_force(state))
        if self._landed.all():
            self.times.setdefault("all_down", state.t)
            if state.t - self.times["all_down"] >= leap.settle_s:
                self._enter("trot", state)
                return self.gait.step(state)
        tau = self._through_legs(state, push)
        return ServoCommand(tau, pose, self._zero, self.kp, self.kd)

    def _leap_pose(self, fore: str, hind: str | None) -> np.ndarray:
        """The joint targets of the fore legs' pose `fore` ("stand" or a Leap pose's name)
        and the hind legs' `hind` (None: as at launch) on the launch pose with the leap's
        head, made the first time they are asked for (read-only: callers copy to change)."""
        pose = self._poses.get((fore, hind))
        if pose is None:
            sk, leap = self.skeleton, self.leap
            fore_pose = STAND_FORE if fore == "stand" else getattr(leap, fore)
            pose = pose_angles(sk, self._base, fore_pose)
            if hind is not None:
                pose = pose_angles(sk, pose, getattr(leap, hind))
            pose.setflags(write=False)
            self._poses[(fore, hind)] = pose
        return pose

    def _trunk_velocity(self, state: DogState) -> np.ndarray:
        """The trunk's velocity [m/s]: the mean of the chest's and the pelvis's."""
        return (state.link_vel[CHEST] + state.base_vel) / 2

    def _landing_force(self, state: DogState) -> np.ndarray:
        """The force [N, world] the landed feet give the trunk: a damped spring to the
        trunk's height at launch over the far side's ground, up, and its velocity eased
        toward trot_on_mps along x and 0 across."""
        leap = self.leap
        error = self.landing_z + self.trunk_height_m - self._trunk_middle(state)[2]
        v = self._trunk_velocity(state)
        accel = np.array(
            [
                leap.land_damping * (leap.trot_on_mps - v[0]),
                -leap.land_damping * v[1],
                leap.land_stiffness * error - leap.land_damping * v[2],
            ]
        )
        force = self.mass_kg * accel
        force[2] += self.weight_n
        return force

    def _share(self, state: DogState, feet: np.ndarray, force: np.ndarray) -> np.ndarray:
        """The ground reactions [N, world] (one row per foot of `feet`) that together give
        the trunk `force` and the levelling moment (_level_moment) about its middle: the
        least-norm solution, each then kept pushing (up) and within FRICTION of it."""
        r = state.foot_pos[feet] - self._trunk_middle(state)
        n = len(r)
        A = np.vstack([np.tile(np.eye(3), n), np.hstack(skew(r))])  # force and moment of f
        wrench = np.concatenate([force, self._level_moment(state)])
        f = (A.T @ np.linalg.solve(A @ A.T + 1e-6 * np.eye(6), wrench)).reshape(n, 3)
        f[:, 2] = np.maximum(f[:, 2], 0.0)
        along = np.linalg.norm(f[:, :2], axis=1)
        f[:, :2] *= np.minimum(1.0, FRICTION * f[:, 2] / np.maximum(along, 1e-9))[:, None]
        return f

    def _trunk_middle(self, state: DogState) -> np.ndarray:
        """The middle of the trunk [m]: between the chest's and the pelvis's frames."""
        return (state.link_pos[CHEST] + state.base_pos) / 2

    def _level_moment(self, state: DogState) -> np.ndarray:
        """The moment [N m, world] that turns the trunk (chest and pelvis) level and stops
        its turning: W L (land_level x tilt - land_level_damping x angular velocity)."""
        up = quat_to_matrix(state.link_quat[CHEST])[:, 2] + quat_to_matrix(state.base_quat)[:, 2]
        up /= np.linalg.norm(up)
        rate = (state.link_angvel[CHEST] + state.base_angvel) / 2
        tilt = np.cross(up, (0.0, 0.0, 1.0))  # rotating by this levels the trunk
        scale = self.weight_n * self.skeleton.spec.leg_length
        return scale * (self.leap.land_level * tilt - self.leap.land_level_damping * rate)

    def _through_legs(self, state: DogState, push_world: np.ndarray) -> np.ndarray:
        """Joint torques [N*m] making each foot push `push_world` (4, 3) [N] on the ground:
        tau = J^T F in each leg's frame (the chest's for the fore legs, the pelvis's for the
        hind)."""
        R_front = quat_to_matrix(state.link_quat[CHEST])
        R_back = quat_to_matrix(state.base_quat)
        R = np.stack([R_front, R_front, R_back, R_back])
        force_leg = np.einsum("kji,kj->ki", R, push_world)
        _, jac = self.legs.foot_jacobian(state.q[self.leg_idx])
        tau = np.zeros(len(self._base))
        tau[self.leg_idx] += np.einsum("kij,ki->kj", jac, force_leg)
        return tau

    def done(self, t: float) -> bool:
        """Whether the trot after the landing has lasted TROT_ON_S by time `t` [s]."""
        return self.phase == "trot" and t >= self.times["trot"] + TROT_ON_S

    def log_fields(self, state: DogState) -> dict[str, float]:
        order = ("approach", "launch", "land", "trot")
        return {"jump_phase": float(order.index(self.phase))}


# ---------------------------------------------------------------------- platforms and plans

PLATFORM_LENGTH_M, PLATFORM_WIDTH_M = 6.0, 3.0
MAX_PLATFORM_M = 1.0  # [m] higher than a dog of 0.5 m legs could jump onto or off
TROT_ON_S = 3.0  # [s] the trot after the landing that the outcome asks for
FOOT_ON_TOP_M = 0.03  # a foot stands on the top when its lowest point is this close to it
PELVIS_FLOOR = 0.45  # the pelvis never below this fraction of its standing height


@dataclass(frozen=True)
class Platform:
    """A platform across the dog's path: its near edge at x = `x_m` [m], `height_m` [m]
    high, `length_m` long (along x) and `width_m` wide, centred on y = 0."""

    x_m: float
    height_m: float
    length_m: float = PLATFORM_LENGTH_M
    width_m: float = PLATFORM_WIDTH_M

    @staticmethod
    def parse(text: str) -> Platform:
        """A platform from "X:H" (its edge's x and its height [m]); PlanError otherwise."""
        parts = text.split(":")
        try:
            if len(parts) != 2:
                raise ValueError
            x, height = float(parts[0]), float(parts[1])
        except ValueError:
            raise PlanError(
                f"platform {text!r} must look like X:H, e.g. 4:0.3 (its edge's x [m] and its "
                "height [m])"
            ) from None
        if not (math.isfinite(x) and -100.0 <= x <= 100.0):
            raise PlanError(f"platform {text!r}: its edge's x must lie in [-100, 100] m")
        if not (math.isfinite(height) and 0.0 < height <= MAX_PLATFORM_M):
            raise PlanError(f"platform {text!r}: its height must lie in (0, {MAX_PLATFORM_M:g}] m")
        return Platform(x, height)

    def box(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """Its box: centre and half extents [m]."""
        return platform_box(self.x_m, self.length_m, self.height_m, self.width_m)


def ground_of(platforms: Sequence[Platform]) -> GroundMap:
    """The ground map of `platforms` on flat ground (what the World builds of them)."""
    ground = GroundMap()
    for p in platforms:
        ground.add_box(*p.box())
    return ground


@dataclass(frozen=True)
class Edge:
    """Where a jump goes: the edge's x [m], the ground's height before and after it [m]."""

    x_m: float
    before_m: float
    after_m: float


def edges_for(kinds: Sequence[str], platforms: Sequence[Platform], start_x: float) -> list[Edge]:
    """The edge each jump of `kinds` (in order) takes: the next edge ahead along +x of where
    the last jump left the dog, a step up for jump-onto and a step down for jump-off. A
    PlanError names a jump with no edge ahead or the wrong kind of edge there."""
    ground = ground_of(platforms)
    xs = sorted({p.x_m for p in platforms} | {p.x_m + p.length_m for p in platforms})
    edges, x = [], start_x
    for n, kind in enumerate(kinds):
        ahead = [
            Edge(e, ground.height(e - 0.01, 0.0), ground.height(e + 0.01, 0.0)) for e in xs if e > x
        ]
        ahead = [e for e in ahead if abs(e.after_m - e.before_m) > 0.02]
        if not ahead:
            raise PlanError(
                f"jump {n + 1} ({kind}) has no edge ahead of x = {x:g} m: give platforms "
                "with --platform X:H"
            )
        edge, up = ahead[0], ahead[0].after_m > ahead[0].before_m
        if up != (kind == "jump-onto"):
            raise PlanError(
                f"jump {n + 1} ({kind}): the next edge ahead, at x = {edge.x_m:g} m, is a step "
                f"{'up' if up else 'down'}; use {'jump-onto' if up else 'jump-off'} there"
            )
        edges.append(edge)
        x = edge.x_m
    return edges


def judge_jump(
    log: Mapping[str, np.ndarray],
    kind: str,
    edge: Edge,
    times: Mapping[str, float],
    end_s: float,
    ground: GroundMap,
    stand_height_m: float,
    foot_radius_m: float,
) -> dict:
    """The jump's outcome from the run log: the trot resumed after the landing and lasted
    TROT_ON_S without a fall; all four feet stood on the far side's ground (their contacts
    in the trot within FOOT_ON_TOP_M of its height); the pelvis stayed above PELVIS_FLOOR of
    its standing height over the ground under it."""
    t = np.asarray(log["t"])
    start = times.get("launch", end_s)
    resumed = times.get("trot")
    base = np.asarray(log["base_pos"])
    during = (t >= start) & (t <= end_s)
    clearance = [(z - ground.height(x, y)) / stand_height_m for x, y, z in base[during].tolist()]
    pelvis_min = min(clearance) if clearance else math.nan
    figures: dict = {
        "edge_x_m": round(edge.x_m, 3),
        "height_m": round(abs(edge.after_m - edge.before_m), 3),
        "launch_s": round(start, 3),
        "trot_resumed_s": None if resumed is None else round(resumed, 3),
        "pelvis_min": round(pelvis_min, 3),
    }
    if resumed is None:
        return {"ok": False, **figures}
    trot = (t >= resumed) & (t <= end_s)
    trotted = float(t[trot][-1] - resumed) if trot.any() else 0.0
    feet = np.asarray(log["foot_pos"])[trot]
    contact = np.asarray(log["foot_contact"])[trot]
    off_by = []
    for k in range(4):
        down = feet[contact[:, k], k]
        beyond = down[down[:, 0] > edge.x_m + foot_radius_m]
        off_by.append(
            float(np.median(beyond[:, 2] - foot_radius_m) - edge.after_m)
            if len(beyond)
            else math.inf
        )
    figures |= {
        "trotted_s": round(trotted, 3),
        "feet_height_error_m": [round(e, 3) if math.isfinite(e) else None for e in off_by],
    }
    ok = (
        trotted >= TROT_ON_S - 0.05
        and all(abs(e) <= FOOT_ON_TOP_M for e in off_by)
        and pelvis_min >= PELVIS_FLOOR
    )
    return {"ok": bool(ok), **figures}
