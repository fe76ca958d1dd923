"""initial_state poses are the base link's in the world frame, with or without a `mount` in the model config.

Reference: the simulator's observation of the base link (Pinocchio frame kinematics of the built model, mount
included), which never goes through initial_state.py. In an earlier version a mounted free flyer's `position` was
taken relative to the mount; these tests fail on that. Tolerance 1e-12: one rigid transformation and its
inverse, round-off only.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import build_model
from space_robot_dynamics.simulation.initial_state import read_initial_state
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

MOUNT = {"xyz": [1.0, -2.0, 0.5], "rpy": [0.3, -0.2, 0.7]}


def target_on(base_joint, mount=None):
    """The target cube alone on a base joint, mounted as given."""
    subtree = {"name": "target", "urdf": "urdf/target.urdf.xacro", "base_joint": base_joint, "base_link": "base_link"}
    if mount is not None:
        subtree["mount"] = mount
    return build_model({"name": f"target_{base_joint}", "subtrees": [subtree]})


def observed_base(system, data):
    q, v = read_initial_state(ConfigReader(data, "scenario.yaml", "initial_state"), system)
    return Simulator(system, SimulationSettings(), q, v).observe().bases["target"]


def same_rotation(xyzw, expected_matrix):
    return np.abs(Rotation.from_quat(xyzw).as_matrix() - expected_matrix).max() < 1e-12


@pytest.mark.parametrize("mount", [None, MOUNT])
def test_free_flyer_pose_is_in_the_world_frame(mount):
    system = target_on("free_flyer", mount)
    pose = {"position": [3.0, 1.0, -0.4], "orientation_rpy": [0.1, 0.5, -0.3],
            "linear_velocity": [0.01, -0.02, 0.03], "angular_velocity": [0.002, 0.001, -0.004]}
    base = observed_base(system, {"target": pose})
    assert np.abs(base.position - pose["position"]).max() < 1e-12
    assert same_rotation(base.orientation_xyzw, Rotation.from_euler("xyz", pose["orientation_rpy"]).as_matrix())
    assert np.abs(base.linear_velocity - pose["linear_velocity"]).max() < 1e-12      # base-link frame
    assert np.abs(base.angular_velocity - pose["angular_velocity"]).max() < 1e-12


def test_thesis_target_position_is_in_the_world_frame():
    """The repository's mounted free flyer: thesis_6dof's target sits 7.357 m out along x at q = neutral."""
    system = build_model("thesis_6dof")
    q, _ = read_initial_state(ConfigReader({"target": {"position": [8.0, 0.0, 0.0]}}), system)
    base = Simulator(system, SimulationSettings(), q).observe().bases["target"]
    assert np.abs(base.position - [8.0, 0.0, 0.0]).max() < 1e-12


def test_spherical_orientation_is_in_the_world_frame():
    system = target_on("spherical", MOUNT)
    xyzw = Rotation.from_euler("xyz", [0.2, -0.1, 0.4]).as_quat()
    base = observed_base(system, {"target": {"orientation_xyzw": xyzw.tolist(), "angular_velocity": [0.0, 0.1, 0.2]}})
    assert same_rotation(base.orientation_xyzw, Rotation.from_quat(xyzw).as_matrix())
    assert np.abs(base.position - MOUNT["xyz"]).max() < 1e-12                     # the pivot
    assert np.abs(base.angular_velocity - [0.0, 0.1, 0.2]).max() < 1e-12


def test_planar_pose_is_in_the_world_frame():
    system = target_on("planar", MOUNT)
    plane = Rotation.from_euler("xyz", MOUNT["rpy"]).as_matrix()
    position = np.array(MOUNT["xyz"]) + plane @ [0.7, -0.3, 0.0]          # a point of the mount's x-y plane
    attitude = plane @ Rotation.from_euler("z", 0.9).as_matrix()          # turned about the plane's normal
    base = observed_base(system, {"target": {"position": position.tolist(),
                                             "orientation_xyzw": Rotation.from_matrix(attitude).as_quat().tolist(),
                                             "linear_velocity": [0.1, -0.2, 0.0],
                                             "angular_velocity": [0.0, 0.0, 0.05]}})
    assert np.abs(base.position - position).max() < 1e-12
    assert same_rotation(base.orientation_xyzw, attitude)
    assert np.abs(base.linear_velocity - [0.1, -0.2, 0.0]).max() < 1e-12
    assert np.abs(base.angular_velocity - [0.0, 0.0, 0.05]).max() < 1e-12


@pytest.mark.parametrize("base_joint, entry, message", [
    ("spherical", {"position": [0.0, 0.0, 0.9]}, "initial_state.target.position: a spherical base does not "
                                                 "translate"),
    ("spherical", {"linear_velocity": [0.1, 0.0, 0.0]}, "initial_state.target.linear_velocity: a spherical"),
    ("planar", {"position": [1.0, 2.0, 0.3]}, "initial_state.target.position: is 0.3 m off the plane"),
    ("planar", {"orientation_rpy": [0.1, 0.0, 0.5]}, "initial_state.target.orientation_rpy: tilts the planar base"),
    ("planar", {"linear_velocity": [0.0, 0.0, 0.1]}, "initial_state.target.linear_velocity: a planar base"),
    ("planar", {"angular_velocity": [0.1, 0.0, 0.0]}, "initial_state.target.angular_velocity: a planar base"),
    ("fixed", {"position": [0.0, 0.0, 0.0]}, "initial_state.target: this subtree has a fixed base"),
])
def test_poses_a_base_joint_cannot_take_are_rejected(base_joint, entry, message):
    system = target_on(base_joint)
    with pytest.raises(ConfigError, match=message):
        read_initial_state(ConfigReader({"target": entry}, "scenario.yaml", "initial_state"), system)
