"""World: owns ONE pybullet client with the ground, terrain, the dog, pushes and stepping.

This is the only module that talks to pybullet. Everything it hands out is numpy.
"""

from __future__ import annotations

import contextlib
import math
import os
import pkgutil
import sys
import tempfile
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

import numpy as np


@contextlib.contextmanager
def _silenced_fd(fd: int):
    """Send the C library's writes to file descriptor `fd` to /dev/null for a moment
    (pybullet prints its build time and "argv[0]=" there; stdout must stay clean for JSON)."""
    (sys.stdout if fd == 1 else sys.stderr).flush()
    saved = os.dup(fd)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(devnull)
        os.close(saved)


with _silenced_fd(2):
    import pybullet
    import pybullet_data
    from pybullet_utils.bullet_client import BulletClient

from quadsim.controller.errors import SimError
from quadsim.controller.kinematics import quat_to_matrix
from quadsim.controller.pd import ServoCommand
from quadsim.controller.state import TRACKED_LINKS, DogState
from quadsim.controller.terrain import (
    CELL_M,
    START_M,
    WIDTH_M,
    GroundMap,
    Terrain,
    blocks,
    heights,
    platform_box,
)
from quadsim.models import GRAVITY_MPS2, LEGS, DogSpec, Skeleton, build_skeleton, preset, urdf_text

try:
    from quadsim.controller.jointservo import (
        foot_centres,
        joints_sane,
        read_joint_states,
        servo_torques,
    )
except ImportError as missing:  # a source tree run without installing
    raise ImportError(
        "controller/jointservo.pyx is compiled when quadsim is installed: run "
        "`pip install -e .` (it needs a C compiler and the Python headers)"
    ) from missing

MAX_BASE_SPEED = 30.0  # [m/s]: faster than any dog runs; beyond it the simulation blew up
MAX_JOINT_SPEED = 200.0  # [rad/s]
RESTING_MIN_UP = (
    0.5  # cos 60 deg: the body's up axis this far from the world's is lying on its side
)
PLANE_HALF_M = 100.0  # plane.urdf's collision box reaches this far from the origin [m]
GROUND_EXTENT_M = 10_000.0  # the flat ground, extended, reaches this far [m]
GROUND_SLAB_HALF_M = 5.0  # half the thickness of the ground's boxes, as plane.urdf's [m]
MAX_PUSH_N, MAX_PUSH_S = 5000.0, 2.0  # beyond these a push is a typo, not a test
# the paws: a stiff, near critically damped pad (0.9 mm under a standing dog's weight), not
# a rigid sphere; a rigid foot chattered on and off the ground at the 1 kHz step
PAW_STIFFNESS_N_PER_M, PAW_DAMPING_NS_PER_M = 1.0e5, 1.5e3
# of a pybullet link state: frame position, quaternion, velocity, angular velocity
_LINK_MOTION = itemgetter(4, 5, 6, 7)


@dataclass(frozen=True)
class Push:
    """An external force [N] (world frame) on `link`, from `start` [s] for `duration` [s]."""

    start: float
    force: tuple[float, float, float]
    duration: float
    link: str = "chest"

    @classmethod
    def horizontal(
        cls, start: float, force_n: float, direction_deg: float, duration: float
    ) -> Push:
        """A horizontal push of `force_n` [N] from `direction_deg` (0: along +x, forward from
        standing; 90: along +y, to the dog's left)."""
        a = math.radians(direction_deg)
        return cls(start, (force_n * math.cos(a), force_n * math.sin(a), 0.0), duration)

    def __post_init__(self) -> None:
        if not (self.duration > 0 and math.isfinite(self.duration)):
            raise SimError(
                f"push duration must be a positive number of seconds, got {self.duration!r}"
            )
        if self.start < 0 or not all(math.isfinite(f) for f in self.force):
            raise SimError(f"push needs a start time >= 0 and a finite force, got {self}")
        if math.hypot(*self.force) > MAX_PUSH_N or self.duration > MAX_PUSH_S:
            raise SimError(
                f"a push is at most {MAX_PUSH_N:g} N (15 times the shepherd's weight) for at "
                f"most {MAX_PUSH_S:g} s, got {self.force} N for {self.duration:g} s"
            )


