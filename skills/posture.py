"""Skill files and the posture controller that plays them: joint PD toward poses eased from
keyframe to keyframe, plus each foot pushing down its share of a fraction of the body's
weight through J^T (the stand controller's support, faded out while the body rests on the
ground and back in to rise)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quadsim.controller.pd import ServoCommand
from quadsim.controller.stand import StandController
from quadsim.controller.state import DogState
from quadsim.models import Skeleton
from quadsim.skills.errors import SkillError
from quadsim.skills.skillfile import JUMPS, PRESET_DIR, read_skill, skill_file

STAND = "stand"  # a pose value: the joint's standing angle


def skill_names() -> list[str]:
    """The posture skills' names (the jumps' files are skills/jump.py's)."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml") if p.stem not in JUMPS)


@dataclass(frozen=True)
class Keyframe:
    """A pose reached at `t_s` [s]: joint kinds or names -> angle [rad] or "stand"; joints it
    does not name keep the previous keyframe's angle. `support` in [0, 1.5]."""

    t_s: float
    support: float
    pose: dict[str, float | str]


@dataclass(frozen=True)
class Skill:
    """A skill file: keyframes `into` the posture from standing, the posture held `hold_s`
    [s], keyframes `out` of it back to standing; `start_from` names the skill whose posture
    this one starts in, `out_from` the skill whose way out this one takes; `over` (the
    get-up's) rolls the dog from its back onto its side, before `into`."""

    name: str
    hold_s: float
    into: tuple[Keyframe, ...]
    out: tuple[Keyframe, ...]
    start_from: str | None = None
    out_from: str | None = None
    over: tuple[Keyframe, ...] = ()

    @staticmethod
    def load(name: str) -> Skill:
        if name not in skill_names():
            raise SkillError(f"unknown skill {name!r}; skills: {', '.join(skill_names())}")
        path, data = skill_file(name), read_skill(name)

        def frames(key: str) -> tuple[Keyframe, ...]:
            out = tuple(
                Keyframe(float(k["t_s"]), float(k["support"]), dict(k["pose"]))
                for k in data.get(key, [])
            )
            times = [k.t_s for k in out]
            if any(b <= a for a, b in zip([0.0, *times], times, strict=False)):
                raise SkillError(f"{path}: the {key} keyframes' t_s must rise from 0, got {times}")
            if any(not 0.0 <= k.support <= 1.5 for k in out):
                raise SkillError(f"{path}: a keyframe's support must lie in [0, 1.5]")
            return out

        return Skill(
            data["skill"],
            float(data["hold_s"]),
            frames("into"),
            frames("out"),
            data.get("start_from"),
            data.get("out_from"),
            frames("over"),
        )


def pose_angles(
    skeleton: Skeleton, previous: np.ndarray, pose: dict[str, float | str]
) -> np.ndarray:
    """`previous` joint angles with the joints that `pose` names (by joint name, else by
    kind) set to its angles or back to standing."""
    q, stand = previous.copy(), skeleton.stand_angles()
    kinds = {j.kind for j in skeleton.joints}
    for key, value in pose.items():
        if key in skeleton.joint_names:
            chosen = [skeleton.joint_index(key)]
        elif key in kinds:
            chosen = [i for i, j in enumerate(skeleton.joints) if j.kind == key]
        else:
            raise SkillError(f"a skill pose names {key!r}, which is no joint or joint kind")
        for i in chosen:
            q[i] = stand[i] if value == STAND else float(value)
    return q


class Timeline:
    """Keyframes on the run's clock: (time [s], joint angles, support), from `pose`
    (standing if None) at `start_s`."""

    def __init__(
        self, skeleton: Skeleton, start_s: float = 0.0, pose: np.ndarray | None = None
    ) -> None:
        self.skeleton = skeleton
        self.times = [start_s]
        self.poses = [skeleton.stand_angles() if pose is None else pose]
        self.supports = [1.0]

    @property
    def end_s(self) -> float:
        return self.times[-1]

    def add(self, frames: tuple[Keyframe, ...], start_s: float) -> float:
        """Append `frames`, timed from `start_s`; returns the time the last one is reached."""
        for k in frames:
            self.times.append(start_s + k.t_s)
            self.poses.append(pose_angles(self.skeleton, self.poses[-1], k.pose))
            self.supports.append(k.support)
        return self.end_s

    def hold(self, duration_s: float) -> float:
        return self.add((Keyframe(duration_s, self.supports[-1], {}),), self.end_s)

    def at(self, t: float) -> tuple[np.ndarray, float]:
        """Joint angles and support at time t, eased (smoothstep) between keyframes."""
        i = int(np.searchsorted(self.times, t, side="right")) - 1
        if i + 1 >= len(self.times):
            return self.poses[-1], self.supports[-1]
        span = self.times[i + 1] - self.times[i]
        a = min(max((t - self.times[i]) / span, 0.0), 1.0)
        a = a * a * (3.0 - 2.0 * a)
        pose = self.poses[i] + (self.poses[i + 1] - self.poses[i]) * a
        return pose, self.supports[i] + (self.supports[i + 1] - self.supports[i]) * a


class PostureController(StandController):
    """Plays a Timeline: PD toward its pose, the feet carrying its share of the weight."""

    def __init__(self, skeleton: Skeleton, timeline: Timeline) -> None:
        super().__init__(skeleton)
        self.timeline = timeline

    def step(self, state: DogState) -> ServoCommand:
        pose, support = self.timeline.at(state.t)
        self.q_stand = pose
        command = super().step(state)
        command.tau_ff[:] *= support
        return command
