"""Exports of a run (BVH, binary glTF) read back by readers that share no code with the
writers: a BVH parser and forward kinematics written here, pygltflib for the .glb. Each
must put every link where the log has it, at every frame."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from pygltflib import GLTF2
from sim_slots import SLOTS, one_per_core

from quadsim.controller.simulate import simulate
from quadsim.export import export
from quadsim.gaits.params import GaitParams
from quadsim.runlog import REQUIRED, save_log

GAITS = ("walk", "trot", "transverse-gallop")  # each at the middle of its speed band
DURATION = 5.0
# the trot turns through more than 180 degrees: Euler angles and quaternion signs must not jump
TURN_DPS = {"trot": 45.0}
TOLERANCE_M = 0.01
# the exports' y-up axes back to the simulator's z-up world: (X, Y, Z) -> (X, -Z, Y)
Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


@one_per_core
def _run(gait: str) -> dict:
    band = GaitParams.load(gait).speed_band_mps
    turn = TURN_DPS.get(gait, 0.0)
    result, summary = simulate(gait, sum(band) / 2, DURATION, seed=0, turn_rate_dps=turn)
    assert not summary["fell"], f"{gait} fell"
    return result.log


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, Path, Path, Path]]:
    """Per gait: the log, its .npz, and the .bvh and .glb exported from that file."""
    folder = tmp_path_factory.mktemp("export")
    with ProcessPoolExecutor(max_workers=SLOTS) as pool:
        logs = dict(zip(GAITS, pool.map(_run, GAITS), strict=True))
    out = {}
    for gait, log in logs.items():
        npz = folder / f"{gait}.npz"
        save_log(npz, log)
        out[gait] = (
            log,
            npz,
            export(npz, folder / f"{gait}.bvh"),
            export(npz, folder / f"{gait}.glb"),
        )
    return out


# ---------------------------------------------------------------- BVH, read here


def _axis_matrix(axis: str, degrees: np.ndarray) -> np.ndarray:
    """Rotation matrices (T, 3, 3) about a named axis."""
    a = np.radians(degrees)
    c, s, one, zero = np.cos(a), np.sin(a), np.ones_like(a), np.zeros_like(a)
    rows = {
        "X": [[one, zero, zero], [zero, c, -s], [zero, s, c]],
        "Y": [[c, zero, s], [zero, one, zero], [-s, zero, c]],
        "Z": [[c, -s, zero], [s, c, zero], [zero, zero, one]],
    }[axis]
    return np.moveaxis(np.array(rows), (0, 1), (-2, -1))


def read_bvh(path: Path) -> tuple[list[dict], float, np.ndarray]:
    """(joints in file order with name, parent, offset, channels, leaf; frame time; motion)."""
    tokens = path.read_text().split()
    joints: list[dict] = []
    stack: list[int] = []
    i = tokens.index("HIERARCHY") + 1
    while tokens[i] != "MOTION":
        tok = tokens[i]
        if tok in ("ROOT", "JOINT"):
            joints.append({"name": tokens[i + 1], "parent": stack[-1] if stack else -1})
            i += 2
        elif tok == "End":
            assert tokens[i + 1] == "Site" and tokens[i + 2] == "{" and tokens[i + 3] == "OFFSET"
            joints[stack[-1]]["end_site"] = [float(v) for v in tokens[i + 4 : i + 7]]
            assert tokens[i + 7] == "}"
            i += 8
        elif tok == "{":
            stack.append(len(joints) - 1)
            i += 1
        elif tok == "}":
            stack.pop()
            i += 1
        elif tok == "OFFSET":
            joints[stack[-1]]["offset"] = np.array([float(v) for v in tokens[i + 1 : i + 4]])
            i += 4
        elif tok == "CHANNELS":
            n = int(tokens[i + 1])
            joints[stack[-1]]["channels"] = tokens[i + 2 : i + 2 + n]
            i += 2 + n
        else:
            raise AssertionError(f"unexpected BVH token {tok!r}")
    assert not stack
    assert tokens[i + 1] == "Frames:" and tokens[i + 3 : i + 5] == ["Frame", "Time:"]
    frames, frame_time = int(tokens[i + 2]), float(tokens[i + 5])
    width = sum(len(j["channels"]) for j in joints)
    motion = np.array(tokens[i + 6 :], dtype=float)
    assert motion.size == frames * width
    return joints, frame_time, motion.reshape(frames, width)


def bvh_positions(joints: list[dict], motion: np.ndarray) -> dict[str, np.ndarray]:
    """World positions (T, 3) of each joint, in the file's axes: BVH's reading of channels
    (rotations applied in the order listed, positions set the joint's place)."""
    world: list[tuple[np.ndarray, np.ndarray]] = []
    out = {}
    column = 0
    T = len(motion)
    for j in joints:
        rot = np.broadcast_to(np.eye(3), (T, 3, 3))
        pos = np.broadcast_to(j["offset"], (T, 3))
        for channel in j["channels"]:
            values = motion[:, column]
            column += 1
            if channel.endswith("position"):
                pos = pos + np.eye(3)["XYZ".index(channel[0])] * values[:, None]
            else:
                rot = rot @ _axis_matrix(channel[0], values)
        if j["parent"] >= 0:
            prot, ppos = world[j["parent"]]
            pos = ppos + np.einsum("tij,tj->ti", prot, pos)
            rot = prot @ rot
        world.append((rot, pos))
        out[j["name"]] = pos
    return out


@pytest.mark.parametrize("gait", GAITS)
def test_bvh_kinematics_put_every_link_where_the_log_has_it(runs: dict, gait: str) -> None:
    log, _, bvh, _ = runs[gait]
    joints, frame_time, motion = read_bvh(bvh)
    names = [str(n) for n in log["link_names"]]
    assert sorted(j["name"] for j in joints) == sorted(names)
    assert joints[0]["parent"] == -1 and joints[0]["channels"][:3] == [
        "Xposition",
        "Yposition",
        "Zposition",
    ]
    assert all(len(j["channels"]) == 3 for j in joints[1:])
    leaves = {j["name"] for j in joints} - {joints[j["parent"]]["name"] for j in joints[1:]}
    assert leaves == {j["name"] for j in joints if "end_site" in j}
    assert len(motion) == len(log["t"])
    assert frame_time == pytest.approx(float(np.median(np.diff(log["t"]))), abs=1e-6)
    positions = bvh_positions(joints, motion)
    for k, name in enumerate(names):
        error = np.linalg.norm(positions[name] @ Z_UP.T - log["link_pos"][:, k], axis=1)
        assert error.max() < TOLERANCE_M, (name, error.max(), int(error.argmax()))
    # no angle wraps from one frame to the next (a viewer would spin the joint round)
    assert np.abs(np.diff(motion[:, 3:], axis=0)).max() < 30.0


# ---------------------------------------------------------------- glTF, read by pygltflib


def _accessor(gltf: object, blob: bytes, index: int) -> np.ndarray:
    acc = gltf.accessors[index]
    view = gltf.bufferViews[acc.bufferView]
    dtype = {5126: np.float32, 5123: np.uint16, 5125: np.uint32}[acc.componentType]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[acc.type]
    start = view.byteOffset + (acc.byteOffset or 0)
    data = np.frombuffer(blob, dtype=dtype, count=acc.count * width, offset=start)
    return data.reshape(acc.count, width) if width > 1 else data


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = np.moveaxis(np.asarray(q, dtype=float), -1, 0)
    return np.moveaxis(
        np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        ),
        (0, 1),
        (-2, -1),
    )


