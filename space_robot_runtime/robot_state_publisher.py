"""What robot_state_publisher does in a ROS 2 launch, for the standalone runtime and its bag.

Per model subtree: the xacro-expanded URDF on `<namespace>/robot_description` (std_msgs/String,
transient-local; namespace from the subtree's frame_prefix, e.g. target/robot_description) - RSP keeps the
URDF names unprefixed and prefixes the TF frames, which RViz's RobotModel matches with its TF Prefix. One
tf_static message (transient-local) with every fixed joint of every subtree, and tf for the moving joints
from joint_states at `rate`. Transforms are parent link -> child link, computed from Pinocchio's frame
placements of the same model the simulator uses.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_nodes import conversions as cv
from space_robot_nodes import message_builders as mb
from space_robot_nodes.message_types import MessageTypes
from space_robot_nodes.node_core import SENSE, NodeCore
from space_robot_nodes.robot_descriptions import robot_descriptions

MOVING = ("revolute", "continuous", "prismatic")


class RobotStatePublisherCore(NodeCore):
    name = "robot_state_publisher"

    def __init__(self, types: MessageTypes, system: SystemModel, joint_states: str, tf: str, tf_static: str,
                 rate: float):
        super().__init__(types)
        self.system = system
        self.topics = {"joint_states": joint_states, "tf": tf, "tf_static": tf_static}
        self.data = system.model.createData()
        self.descriptions: dict[str, str] = {}
        self.static_joints: list[tuple[str, str]] = []     # (parent frame, child frame), prefixed
        self.moving_joints: list[tuple[str, str, str]] = []  # (joint name in the model, parent, child)
        for description in robot_descriptions(system.config):
            self.descriptions[description.topic] = description.urdf
            prefix = description.frame_prefix
            for joint in ET.fromstring(description.urdf).findall("joint"):
                parent = prefix + joint.find("parent").get("link")
                child = prefix + joint.find("child").get("link")
                if joint.get("type") in MOVING:
                    self.moving_joints.append((prefix + joint.get("name"), parent, child))
                else:
                    self.static_joints.append((parent, child))
        self._frame = {name: system.model.getFrameId(name)
                       for pair in self.static_joints + [(p, c) for _, p, c in self.moving_joints] for name in pair}
        # (parent, child, oMf[parent], oMf[child]): Pinocchio's vector items are views into self.data, which
        # framesForwardKinematics updates in place, so they are looked up once (test_runtime_bag checks the
        # published joint transforms against the joint angles)
        placements = self.data.oMf
        self._moving_placements = [(parent, child, placements[self._frame[parent]], placements[self._frame[child]])
                                   for _, parent, child in self.moving_joints]
        self._q_index = _JointIndex(system, [name for name, _, _ in self.moving_joints])
        self._tf = mb.TransformBuilder(types)
        self._header = types.constructor("std_msgs/msg/Header", ("stamp", "frame_id"))
        self._latest = None
        for topic in sorted(self.descriptions):
            self.add_publication(topic, cv.STRING, transient_local=True)
        self.add_publication(tf_static, cv.TF_MESSAGE, transient_local=True)
        self.add_publication(tf, cv.TF_MESSAGE)
        self.add_subscription(joint_states, cv.JOINT_STATE, self._on_joint_state)
        self.add_timer("tf", 1.0 / rate, self.publish_tf, SENSE, ("nodes", "dynamics.rates.tf"))

    def _on_joint_state(self, msg) -> None:
        self._latest = msg

    def _relative(self, parent: str, child: str) -> pin.SE3:
        placements = self.data.oMf
        return placements[self._frame[parent]].actInv(placements[self._frame[child]])

    def _transforms(self, t: float, pairs) -> list:
        out = []
        for parent, child in pairs:
            m = self._relative(parent, child)
            out.append(cv.transform_stamped(self.types, t, parent, child, m.translation,
                                            pin.Quaternion(m.rotation).coeffs()))
        return out

    def start(self) -> None:
        t = self.now()
        for topic, urdf in sorted(self.descriptions.items()):
            self.publish(topic, cv.string(self.types, urdf))
        pin.framesForwardKinematics(self.system.model, self.data, self.system.neutral())
        self.publish(self.topics["tf_static"], cv.tf_message(self.types, self._transforms(t, self.static_joints)))

    def publish_tf(self, now: float) -> None:
        msg = self._latest
        topic = self.topics["tf"]
        if msg is None or not self.moving_joints or not self.wanted(topic):
            return
        pin.framesForwardKinematics(self.system.model, self.data, self._q_index.configuration(msg))
        build, header, to_xyzquat = self._tf.from_xyzquat, self._header, pin.SE3ToXYZQUAT
        stamp = msg.header.stamp                       # the joint state's time, as robot_state_publisher
        transforms = [build(header(stamp, parent), child, to_xyzquat(placement.actInv(child_placement)).tolist())
                      for parent, child, placement, child_placement in self._moving_placements]
        self.publish(topic, self._tf.message(transforms))


class _JointIndex:
    """Model configuration q from a JointState's named positions; joints it does not name stay neutral."""

    def __init__(self, system: SystemModel, joints: list[str]):
        self.system = system
        self.joints = list(joints)
        self.neutral = system.neutral()
        self._names = None
        self._plan = None

    def configuration(self, msg) -> np.ndarray:
        names = msg.name
        if names is not self._names:                    # a new name list: map it (once for a fixed publisher)
            self._plan = self._map(list(names))
            self._names = names if isinstance(names, tuple) else None   # only an immutable list is cached
        rows, q_index, cos_rows, cos_index = self._plan
        position = np.asarray(msg.position, dtype=float)
        q = self.neutral.copy()
        q[q_index] = position[rows]
        if len(cos_rows):
            angles = position[cos_rows]
            q[cos_index] = np.cos(angles)
            q[cos_index + 1] = np.sin(angles)
        return q

    def _map(self, names: list[str]):
        """(rows, q indices) of the revolute/prismatic joints and (rows, cos indices) of the continuous ones."""
        row_of = {name: i for i, name in enumerate(names)}
        plain, continuous = ([], []), ([], [])
        for joint in self.joints:
            if joint in row_of:
                s = self.system.q_slice(joint)
                target = continuous if s.stop - s.start == 2 else plain
                target[0].append(row_of[joint])
                target[1].append(s.start)
        return tuple(np.array(x, dtype=int) for x in plain + continuous)