class World:
    """One independent simulation: a pybullet client, flat ground, terrain and one dog.

    physics_hz: simulation steps per second [Hz] (default 1 kHz, the controller's rate; the
    joint servo's implicit damping keeps it stable there); friction: ground friction
    coefficient.
    renderer: None (no pictures), "egl" (pybullet's eglRenderer plugin, falling back to
    TinyRenderer where it does not load) or "tiny". The plugin must load before any body,
    since it only draws the shapes created after it.
    """

    def __init__(
        self,
        spec: DogSpec | str = "shepherd",
        physics_hz: float = 1000.0,
        friction: float = 1.0,
        gui: bool = False,
        renderer: str | None = None,
    ) -> None:
        self.spec = preset(spec) if isinstance(spec, str) else spec
        self.skeleton: Skeleton = build_skeleton(self.spec)
        if not physics_hz > 0:
            raise SimError(f"physics_hz must be positive, got {physics_hz!r}")
        if gui and not os.environ.get("DISPLAY"):
            raise SimError("--gui needs a display (DISPLAY is not set); run without --gui")
        self.dt = 1.0 / physics_hz
        self.friction = friction
        with _silenced_fd(1):
            self.client = BulletClient(pybullet.GUI if gui else pybullet.DIRECT)
        c = self.client
        self._egl_plugin = -1
        if renderer not in (None, "egl", "tiny"):
            raise SimError(f"unknown renderer {renderer!r}; choose 'egl', 'tiny' or None")
        if renderer == "egl" and not gui:
            egl = pkgutil.get_loader("eglRenderer")
            if egl is not None:
                with _silenced_fd(1):
                    self._egl_plugin = c.loadPlugin(egl.get_filename(), "_eglRendererPlugin")
        c.setAdditionalSearchPath(pybullet_data.getDataPath())
        c.setGravity(0.0, 0.0, -GRAVITY_MPS2)
        c.setPhysicsEngineParameter(
            fixedTimeStep=self.dt, numSolverIterations=50, deterministicOverlappingPairs=1
        )
        self.ground = c.loadURDF("plane.urdf", useFixedBase=True)
        c.changeDynamics(self.ground, -1, lateralFriction=friction)
        self._extend_ground(friction)
        self.terrain: list[int] = []
        self.ground_map = GroundMap()  # the terrain's heights, for the controller too
        self.resting_allowed = False  # skills set it: the torso on the ground is no fall
        self.getting_up = False  # the get-up skill sets it: lying on the side is no fall
        self.t = 0.0
        self.pushes: list[Push] = []
        self._load_dog()

    # ---------------------------------------------------------------- building
    def _extend_ground(self, friction: float) -> None:
        """plane.urdf's collision is a box that ends 100 m from the origin, where a gallop
        arrives in 20 s: four slabs around it carry the flat ground on to GROUND_EXTENT_M.
        The ground under the start stays plane.urdf's own box, so runs inside it are
        unchanged bit for bit."""
        inner, outer = PLANE_HALF_M, GROUND_EXTENT_M
        half_side = 0.5 * (outer - inner)  # a slab's half width beyond the inner square
        slabs = [
            ((inner + half_side, 0.0), (half_side, outer)),
            ((-inner - half_side, 0.0), (half_side, outer)),
            ((0.0, inner + half_side), (inner, half_side)),
            ((0.0, -inner - half_side), (inner, half_side)),
        ]
        for (x, y), (hx, hy) in slabs:
            self._static_box(
                (x, y, -GROUND_SLAB_HALF_M),
                (hx, hy, GROUND_SLAB_HALF_M),
                (0.85, 0.85, 0.85, 1.0),
                friction,
            )

    def _static_box(
        self,
        center: tuple[float, float, float],
        half_extents: tuple[float, float, float],
        rgba: tuple[float, float, float, float],
        friction: float,
    ) -> int:
        c = self.client
        col = c.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half_extents)
        vis = c.createVisualShape(pybullet.GEOM_BOX, halfExtents=half_extents, rgbaColor=rgba)
        body = c.createMultiBody(0.0, col, vis, basePosition=center)
        c.changeDynamics(body, -1, lateralFriction=friction)
        return body

    def _load_dog(self) -> None:
        c, sk = self.client, self.skeleton
        self.urdf = urdf_text(sk)  # the body as simulated; logs carry it for exporters
        with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
            f.write(self.urdf)
            path = f.name
        try:
            self.dog = c.loadURDF(path, [0.0, 0.0, 1.0], flags=pybullet.URDF_USE_INERTIA_FROM_FILE)
        finally:
            os.unlink(path)
        index_of_joint, index_of_link = {}, {"pelvis": -1}
        for i in range(c.getNumJoints(self.dog)):
            info = c.getJointInfo(self.dog, i)
            index_of_link[info[12].decode()] = i
            if info[2] == pybullet.JOINT_REVOLUTE:
                index_of_joint[info[1].decode()] = i
        self.joint_ids = [index_of_joint[name] for name in sk.joint_names]
        self.link_ids = index_of_link
        self.n_joints = len(self.joint_ids)
        self.lower, self.upper, self.torque_limit = sk.limits()
        for link_id in index_of_link.values():
            c.changeDynamics(
                self.dog,
                link_id,
                lateralFriction=self.friction,
                linearDamping=0.0,
                angularDamping=0.0,
            )
        for leg in LEGS:
            c.changeDynamics(
                self.dog,
                index_of_link[sk.legs[leg].foot_link],
                contactStiffness=PAW_STIFFNESS_N_PER_M,
                contactDamping=PAW_DAMPING_NS_PER_M,
            )
        # pybullet drives joints with velocity motors by default: switch them off
        c.setJointMotorControlArray(
            self.dog, self.joint_ids, pybullet.VELOCITY_CONTROL, forces=[0.0] * self.n_joints
        )
        # the per-step pybullet calls, bound to this client once (BulletClient binds per call)
        self._get_joint_states = c.getJointStates
        self._get_base_pose = c.getBasePositionAndOrientation
        self._get_base_velocity = c.getBaseVelocity
        self._get_link_states = c.getLinkStates
        self._get_contact_points = c.getContactPoints
        self._set_joint_motors = c.setJointMotorControlArray
        self._step_simulation = c.stepSimulation
        self._neg_torque_limit = -self.torque_limit
        # the joint servo's buffers (drive)
        self._q, self._qd, self._applied = (np.zeros(self.n_joints) for _ in range(3))
        self._tracked_ids = [index_of_link[name] for name in TRACKED_LINKS]
        self._foot_ids = {index_of_link[sk.legs[leg].foot_link]: k for k, leg in enumerate(LEGS)}
        # the foot sphere's centre hangs below the toe link's frame, along the frame's -z
        offsets = [sk.legs[leg].foot_offset for leg in LEGS]
        if any(ox or oy for ox, oy, _ in offsets):
            raise SimError(f"foot offsets must lie on the toe frame's z axis, got {offsets}")
        self._foot_z_offset = np.array([oz for _, _, oz in offsets])
        self._torso_ids = {index_of_link[name] for name in sk.torso_links} | {-1}
        # the logged frames: row 0 the base (the pelvis, whose inertial frame is its link
        # frame), then every other link of the skeleton, in skeleton order; markers ride on them
        self.link_names = tuple(link.name for link in sk.links)
        self.link_parents = tuple(
            self.link_names.index(link.parent) if link.parent else -1 for link in sk.links
        )
        self._frame_links = [index_of_link[name] for name in self.link_names[1:]]
        self._marker_rows = [self.link_names.index(link) for link, _ in sk.markers.values()]
        self._marker_offsets = np.array([offset for _, offset in sk.markers.values()], dtype=float)
        self.stand_height = 0.0
        self.place_dog(sk.stand_angles())
        self._mobility = self._joint_mobility()
        self._solves: dict[bytes, np.ndarray] = {}
        self._rhs = np.zeros(self.n_joints)

    def _joint_mobility(self) -> np.ndarray:
        """The joint block (n_joints, n_joints) of the inverse mass matrix in the standing
        pose, the base free: how each joint's acceleration answers each joint's torque."""
        c = self.client
        q_all = [state[0] for state in c.getJointStates(self.dog, range(c.getNumJoints(self.dog)))]
        mass = np.array(c.calculateMassMatrix(self.dog, q_all))
        dofs = np.array(self.joint_ids) + (len(mass) - len(q_all))
        return np.ascontiguousarray(np.linalg.inv(mass)[np.ix_(dofs, dofs)])

    def place_dog(
        self,
        joint_angles: np.ndarray,
        x: float = 0.0,
        y: float = 0.0,
        yaw: float = 0.0,
        roll: float = 0.0,
    ) -> None:
        """Put the dog at rest in pose `joint_angles` [rad] with its feet on the ground, or,
        rolled by `roll` [rad] about its length (as after a fall), its lowest link on it."""
        c = self.client
        quat = c.getQuaternionFromEuler([roll, 0.0, yaw])
        c.resetBasePositionAndOrientation(self.dog, [x, y, 1.0], quat)
        c.resetBaseVelocity(self.dog, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
        for jid, q in zip(self.joint_ids, joint_angles, strict=True):
            c.resetJointState(self.dog, jid, float(q), 0.0)
        self._applied[:] = 0.0  # the servo's last torques: none yet
        toes = c.getLinkStates(self.dog, list(self._foot_ids))
        feet = self._feet_of(np.array([toe[4] + toe[5] for toe in toes]))
        lowest = float(np.min(feet[:, 2])) - self.spec.foot_radius
        if roll != 0.0:  # on its side the trunk, not a foot, is lowest
            links = range(-1, c.getNumJoints(self.dog))
            lowest = min(c.getAABB(self.dog, link)[0][2] for link in links)
        ground_top = self.ground_map.height(x, y)
        base_z = 1.0 - lowest + ground_top + 1e-3
        c.resetBasePositionAndOrientation(self.dog, [x, y, base_z], quat)
        self.stand_height = base_z - ground_top

    def add_heightfield(self, origin: tuple[float, float], cell: float, field: np.ndarray) -> int:
        """Static ground of heights field (nx, ny) [m] on a grid of `cell` [m] whose first
        point is at `origin` (x, y) [m]; returns its body id."""
        field = np.asarray(field, dtype=float)
        if field.ndim != 2 or min(field.shape) < 2 or not np.all(np.isfinite(field)):
            raise SimError(f"a heightfield is a finite 2-D grid of heights, got {field.shape}")
        c = self.client
        nx, ny = field.shape
        # pybullet centres the field on its grid and halfway between its lowest and highest
        shape = c.createCollisionShape(
            pybullet.GEOM_HEIGHTFIELD,
            meshScale=[cell, cell, 1.0],
            heightfieldData=field.T.reshape(-1).tolist(),  # x fastest
            numHeightfieldRows=nx,
            numHeightfieldColumns=ny,
        )
        centre = (
            origin[0] + 0.5 * cell * (nx - 1),
            origin[1] + 0.5 * cell * (ny - 1),
            0.5 * (field.min() + field.max()),
        )
        body = c.createMultiBody(0.0, shape, basePosition=centre)
        c.changeDynamics(body, -1, lateralFriction=self.friction)
        c.changeVisualShape(body, -1, rgbaColor=(0.55, 0.5, 0.45, 1.0))
        self.terrain.append(body)
        self.ground_map.add_field(origin, cell, field)
        return body

    def add_terrain(self, terrain: Terrain, seed: int = 0) -> None:
        """Build `terrain` (controller/terrain.py) ahead of the dog; rough ground is drawn
        from `seed`."""
        for centre, half_extents in blocks(terrain):
            self.add_box(centre, half_extents)
        field = heights(terrain, seed)
        if field is not None:
            self.add_heightfield((START_M, -0.5 * WIDTH_M), CELL_M, field)

    def add_box(
        self,
        center: tuple[float, float, float],
        half_extents: tuple[float, float, float],
        friction: float | None = None,
    ) -> int:
        """A static box [m] (a step, a platform, an obstacle); returns its body id."""
        if any(not (h > 0) for h in half_extents):
            raise SimError(f"box half extents must be positive, got {half_extents}")
        body = self._static_box(
            center,
            half_extents,
            (0.55, 0.5, 0.45, 1.0),
            self.friction if friction is None else friction,
        )
        self.terrain.append(body)
        self.ground_map.add_box(center, half_extents)
        return body

    def add_platform(self, x_start: float, length: float, height: float, width: float = 2.0) -> int:
        """A platform of `height` [m] starting at x = `x_start` [m] across the dog's path."""
        return self.add_box(*platform_box(x_start, length, height, width))

    def add_push(self, push: Push) -> None:
        if push.link not in self.link_ids:
            raise SimError(
                f"unknown link {push.link!r} for a push; links: {', '.join(sorted(self.link_ids))}"
            )
        self.pushes.append(push)

    # ---------------------------------------------------------------- the step
    def _feet_of(self, toe_motion: np.ndarray) -> np.ndarray:
        """Foot sphere centres (4, 3) [m] from the toes' motion rows (LF, RF, LH, RH: position,
        quaternion, ...), the sphere hanging along the toe frame's z axis."""
        feet = np.empty((4, 3))
        foot_centres(toe_motion, self._foot_z_offset, feet)
        return feet

    def read_state(self) -> DogState:
        """Everything the controller reads, in one batch of pybullet queries."""
        dog = self.dog
        q, qd = self.read_joints()
        ls = self._get_link_states(dog, self._tracked_ids, computeLinkVelocity=1)
        # one array, row 0 the base and a row per link: position, quaternion, velocity,
        # angular velocity; the state's fields are views of it (fewer conversions)
        motion = np.fromiter(
            chain.from_iterable(
                chain(
                    self._get_base_pose(dog), self._get_base_velocity(dog), *map(_LINK_MOTION, ls)
                )
            ),
            float,
            13 * (len(ls) + 1),
        ).reshape(-1, 13)
        base, links = motion[0], motion[1:]
        foot_contact = np.zeros(4, dtype=bool)
        torso_contact = False
        for cp in self._get_contact_points(bodyA=dog):
            if cp[2] == dog:
                continue
            foot = self._foot_ids.get(cp[3])
            if foot is not None:
                foot_contact[foot] = True
            elif cp[3] in self._torso_ids:
                torso_contact = True
        return DogState(
            t=self.t,
            q=q,
            qd=qd,
            base_pos=base[:3],
            base_quat=base[3:7],
            base_vel=base[7:10],
            base_angvel=base[10:],
            link_names=TRACKED_LINKS,
            link_pos=links[:, :3],
            link_quat=links[:, 3:7],
            link_vel=links[:, 7:10],
            link_angvel=links[:, 10:],
            foot_pos=self._feet_of(links[3:]),
            foot_contact=foot_contact,
            torso_contact=torso_contact,
        )

    def trunk_heights(self) -> np.ndarray:
        """The pelvis's and the chest's link heights [m] above the ground under the dog, as
        it is now: placed standing, what the skills' outcomes are fractions of."""
        frames = self.link_frames().reshape(len(self.link_names), 7)
        (x, y, _), names = frames[0, :3], self.link_names
        z = frames[[names.index("pelvis"), names.index("chest")], 2]
        return z - self.ground_map.height(float(x), float(y))

    def link_frames(self) -> np.ndarray:
        """The world frames (L, 7) of every link, as logged, in `link_names` order (row 0 the
        base): each a position [m] and quaternion (xyzw). Turned into marker positions by
        markers_from_frames, once per run (numpy per sample was most of the logging's cost).
        The links' frames are computed afresh: pybullet's cached ones are a step older than
        the base's pose (1-2 mm apart at a trot)."""
        links = self._get_link_states(self.dog, self._frame_links, computeForwardKinematics=1)
        return np.fromiter(
            chain(*self._get_base_pose(self.dog), *(s[4] + s[5] for s in links)),
            float,
            7 * len(self.link_names),
        ).reshape(-1, 7)

    def markers_from_frames(self, frames: np.ndarray) -> np.ndarray:
        """World positions (..., M, 3) [m] of the markers, in `marker_names` order, from
        link frames (..., L, 7)."""
        frames = np.asarray(frames, dtype=float)[..., self._marker_rows, :]
        rot = quat_to_matrix(frames[..., 3:])
        return frames[..., :3] + np.einsum("...kij,kj->...ki", rot, self._marker_offsets)

    def marker_positions(self) -> np.ndarray:
        """World positions (M, 3) [m] of the skeleton's markers, in `marker_names` order."""
        return self.markers_from_frames(self.link_frames())

    @property
    def marker_names(self) -> tuple[str, ...]:
        return tuple(self.skeleton.markers)

    def read_joints(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint angles [rad] and rates [rad/s] only: what the joint servo reads each step."""
        q, qd = np.empty(self.n_joints), np.empty(self.n_joints)
        read_joint_states(self._get_joint_states(self.dog, self.joint_ids), q, qd)
        return q, qd

    def clip_torques(self, tau: np.ndarray) -> np.ndarray:
        """Torques [N*m] clipped to each joint's limit (pybullet itself does not clip)."""
        # minimum(maximum()) is clip without ndarray.clip's Python-level wrapper
        return np.minimum(np.maximum(tau, self._neg_torque_limit), self.torque_limit)

    def apply(self, tau: np.ndarray) -> np.ndarray:
        """Drive every joint by torque; returns the torques actually applied.

        A non-finite torque is not applied (zeros are): the step reports it as unstable.
        """
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.n_joints,):
            raise SimError(f"expected {self.n_joints} joint torques, got shape {tau.shape}")
        if not np.logical_and.reduce(np.isfinite(tau)):  # all(), without ndarray.all's wrapper
            self._nonfinite_torque = True
            tau = np.zeros(self.n_joints)
        applied = self.clip_torques(tau)
        self._set_joint_motors(
            self.dog, self.joint_ids, pybullet.TORQUE_CONTROL, forces=applied.tolist()
        )
        return applied

    _nonfinite_torque = False

    def drive(
        self, command: ServoCommand, q: np.ndarray | None = None, qd: np.ndarray | None = None
    ) -> np.ndarray:
        """One physics step of the joint servo: apply `command`'s PD plus feed-forward torques
        with implicit damping, stable at any physics rate: the damping acts on the joint
        rates the torques will cause over the step, predicted through the joints' mobility
        (the inverse mass matrix) in the standing pose (jointservo.servo_torques). q, qd: the
        joint angles [rad] and rates [rad/s] just read (a state read this step); otherwise
        the joints are read here. Returns the torques applied [N*m]: a buffer the next call
        overwrites (copy it to keep it)."""
        if q is None or qd is None:
            read_joint_states(self._get_joint_states(self.dog, self.joint_ids), self._q, self._qd)
            q, qd = self._q, self._qd
        forces = servo_torques(
            q,
            qd,
            self._applied,
            command.tau_ff,
            command.q_target,
            command.qd_target,
            command.kp,
            command.kd,
            self.torque_limit,
            self._mobility,
            self._solve_for(command.kd),
            self.dt,
            self._rhs,
            self._applied,
        )
        if forces is None:  # not finite: zeros are applied and the step reports it
            self._nonfinite_torque = True
            forces = self._applied.tolist()
        self._set_joint_motors(self.dog, self.joint_ids, pybullet.TORQUE_CONTROL, forces=forces)
        return self._applied

    def _solve_for(self, kd: np.ndarray) -> np.ndarray:
        """(I + dt kd mobility)^-1, the implicit damping's, made once per set of gains (a
        gait uses a few)."""
        key = kd.tobytes()
        solve = self._solves.get(key)
        if solve is None:
            solve = np.linalg.inv(np.eye(self.n_joints) + self.dt * kd[:, None] * self._mobility)
            self._solves[key] = solve = np.ascontiguousarray(solve)
        return solve

    def step(self) -> None:
        """Advance the physics by one time step, applying the pushes active now."""
        for push in self.pushes:
            if push.start <= self.t < push.start + push.duration:
                link = self.link_ids[push.link]
                pos = (
                    self.client.getBasePositionAndOrientation(self.dog)[0]
                    if link < 0
                    else self.client.getLinkState(self.dog, link)[0]
                )
                self.client.applyExternalForce(
                    self.dog, link, push.force, pos, pybullet.WORLD_FRAME
                )
        self._step_simulation()
        self.t += self.dt

    def status(self, state: DogState) -> str:
        """ "ok", "fell" (torso or head on the ground, or the base too low) or "unstable"."""
        x, y, z = state.base_pos.tolist()
        vx, vy, vz = state.base_vel.tolist()
        if (
            self._nonfinite_torque
            or not joints_sane(state.q, state.qd, MAX_JOINT_SPEED)
            or not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z))
            or not vx * vx + vy * vy + vz * vz <= MAX_BASE_SPEED**2  # NaN is not <=
        ):
            return "unstable"
        if self.getting_up:  # on its side, rolling over: no pose is a fall
            return "ok"
        if self.resting_allowed:  # a skill that sits or lies: only rolling over is a fall
            qx, qy = state.base_quat[0], state.base_quat[1]
            return "fell" if 1.0 - 2.0 * (qx * qx + qy * qy) < RESTING_MIN_UP else "ok"
        if state.torso_contact or z - self.ground_map.height(x, y) < 0.45 * self.stand_height:
            return "fell"
        return "ok"

    # ---------------------------------------------------------------- pictures
    def render(
        self,
        width: int,
        height: int,
        target: np.ndarray,
        distance: float = 2.2,
        yaw_deg: float = 50.0,
        pitch_deg: float = -18.0,
    ) -> np.ndarray:
        """An RGB image (height, width, 3) uint8 of the scene, camera looking at `target`."""
        c = self.client
        view = c.computeViewMatrixFromYawPitchRoll(
            list(map(float, target)), distance, yaw_deg, pitch_deg, 0.0, 2
        )
        proj = c.computeProjectionMatrixFOV(50.0, width / height, 0.05, 50.0)
        renderer = (
            pybullet.ER_BULLET_HARDWARE_OPENGL
            if self._egl_plugin >= 0
            else pybullet.ER_TINY_RENDERER
        )
        with _silenced_fd(1):
            img = c.getCameraImage(
                width,
                height,
                view,
                proj,
                renderer=renderer,
                lightDirection=[1.0, 1.0, 2.0],
                shadow=1,
            )
        rgba = np.asarray(img[2], dtype=np.uint8).reshape(height, width, 4)
        return rgba[:, :, :3].copy()

    @property
    def renderer_name(self) -> str:
        return "eglRenderer" if self._egl_plugin >= 0 else "TinyRenderer"

    def close(self) -> None:
        """Disconnect the client; the World is unusable afterwards."""
        if self.client is not None:
            with _silenced_fd(1):
                if self._egl_plugin >= 0:
                    self.client.unloadPlugin(self._egl_plugin)
                self.client.disconnect()
            self.client = None  # type: ignore[assignment]

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