def glb_positions(path: Path) -> tuple[dict[str, np.ndarray], np.ndarray, dict]:
    """World positions (T, 3) of every named node over the animation's keys, in glTF's
    axes, from the nodes' TRS and the animation's channels; the key times; the rotation
    tracks (T, 4) by node."""
    gltf = GLTF2().load(str(path))
    blob = gltf.binary_blob()
    (animation,) = gltf.animations
    times = None
    tracks: dict[tuple[int, str], np.ndarray] = {}
    for channel in animation.channels:
        sampler = animation.samplers[channel.sampler]
        assert sampler.interpolation == "LINEAR"
        keys = _accessor(gltf, blob, sampler.input)
        times = keys if times is None else times
        np.testing.assert_array_equal(keys, times)
        tracks[(channel.target.node, channel.target.path)] = _accessor(gltf, blob, sampler.output)
    T = len(times)
    out: dict[str, np.ndarray] = {}

    def visit(n: int, prot: np.ndarray, ppos: np.ndarray) -> None:
        node = gltf.nodes[n]
        t = tracks.get((n, "translation"), np.broadcast_to(node.translation or [0, 0, 0], (T, 3)))
        q = tracks.get((n, "rotation"), np.broadcast_to(node.rotation or [0, 0, 0, 1], (T, 4)))
        pos = ppos + np.einsum("tij,tj->ti", prot, t)
        rot = prot @ _quat_matrix(q)
        out[node.name] = pos
        for child in node.children or []:
            visit(child, rot, pos)

    for n in gltf.scenes[gltf.scene].nodes:
        visit(n, np.broadcast_to(np.eye(3), (T, 3, 3)), np.zeros((T, 3)))
    rotations = {n: track for (n, path), track in tracks.items() if path == "rotation"}
    return out, times, rotations


