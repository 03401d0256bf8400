"""The generated dog: URDF loads into pybullet and matches its spec and skeleton map; its
looks are visual shapes apart from the physics' collision shapes."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from quadsim.controller.sim import World
from quadsim.models import LEGS, DogSpec, ModelError, Skeleton, build_skeleton, preset, urdf_text
from quadsim.models.looks import rest_origins, visual_shapes


@pytest.mark.parametrize("name", ["shepherd", "small"])
def test_urdf_loads_with_the_spec_mass_links_and_joint_limits(name: str) -> None:
    spec = preset(name)
    sk = build_skeleton(spec)
    with World(spec) as world:
        c, dog = world.client, world.dog
        n = c.getNumJoints(dog)
        assert n + 1 == sk.n_bodies  # every link and connector is a body
        masses = [c.getDynamicsInfo(dog, i)[0] for i in range(-1, n)]
        assert math.isclose(sum(masses), spec.total_mass, rel_tol=1e-6)
        by_name = {c.getJointInfo(dog, i)[1].decode(): c.getJointInfo(dog, i) for i in range(n)}
        for joint in sk.joints:
            info = by_name[joint.name]
            assert info[8] == pytest.approx(joint.lower)
            assert info[9] == pytest.approx(joint.upper)
            assert info[10] == pytest.approx(joint.torque_limit, rel=1e-5)


def test_skeleton_map_names_every_part_the_issue_asks_for() -> None:
    sk = build_skeleton(preset("shepherd"))
    names = set(sk.joint_names)
    assert len(sk.spine_links) >= 3 and len(sk.spine_joints) >= 4
    assert all(p in names and y in names for p, y in sk.spine_joints)
    assert len(sk.neck_joints) >= 2 and len(sk.tail_joints) >= 2
    assert set(sk.legs) == set(LEGS)
    for leg in LEGS:
        assert len(sk.legs[leg].joints) == 5 and set(sk.legs[leg].joints) <= names
    # anatomical bends: elbows flex backwards (negative), knees forwards (positive)
    lower, upper, _ = sk.limits()
    elbow, knee = sk.joint_index("LF_elbow"), sk.joint_index("LH_knee")
    assert lower[elbow] < -1.5 and upper[elbow] < 0.2
    assert upper[knee] > 1.5 and lower[knee] > -0.2


def test_shepherd_is_a_german_shepherd_sized_dog_and_small_is_smaller() -> None:
    with World("shepherd") as big, World("small") as small:
        withers = dict(zip(big.marker_names, big.marker_positions(), strict=True))["LF_scapula"]
        assert 0.55 < withers[2] < 0.7  # shoulder height about 0.6 m
        assert small.stand_height < 0.75 * big.stand_height
    assert preset("small").total_mass == pytest.approx(10.0)


def test_urdf_is_well_formed_xml_with_feet_spheres() -> None:
    root = ET.fromstring(urdf_text(preset("shepherd")))
    assert len(root.findall("joint")) == 38
    spheres = root.findall(".//collision/geometry/sphere")
    assert len(spheres) == 4


def test_bad_spec_and_unknown_preset_name_the_problem() -> None:
    with pytest.raises(ModelError, match="shepherd, small"):
        preset("tiny")
    with pytest.raises(ModelError, match="thigh"):
        DogSpec(thigh=-0.1)


def _rest_extent_z(sk: Skeleton, link: str) -> tuple[float, float]:
    """(lowest, highest) z [m] of a link's visual shapes in the pelvis frame at rest."""
    origin = rest_origins(sk)[link]
    low, high = [], []
    for shape in visual_shapes(sk)[link]:
        roll, pitch, _ = shape.rpy
        z = origin[2] + shape.xyz[2]
        if shape.kind == "capsule":  # the axis' vertical reach, plus the radius
            r, length = shape.size
            reach = 0.5 * length * abs(math.cos(pitch) * math.cos(roll)) + r
        else:
            reach = max(shape.size) if shape.kind == "box" else shape.size[0]
        low.append(z - reach)
        high.append(z + reach)
    return min(low), max(high)


