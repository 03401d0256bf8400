"""Getting up after a fall (issue 30): the dog lies on its side (or first rolls there from
its back), rolls onto its chest and stands up, by the keyframes of presets/get-up.toml
(written for lying on the right side and mirrored for the left), played by the posture
controller: joint torques only."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from quadsim.controller.kinematics import quat_to_matrix, yaw_of
from quadsim.controller.sim import World
from quadsim.models import Skeleton
from quadsim.skills.posture import Skill, Timeline

GET_UP = "get-up"
SIDE_START_ROLL_RAD = math.pi / 2  # lying on the right side, as after a fall
STERNAL_MIN_UP = 0.7  # the trunk's up axis this far up: on its chest, no roll needed
BACK_MAX_UP = -0.5  # the trunk's up axis this far down (rolled 120 degrees): on its back
MIRRORED_KINDS = ("roll", "yaw")  # joints about the body's long or vertical axis change sign
GET_UP_WITHIN_S = 6.0  # [s] standing again (chest and pelvis at 90%) this long after the start
WALK_AFTER = ("walk", 1.0, 4.0)  # the walk after `quadsim skill get-up`: gait, m/s, s
WALK_JUDGED_S = 3.0  # [s] at the walk's end, once its speed has ramped up, judged at speed
SPEED_TOLERANCE = 0.15


def side_down(base_quat: np.ndarray) -> int:
    """Which side the trunk lies on: +1 the right (its left side up), -1 the left, 0 on its
    chest or feet (its up axis at least STERNAL_MIN_UP up)."""
    R = quat_to_matrix(np.asarray(base_quat, dtype=float))
    if R[2, 2] >= STERNAL_MIN_UP:
        return 0
    return 1 if R[2, 1] >= 0.0 else -1


def mirror_pose(skeleton: Skeleton, q: np.ndarray) -> np.ndarray:
    """Joint angles [rad] of the pose mirrored left for right: each leg's angles go to the
    other side's leg, and the roll and yaw angles change sign."""
    names = skeleton.joint_names
    out = np.empty_like(q)
    for i, joint in enumerate(skeleton.joints):
        name = joint.name
        if name[:2] in ("LF", "RF", "LH", "RH"):
            twin = ("R" if name[0] == "L" else "L") + name[1:]
            value = q[names.index(twin)]
        else:
            value = q[i]
        out[i] = -value if joint.kind.endswith(MIRRORED_KINDS) else value
    return out


@dataclass(frozen=True)
class GetUpPlan:
    """The get-up on the run's clock: the timeline, when the roll onto the chest ends (lying
    on the side is no fall until then) and when the dog should be standing."""

    timeline: Timeline
    rolled_s: float
    up_s: float


def get_up_timeline(
    skeleton: Skeleton, q: np.ndarray, base_quat: np.ndarray, t: float
) -> GetUpPlan:
    """The get-up from joint angles `q` [rad] and the trunk's orientation at time `t` [s]:
    on its side, the roll and the rise (mirrored when it lies on its left); on its back,
    first the roll over onto the side it leans to; on its chest, only the last roll
    keyframe (the lying pose) and the rise."""
    skill = Skill.load(GET_UP)
    side = side_down(base_quat)
    mirrored = side < 0
    start = mirror_pose(skeleton, q) if mirrored else q.copy()
    timeline = Timeline(skeleton, start_s=t, pose=start)
    timeline.supports[0] = 0.0  # lying: the feet carry nothing yet
    trunk_up = quat_to_matrix(np.asarray(base_quat, dtype=float))[2, 2]
    on_its_side = timeline.add(skill.over, t) if trunk_up <= BACK_MAX_UP else t
    into = skill.into if side != 0 else (skill.into[-1],)
    rolled = timeline.add(into, on_its_side)
    up = timeline.add(skill.out, rolled + skill.hold_s)
    if mirrored:
        timeline.poses = [mirror_pose(skeleton, p) for p in timeline.poses]
    return GetUpPlan(timeline, rolled, up)


def place_on_side(world: World, rng: np.random.Generator, noise_rad: float = 0.01) -> None:
    """Put the dog at rest on its right side in its standing pose (legs out, relaxed), by
    the World's placement with the trunk rolled, and remember the standing heights."""
    q = world.skeleton.stand_angles() + rng.normal(0.0, noise_rad, world.n_joints)
    world.place_dog(q, roll=SIDE_START_ROLL_RAD)
    world.getting_up = True  # from the first step on: the start is no fall


def standing_heights(spec: str) -> np.ndarray:
    """The pelvis's and chest's link heights [m] of the dog standing (placed in a World of
    its own): the reference of "standing again" for a run that starts lying."""
    with World(spec) as world:
        world.place_dog(world.skeleton.stand_angles())
        return world.trunk_heights()


def along_heading(log: dict, start_s: float, end_s: float) -> np.ndarray:
    """The trunk's speed [m/s] at each logged sample from `start_s` to `end_s` along the
    heading the dog had at `start_s` (a get-up leaves it facing wherever the roll turned it)."""
    t = np.asarray(log["t"])
    w = (t >= start_s) & (t <= end_s)
    if not w.any():
        return np.zeros(0)
    heading = float(yaw_of(np.asarray(log["base_quat"])[w][:1])[0])
    vel = np.asarray(log["base_vel"])[w]
    return vel[:, 0] * math.cos(heading) + vel[:, 1] * math.sin(heading)


def walk_speed(log: dict, start_s: float, end_s: float) -> float:
    """Mean speed [m/s] from `start_s` to `end_s` along the heading the dog had at
    `start_s`."""
    along = along_heading(log, start_s, end_s)
    return float(np.mean(along)) if len(along) else 0.0
