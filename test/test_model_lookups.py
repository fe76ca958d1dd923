"""build_model from a file, a name, a mapping or a ModelConfig, and SystemModel's lookups by name.

References: the URDF files' own joint and link names (read with ElementTree, not Pinocchio) and the model
config's subtree list.
"""
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model import urdf_source
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import build_model
from space_robot_dynamics.package_share import resolve


def test_every_form_of_source_builds_the_same_model():
    path = resolve("config/models/hubble.yaml")
    mapping = yaml.safe_load(path.read_text())
    models = [build_model(x) for x in ("hubble", "config/models/hubble.yaml", path, mapping,
                                       load_model_config(path))]
    for system in models[1:]:
        assert list(system.model.names) == list(models[0].model.names)
        assert system.nq == models[0].nq and system.nv == models[0].nv
        assert system.subtree_names() == ["servicer", "target"]


def test_bad_sources_name_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="model: 'no_such_model': no such file"):
        build_model("no_such_model")
    with pytest.raises(ConfigError, match="model: expected a mapping, a path or a name, got int"):
        build_model(3)
    with pytest.raises(ConfigError, match=r"<model mapping>: subtrees: is required"):
        build_model({"name": "empty"})


def test_subtrees_joints_and_frames_by_name(servicer_target):
    system = servicer_target
    expanded = urdf_source.expand(resolve("urdf/servicer.urdf.xacro"), {"wheel_layout": "orthogonal"})
    root = ET.fromstring(expanded)
    urdf_joints = {j.get("name") for j in root.findall("joint") if j.get("type") != "fixed"}
    servicer = system.subtree("servicer")
    assert servicer.base_joint == "servicer_base_joint" == system.base_joint("servicer")
    assert servicer.base_joint_type == "free_flyer"
    assert set(servicer.joint_names) == urdf_joints | {"servicer_base_joint"}
    assert {link.get("name") for link in root.findall("link")} <= set(servicer.frame_names)
    target = system.subtree("target")
    assert target.joint_names == ("target/target_base_joint",)
    assert system.subtree_of("target/grapple_frame") is target
    assert system.subtree_of("right_j3") is servicer and system.subtree_of("rw_x") is servicer
    # the base joint's entries in q: position (m) and quaternion (x, y, z, w)
    q = system.neutral()
    assert np.array_equal(q[system.q_slice(system.base_joint("target"))], [0, 0, 0, 0, 0, 0, 1])
    assert system.model.frames[system.frame_id("right_hand")].name == "right_hand"


def test_unknown_names_are_command_errors(servicer_target):
    system = servicer_target
    for call, message in ((lambda: system.subtree("bus"), r"subtree: unknown subtree 'bus' \(have \['servicer', "),
                          (lambda: system.subtree_of("right_l9"), "name: no joint, link or frame named 'right_l9'"),
                          (lambda: system.frame_id("hand"), "frame: no link or frame named 'hand'")):
        with pytest.raises(CommandError, match=message):
            call()
    fixed = build_model("sawyer_fixed")
    with pytest.raises(CommandError, match="subtree: subtree 'arm' has a fixed base: no base joint"):
        fixed.base_joint("arm")
