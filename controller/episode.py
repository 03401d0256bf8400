"""One simulation run: the World stepped under a controller, with a log and a run summary."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from quadsim.controller.errors import SimError
from quadsim.controller.kinematics import wrap_angle, yaw_of
from quadsim.controller.pd import ServoCommand
from quadsim.controller.recording import VideoRecorder
from quadsim.controller.sim import World
from quadsim.controller.state import DogState
from quadsim.gaits.footfalls import FEET, footfall_stats


class Controller(Protocol):
    """Anything with step(state) -> ServoCommand (or plain joint torques [N*m])."""

    def step(self, state: DogState) -> ServoCommand | np.ndarray: ...


class StepHook:
    """Called by run_episode around each step, with the world passed in (the hook never
    holds it): after each control step, and after each physics step. Subclass and
    override what you need; the defaults do nothing."""

    def after_control(self, world: World, state: DogState, command: object) -> None:
        """After the controller answered `state` with `command`, before the physics."""

    def after_physics(self, world: World) -> None:
        """After each stepSimulation (several per control step)."""


@dataclass
class RunLog:
    """The run-log contract of DESIGN.md, sampled at `log_hz`."""

    t: list = field(default_factory=list)
    base_pos: list = field(default_factory=list)
    base_quat: list = field(default_factory=list)
    base_vel: list = field(default_factory=list)
    foot_pos: list = field(default_factory=list)
    foot_contact: list = field(default_factory=list)
    joint_q: list = field(default_factory=list)
    joint_tau: list = field(default_factory=list)
    link_frames: list = field(default_factory=list)  # see World.link_frames
    extra: dict[str, list] = field(default_factory=dict)

    def add(
        self,
        state: DogState,
        tau: np.ndarray,
        link_frames: np.ndarray,
        extra: dict[str, float | np.ndarray] | None = None,
    ) -> None:
        self.t.append(state.t)
        self.base_pos.append(state.base_pos)
        self.base_quat.append(state.base_quat)
        self.base_vel.append(state.base_vel)
        self.foot_pos.append(state.foot_pos)
        self.foot_contact.append(state.foot_contact)
        self.joint_q.append(state.q)
        self.joint_tau.append(tau)
        self.link_frames.append(link_frames)
        for key, value in (extra or {}).items():
            self.extra.setdefault(key, []).append(value)

    def arrays(self, world: World) -> dict:
        """The log as arrays, its link frames split into link poses and turned into `world`'s
        marker positions."""
        out = {
            k: np.asarray(getattr(self, k))
            for k in (
                "t",
                "base_pos",
                "base_quat",
                "base_vel",
                "foot_pos",
                "foot_contact",
                "joint_q",
                "joint_tau",
            )
        }
        frames = np.asarray(self.link_frames, dtype=float).reshape(-1, len(world.link_names), 7)
        out["markers"] = world.markers_from_frames(frames)
        out["link_pos"] = np.ascontiguousarray(frames[..., :3])
        out["link_quat"] = np.ascontiguousarray(frames[..., 3:])
        out["link_names"] = np.array(world.link_names)
        out["link_parents"] = np.array(world.link_parents)
        out["urdf"] = np.array(world.urdf)
        # the ground under the run, for replays: boxes (x0, x1, y0, y1, top) [m] and the
        # heightfields, each as its grid origin x, y and cell [m] and its heights [m]
        ground = world.ground_map
        out["ground_boxes"] = np.array(ground.boxes, dtype=float).reshape(-1, 5)
        out["ground_fields"] = np.array([f[:3] for f in ground.fields], dtype=float).reshape(-1, 3)
        for k, (*_, heights) in enumerate(ground.fields):
            out[f"ground_field_{k}"] = heights.astype(np.float32)
        out["foot_contact"] = out["foot_contact"].astype(bool)
        out["marker_names"] = np.array(world.marker_names)
        out["joint_names"] = np.array(world.skeleton.joint_names)
        out["foot_names"] = np.array(FEET)
        for key, values in self.extra.items():
            out[key] = np.asarray(values)
        return out


@dataclass
class RunResult:
    status: str  # "ok", "fell" or "unstable"
    fall_time_s: float | None
    log: dict
    wall_time_s: float
    contacts: np.ndarray  # (steps, 4) bool at the physics rate
    contact_t: np.ndarray


# the longest run: its log (200 Hz) then holds about 0.2 GB
MAX_DURATION_S = 600.0


def run_episode(
    world: World,
    controller: Controller,
    duration_s: float,
    *,
    control_hz: float = 1000.0,
    log_hz: float = 200.0,
    recorder: VideoRecorder | None = None,
    progress: Callable[[float], None] | None = None,
    extra_log: Callable[[DogState], dict[str, float | np.ndarray]] | None = None,
    caption: Callable[[DogState], str] | None = None,
    hooks: Sequence[StepHook] = (),
    done: Callable[[], bool] | None = None,
    on_fall: Callable[[DogState], bool] | None = None,
) -> RunResult:
    """Step `world` under `controller` for `duration_s` [s] of simulated time.

    The controller runs at `control_hz`; between its steps the joint servo of its
    ServoCommand runs at every physics step of the world; `caption(state)` labels video
    frames; `hooks` see every control and physics step (tests, benchmarks). Stops early when
    the dog falls or the simulation becomes unstable (never raises for that), or when
    `done()` says the controller has finished. `on_fall(state)` may take a fall over (get
    up): when it returns True the run goes on, the first fall's time kept and the status
    "fell".
    `progress(fraction_done)` is called about 100 times.
    """
    if not 0.0 < duration_s <= MAX_DURATION_S:
        raise SimError(
            f"a run lasts more than 0 and at most {MAX_DURATION_S:g} s, got {duration_s:g} s"
        )
    substeps = max(int(round(1.0 / (control_hz * world.dt))), 1)
    control_dt = substeps * world.dt
    steps = int(round(duration_s / control_dt))
    log_every = max(int(round(1.0 / (log_hz * control_dt))), 1)
    tick = max(steps // 100, 1)
    log = RunLog()
    contacts = np.zeros((steps, 4), dtype=bool)
    status, fall_time = "ok", None
    start = time.perf_counter()
    n = 0
    for n in range(steps):
        state = world.read_state()
        now = world.status(state)
        if now != "ok":
            status, fall_time = now, state.t if fall_time is None else fall_time
            if not (now == "fell" and on_fall is not None and on_fall(state)):
                break
        if done is not None and done():
            break
        command = controller.step(state)
        for hook in hooks:
            hook.after_control(world, state, command)
        servo = command if isinstance(command, ServoCommand) else None
        for k in range(substeps):
            if servo is None:
                applied = world.apply(command)
            else:  # the servo reads the joints at every physics step but the first
                applied = world.drive(servo, state.q, state.qd) if k == 0 else world.drive(servo)
            if k == 0:
                contacts[n] = state.foot_contact
                if n % log_every == 0:
                    log.add(
                        state,
                        applied.copy(),
                        world.link_frames(),
                        extra_log(state) if extra_log else None,
                    )
                if recorder is not None and recorder.due(state.t):
                    recorder.capture(world, state, caption(state) if caption else None)
            world.step()
            for hook in hooks:
                hook.after_physics(world)
        if progress is not None and n % tick == 0:
            progress(n / steps)
    else:
        n = steps
    if progress is not None:
        progress(1.0)
    wall = time.perf_counter() - start
    arrays = log.arrays(world)
    arrays["torque_limit"] = world.torque_limit.copy()
    t_contacts = np.arange(n) * control_dt
    return RunResult(status, fall_time, arrays, wall, contacts[:n], t_contacts)


def summarize(
    result: RunResult, *, gait: str, speed_cmd: float, duration_s: float, seed: int
) -> dict:
    """The run-summary contract of DESIGN.md (forward = +x of the start frame; speed and
    heading error against the logged heading command, where the log has one)."""
    log = result.log
    t, pos = log["t"], log["base_pos"]
    simulated = float(t[-1]) if len(t) else 0.0
    half = t >= 0.5 * simulated if len(t) else np.zeros(0, dtype=bool)
    mean_speed = float(np.mean(forward_speed(log)[half])) if np.any(half) else 0.0
    heading = yaw_of(log["base_quat"][half]) if np.any(half) else []
    # a turning dog follows a moving heading
    heading_cmd = log["heading_cmd"][half] if "heading_cmd" in log else 0.0
    heading_err = (
        float(np.degrees(np.mean(np.abs(wrap_angle(heading - heading_cmd)))))
        if len(heading)
        else 0.0
    )
    distance = float(np.sum(np.linalg.norm(np.diff(pos[:, :2], axis=0), axis=1))) if len(t) else 0
    feet = (
        footfall_stats(result.contact_t, result.contacts)
        if len(result.contact_t)
        else {
            "duty_factor": dict.fromkeys(FEET),
            "phase_offset": dict.fromkeys(FEET),
            "stride_period_s": None,
        }
    )
    return {
        "gait": gait,
        "speed_cmd": speed_cmd,
        "duration_s": duration_s,
        "seed": seed,
        "status": result.status,
        "fell": result.status != "ok",
        "fall_time_s": None if result.fall_time_s is None else round(result.fall_time_s, 3),
        "mean_speed_mps": round(mean_speed, 4),
        "lateral_drift_m": round(float(abs(pos[-1, 1] - pos[0, 1])) if len(t) else 0.0, 4),
        "heading_error_deg": round(heading_err, 3),
        "distance_m": round(distance, 4),
        "duty_factor": feet["duty_factor"],
        "phase_offset": feet["phase_offset"],
        "stride_period_s": feet["stride_period_s"],
        "turn_radius_m": turn_radius(pos[half, :2], heading) if len(heading) else None,
        "realtime_factor": round(simulated / result.wall_time_s, 3) if result.wall_time_s else None,
    }


def forward_speed(log: dict) -> np.ndarray:
    """Pelvis speed [m/s] along the commanded heading per log sample (+x of the start frame
    for a dog sent straight, or a log without a heading command)."""
    vel = log["base_vel"]
    if "heading_cmd" not in log:
        return vel[:, 0]
    cmd = log["heading_cmd"]
    return vel[:, 0] * np.cos(cmd) + vel[:, 1] * np.sin(cmd)


def sideslip_deg(log: dict, min_speed_mps: float = 0.3) -> np.ndarray:
    """Angle [deg] from where the pelvis faces to where it travels on the ground, per log
    sample, positive when it moves to the left of its facing; NaN below `min_speed_mps`.
    A dog turning left that crabs outward has a negative sideslip."""
    vel = log["base_vel"]
    yaw = yaw_of(log["base_quat"])
    slip = np.degrees(wrap_angle(np.arctan2(vel[:, 1], vel[:, 0]) - yaw))
    return np.where(np.hypot(vel[:, 0], vel[:, 1]) >= min_speed_mps, slip, np.nan)


def turn_radius(xy: np.ndarray, heading: np.ndarray, min_turn_rad: float = 0.35) -> float | None:
    """Radius [m] of the circle that best fits a path (least squares in the circle's
    algebraic form), or None when the heading turned less than `min_turn_rad` over it."""
    turned = abs(float(np.sum(wrap_angle(np.diff(heading))))) if len(heading) > 1 else 0.0
    if turned < min_turn_rad or len(xy) < 3:
        return None
    x, y = xy[:, 0] - xy[:, 0].mean(), xy[:, 1] - xy[:, 1].mean()
    # x^2 + y^2 = 2 a x + 2 b y + c, with r^2 = c + a^2 + b^2
    A = np.stack([2 * x, 2 * y, np.ones_like(x)], axis=1)
    (a, b, c), *_ = np.linalg.lstsq(A, x * x + y * y, rcond=None)
    return round(float(np.sqrt(c + a * a + b * b)), 4)