@pytest.mark.parametrize("gait", GAITS)
def test_glb_nodes_put_every_link_where_the_log_has_it(runs: dict, gait: str) -> None:
    log, _, _, glb = runs[gait]
    positions, times, rotations = glb_positions(glb)
    t = log["t"]
    assert len(times) == len(t)
    np.testing.assert_allclose(times, t - t[0], atol=1e-4)
    for k, name in enumerate(str(n) for n in log["link_names"]):
        error = np.linalg.norm(positions[name] @ Z_UP.T - log["link_pos"][:, k], axis=1)
        assert error.max() < TOLERANCE_M, (name, error.max(), int(error.argmax()))
    # each rotation track keeps its sign, so interpolation between keys takes the short way
    for quats in rotations.values():
        assert np.einsum("tk,tk->t", quats[1:], quats[:-1]).min() > 0.0


def test_glb_is_laid_out_as_the_spec_asks(runs: dict) -> None:
    """Header and chunks, 4-byte alignment, byte lengths, targets, min and max."""
    data = runs["trot"][3].read_bytes()
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    assert (magic, version, length) == (b"glTF", 2, len(data))
    json_len, json_type = struct.unpack_from("<I4s", data, 12)
    assert json_type == b"JSON" and json_len % 4 == 0
    gltf = json.loads(data[20 : 20 + json_len])
    bin_len, bin_type = struct.unpack_from("<I4s", data, 20 + json_len)
    assert bin_type == b"BIN\0" and bin_len % 4 == 0 and 28 + json_len + bin_len == len(data)
    blob = data[28 + json_len :]
    assert gltf["asset"]["version"] == "2.0"
    (buffer,) = gltf["buffers"]
    assert bin_len - 3 <= buffer["byteLength"] <= bin_len
    for view in gltf["bufferViews"]:
        assert view["byteOffset"] % 4 == 0
        assert view["byteOffset"] + view["byteLength"] <= buffer["byteLength"]
    sizes = {5126: 4, 5123: 2, 5125: 4}
    widths = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}
    for acc in gltf["accessors"]:
        view = gltf["bufferViews"][acc["bufferView"]]
        assert (
            acc["count"] * widths[acc["type"]] * sizes[acc["componentType"]] <= view["byteLength"]
        )
    for mesh in gltf["meshes"]:
        for prim in mesh["primitives"]:
            position = gltf["accessors"][prim["attributes"]["POSITION"]]
            view = gltf["bufferViews"][position["bufferView"]]
            assert view["target"] == 34962
            values = np.frombuffer(
                blob, np.float32, position["count"] * 3, view["byteOffset"]
            ).reshape(-1, 3)
            np.testing.assert_array_equal(position["min"], values.min(axis=0))
            np.testing.assert_array_equal(position["max"], values.max(axis=0))
            indices = gltf["accessors"][prim["indices"]]
            assert gltf["bufferViews"][indices["bufferView"]]["target"] == 34963
            assert indices["count"] % 3 == 0
    (animation,) = gltf["animations"]
    for sampler in animation["samplers"]:
        keys = gltf["accessors"][sampler["input"]]
        assert "target" not in gltf["bufferViews"][keys["bufferView"]]
        assert keys["min"][0] == 0.0 and keys["max"][0] > 0.0
    paths = {(c["target"]["node"], c["target"]["path"]) for c in animation["channels"]}
    links = [i for i, n in enumerate(gltf["nodes"]) if n["name"] != "quadsim"]
    assert {(i, "rotation") for i in links} <= paths
    assert sum(p == "translation" for _, p in paths) == 1


