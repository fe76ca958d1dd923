"""The standalone robot_state_publisher reads the URDF as the real one does (origin * motion about the joint axis,
positions from joint_states): composed along the tree, its transforms must give every link's pose that
Pinocchio's frame kinematics of the simulator's model give, an independent reading of the same URDF."""
from __future__ import annotations

import textwrap

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.model.model_config import load_model_config, read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_runtime.robot_state_publisher import RobotStatePublisherCore

TOLERANCE = 1e-12      # m and rad: two products of a few rotations in double precision


def link_poses(rsp: RobotStatePublisherCore, names, positions, roots: dict) -> dict:
    """world pose (pin.SE3) of every link reachable from `roots` (link -> world pose) through the publisher's
    static and moving transforms."""
    poses = dict(roots)
    edges = {(j.parent, j.child): pin.XYZQUATToSE3(np.concatenate((j.origin_xyz, j.origin_xyzw)))
             for j in rsp.static_joints}
    moving = rsp.poses(names, positions)
    edges.update({pair: pin.XYZQUATToSE3(pose) for pair, pose in zip(rsp._frames, moving)})
    grown = True
    while grown:
        grown = False
        for (parent, child), placement in edges.items():
            if parent in poses and child not in poses:
                poses[child] = poses[parent] * placement
                grown = True
    return poses


def check_against_pinocchio(system: SystemModel, seed: int) -> int:
    rsp = RobotStatePublisherCore(RosbagsMessageTypes(), system, "joint_states", "tf", "tf_static", 100.0)
    rng = np.random.default_rng(seed)
    model, data = system.model, system.model.createData()
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    q = np.where(np.isfinite(q), q, rng.uniform(-1, 1, model.nq))
    q = pin.normalize(model, q)
    pin.framesForwardKinematics(model, data, q)
    names = [j.name for j in rsp.moving_joints]
    positions = [system.joint_angle(q, name) for name in names]
    roots = {s.base_link: data.oMf[s.base_frame_id] for s in system.subtrees}
    poses = link_poses(rsp, names, positions, roots)
    checked = 0
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.name in poses:
            error = pin.log6(data.oMf[model.getFrameId(frame.name)].actInv(poses[frame.name])).vector
            assert np.abs(error).max() < TOLERANCE, frame.name
            checked += 1
    return checked


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_servicer_and_target_links_where_pinocchio_puts_them(servicer_target, seed):
    # every link of both spacecraft (2 roots, 14 through joints): arm (revolute), wheels (continuous), fixed
    # mounts, hand, grapple fixture
    assert check_against_pinocchio(servicer_target, seed) == 16


def test_prismatic_and_unaligned_axes(tmp_path):
    link = '<link name="{n}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" ' \
           'iyz="0"/></inertial></link>'
    urdf = tmp_path / "r.urdf"
    urdf.write_text(textwrap.dedent(f"""\
        <robot name="r">{''.join(link.format(n=n) for n in ("base", "a", "b", "c", "d"))}
          <joint name="slide" type="prismatic"><parent link="base"/><child link="a"/>
            <origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.5"/><axis xyz="1 2 -1"/>
            <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
          <joint name="tilted" type="revolute"><parent link="a"/><child link="b"/>
            <origin xyz="0 0.4 0" rpy="1.0 0.2 -0.4"/><axis xyz="0.3 -0.5 0.8"/>
            <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
          <joint name="spin" type="continuous"><parent link="b"/><child link="c"/>
            <origin xyz="0.2 0 0.1"/><axis xyz="0 1 0"/></joint>
          <joint name="mount" type="fixed"><parent link="c"/><child link="d"/>
            <origin xyz="0 0 0.5" rpy="0 1.2 0"/></joint>
        </robot>
        """))
    config = read_model_config(ConfigReader({
        "name": "r", "arm_joints": ["slide", "tilted", "spin"],
        "subtrees": [{"name": "r", "urdf": str(urdf), "base_joint": "free_flyer", "base_link": "base"}]}, "test"))
    for seed in range(3):
        assert check_against_pinocchio(SystemModel(config), seed) == 5


def test_a_joint_state_without_every_moving_joint_gives_no_transforms():
    system = SystemModel(load_model_config("config/models/sawyer_fixed.yaml"))
    rsp = RobotStatePublisherCore(RosbagsMessageTypes(), system, "joint_states", "tf", "tf_static", 100.0)
    assert rsp.poses(["right_j0"], [0.1]) is None