@pytest.mark.parametrize("name", ["shepherd", "small"])
def test_visual_shapes_differ_from_collision_while_masses_and_inertias_match_the_spec(
    name: str,
) -> None:
    sk = build_skeleton(preset(name))
    root = ET.fromstring(urdf_text(sk))
    links = {link.get("name"): link for link in root.findall("link")}
    many_looks = 0
    for link in sk.links:
        xml = links[link.name]
        # the physics sees exactly the skeleton: its shape (and foot sphere), mass, inertia
        collisions = xml.findall("collision")
        assert len(collisions) == (2 if link.foot_radius > 0 else 1)
        shape = collisions[0].find("geometry")[0]
        assert shape.tag == link.shape
        inertial = xml.find("inertial")
        assert float(inertial.find("mass").get("value")) == pytest.approx(link.mass, rel=1e-5)
        inertia = inertial.find("inertia")
        moments = [float(inertia.get(k)) for k in ("ixx", "iyy", "izz")]
        assert moments == pytest.approx(link.inertia_diagonal(), rel=1e-5)
        # the eye sees other shapes, in other places
        visuals = [
            (v.find("geometry")[0].tag, v.find("geometry")[0].attrib, v.find("origin").attrib)
            for v in xml.findall("visual")
        ]
        seen = [(c.find("geometry")[0].tag, c.find("geometry")[0].attrib) for c in collisions]
        assert visuals and [(tag, size) for tag, size, _ in visuals] != seen
        many_looks += len(visuals) >= 2
    assert many_looks >= 10  # trunk, neck, head and tail are drawn with several shapes each
    with World(preset(name)) as world:
        c, dog = world.client, world.dog
        for link in sk.links:
            i = world.link_ids[link.name]
            mass, _, inertia = c.getDynamicsInfo(dog, i)[:3]
            assert mass == pytest.approx(link.mass, rel=1e-5)
            assert inertia == pytest.approx(link.inertia_diagonal(), rel=1e-4)
            collision = c.getCollisionShapeData(dog, i)
            assert len(collision) == (2 if link.foot_radius > 0 else 1)
        assert len(c.getVisualShapeData(dog)) == sum(len(v) for v in visual_shapes(sk).values())


def test_the_dog_looks_like_a_shepherd() -> None:
    """A deep chest tapering to the loin, a muzzle, upright ears, a tail thicker than its
    bone, black saddle over tan."""
    sk = build_skeleton(preset("shepherd"))
    looks = visual_shapes(sk)
    chest_low, chest_high = _rest_extent_z(sk, "chest")
    loin_low, loin_high = _rest_extent_z(sk, sk.spine_links[0])
    assert chest_high - chest_low > 1.5 * (loin_high - loin_low)
    assert chest_high - chest_low > sk.spec.chest_size[2]  # deeper than the collision box
    head = looks["head"]
    colours = {shape.colour for shape in head}
    assert {"tan", "muzzle", "nose", "eye", "saddle"} <= colours
    # the muzzle reaches forward of the skull; the ears stand up out of it, so that with the
    # head carried 17 degrees nose down (the gaits' head_pitch) their tips point up
    muzzle_x = max(s.xyz[0] + 0.5 * s.size[1] for s in head if s.colour == "muzzle")
    skull_x = max(s.xyz[0] for s in head if s.colour == "tan")
    assert muzzle_x > skull_x + 0.1
    ears = [s for s in head if s.kind == "box"]
    assert len(ears) == 2
    carriage = math.radians(17.0)
    for ear in ears:
        roll, pitch, _ = ear.rpy
        # the corners of the ear's square, in its plane, turned by the ear's and the head's
        # rotations; the highest is the tip
        corners = np.array([[0.0, a, b] for a in (-1.0, 1.0) for b in (-1.0, 1.0)])
        c, s = math.cos(roll), math.sin(roll)
        corners = corners @ np.array([[1, 0, 0], [0, c, -s], [0, s, c]]).T
        c, s = math.cos(pitch + carriage), math.sin(pitch + carriage)
        corners = corners @ np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]).T
        tip = max(corners, key=lambda v: v[2])
        tip = tip / np.linalg.norm(tip)
        assert tip[2] > math.cos(math.radians(30.0))  # within 30 degrees of vertical
        assert np.sign(tip[1]) == np.sign(ear.xyz[1])  # leaning out, not in
    tail = [s for name, shapes in looks.items() if name.startswith("tail") for s in shapes]
    assert max(s.size[0] for s in tail) > 1.5 * sk.spec.tail_radius
    back = [s.colour for name in ("pelvis", *sk.spine_links) for s in looks[name]]
    assert "saddle" in back and "tan" in back
    paws = [s for s in looks[sk.legs["LF"].foot_link] if s.size[0] == sk.spec.foot_radius]
    assert paws and all(s.colour == "cream" for s in paws)