# ---------------------------------------------------------------- the command line


def quadsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "quadsim.scripts.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_export_command_writes_the_file_named(runs: dict, tmp_path: Path) -> None:
    _, npz, bvh, _ = runs["walk"]
    out = quadsim("export", str(npz), "--out", str(tmp_path / "walk.bvh"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "walk.bvh").read_text() == bvh.read_text()


def test_run_exports_straight_from_the_run(tmp_path: Path) -> None:
    out = quadsim(
        "run", "--gait", "walk", "--duration", "0.5", "--quiet", "--export", str(tmp_path / "w.glb")
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "w.glb").read_bytes()[:4] == b"glTF"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["export", "{old}", "--out", "{tmp}/x.glb"], "lacks arrays: link_names, link_parents"),
        (["export", "{new}", "--out", "{tmp}/x.obj"], "formats: .bvh, .glb"),
        (["export", "{new}", "--out", "{tmp}/x"], "formats: .bvh, .glb"),
        (["export", "{new}", "--out", "{tmp}/no/such/x.bvh"], "does not exist"),
        (["export", "{tmp}/none.npz", "--out", "{tmp}/x.bvh"], "does not exist"),
        (["run", "--duration", "1", "--export", "{tmp}/x.fbx"], "formats: .bvh, .glb"),
        (["run", "--duration", "1", "--export", "{tmp}/no/x.glb"], "does not exist"),
        (["view", "{old}", "--out", "{tmp}/x.html"], "lacks arrays: link_names, link_parents"),
        (["view", "{new}", "--out", "{tmp}/x.htm"], "an .html file"),
        (["view", "{new}", "--out", "{tmp}/no/such/x.html"], "does not exist"),
        (["view", "{tmp}/none.npz", "--out", "{tmp}/x.html"], "does not exist"),
        (["run", "--duration", "1", "--html", "{tmp}/x.png"], "an .html file"),
    ],
)
def test_bad_exports_are_one_line_and_status_2(
    runs: dict, tmp_path: Path, args: list[str], expected: str
) -> None:
    old = tmp_path / "old.npz"
    save_log(old, {name: np.zeros((3, 3)) for name in REQUIRED})
    paths = {"old": str(old), "new": str(runs["walk"][1]), "tmp": str(tmp_path)}
    out = quadsim(*(a.format(**paths) for a in args))
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], out.stderr
    assert not list(tmp_path.glob("x*"))


def _srgb_to_linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def test_glb_draws_every_visual_shape_of_the_model_in_its_colour(runs: dict) -> None:
    """One primitive per URDF <visual>, with that visual's colour as its material: the
    dog's looks (tan coat, black saddle, muzzle and ears) reach Blender and the viewers."""
    log, _, _, glb = runs["walk"]
    links = {link.get("name"): link for link in ET.fromstring(str(log["urdf"])).iter("link")}
    gltf = GLTF2().load(str(glb))
    blob = gltf.binary_blob()
    drawn = 0
    for node in gltf.nodes:
        if node.name not in links:
            continue
        visuals = links[node.name].findall("visual")
        primitives = gltf.meshes[node.mesh].primitives if node.mesh is not None else []
        assert len(primitives) == len(visuals), node.name
        for primitive, visual in zip(primitives, visuals, strict=True):
            rgba = [float(v) for v in visual.find("material/color").get("rgba").split()]
            colour = gltf.materials[primitive.material].pbrMetallicRoughness.baseColorFactor
            expected = [_srgb_to_linear(c) for c in rgba[:3]] + rgba[3:]
            np.testing.assert_allclose(colour, expected, atol=1e-6)
        drawn += len(primitives)
    assert drawn >= 50  # many shapes: not one box per link
    # the ears (boxes, turned to stand up) are the head's highest points in its own frame
    head = gltf.meshes[next(n.mesh for n in gltf.nodes if n.name == "head")]
    tops = []
    for primitive, visual in zip(head.primitives, links["head"].findall("visual"), strict=True):
        top = _accessor(gltf, blob, primitive.attributes.POSITION)[:, 2].max()
        tops.append((float(top), visual.find("geometry")[0].tag))
    assert max(tops)[1] == "box"
