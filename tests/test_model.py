"""The generated dog: URDF loads into pybullet and matches its spec and skeleton map."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from quadsim.controller.sim import World
from quadsim.models import LEGS, DogSpec, ModelError, build_skeleton, preset, urdf_text


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
