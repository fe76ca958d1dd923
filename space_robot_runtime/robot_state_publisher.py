"""What robot_state_publisher does in a ROS 2 launch, for the standalone runtime and its bag.

Per model subtree: the xacro-expanded URDF on `<namespace>/robot_description` (std_msgs/String,
transient-local; namespace from the subtree's frame_prefix, e.g. target/robot_description) - RSP keeps the
URDF names unprefixed and prefixes the TF frames, which RViz's RobotModel matches with its TF Prefix. One
tf_static message (transient-local) with every fixed joint of every subtree, and tf for the moving joints
from joint_states at `rate`, stamped with the joint state's time.

Like the real robot_state_publisher (through KDL), the transforms come from the URDF itself, parent link ->
child link = origin(xyz, rpy) * motion(axis, position), with the positions of joint_states as they are (a
continuous joint's angle included): not from the simulator's Pinocchio model, so the bag's tf is an
independent reading of the URDF (test_runtime_bag.py composes it and compares with Pinocchio's frames). All
moving joints are worked out together: a revolute joint's rotation is q_origin * (axis sin(a/2), cos(a/2)),
linear in (sin(a/2), cos(a/2)), so every joint's quaternion is U sin + Q0 cos with U and Q0 fixed at start.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.model.urdf_joints import urdf_joints
from space_robot_nodes import conversions as cv
from space_robot_nodes import message_builders as mb
from space_robot_nodes.message_types import MessageTypes
from space_robot_nodes.node_core import SENSE, NodeCore
from space_robot_scenario.robot_descriptions import robot_descriptions

REVOLUTE = ("revolute", "continuous")
PRISMATIC = ("prismatic",)
MOVING = REVOLUTE + PRISMATIC


def left_product_matrix(xyzw: np.ndarray) -> np.ndarray:
    """L(p) with p * r = L(p) r for quaternions (x, y, z, w) (Hamilton product)."""
    x, y, z, w = xyzw
    return np.array([[w, -z, y, x], [z, w, -x, y], [-y, x, w, z], [-x, -y, -z, w]])


class RobotStatePublisherCore(NodeCore):
    name = "robot_state_publisher"

    def __init__(self, types: MessageTypes, system: SystemModel, joint_states: str, tf: str, tf_static: str,
                 rate: float):
        super().__init__(types)
        self.system = system
        self.topics = {"joint_states": joint_states, "tf": tf, "tf_static": tf_static}
        self.descriptions: dict[str, str] = {}
        joints = []
        for description in robot_descriptions(system.config):
            self.descriptions[description.topic] = description.urdf
            joints += urdf_joints(description.urdf, description.frame_prefix)
        self.static_joints = [j for j in joints if j.kind not in MOVING]
        self.moving_joints = [j for j in joints if j.kind in MOVING]
        moving = self.moving_joints
        revolute = np.array([j.kind in REVOLUTE for j in moving], dtype=bool)
        origins = np.array([j.origin_xyzw for j in moving]).reshape(-1, 4)
        axes = np.array([j.axis for j in moving]).reshape(-1, 3)
        lefts = [left_product_matrix(q) for q in origins]
        # quaternion = U sin(a/2) + Q0 cos(a/2) (revolute; U = 0 for prismatic, whose rotation is the origin's)
        self._u = np.array([left[:, :3] @ axis if r else np.zeros(4) for left, axis, r in zip(lefts, axes, revolute)])
        self._q0 = origins
        # translation = origin + R_origin axis d (prismatic; zero slide for revolute)
        self._xyz0 = np.array([j.origin_xyz for j in moving]).reshape(-1, 3)
        self._slide = np.array([pin.Quaternion(q[3], q[0], q[1], q[2]).toRotationMatrix() @ a if not r
                                else np.zeros(3) for q, a, r in zip(origins, axes, revolute)]).reshape(-1, 3)
        self._revolute = revolute.astype(float)
        self._any_prismatic = not revolute.all()
        self._names = tuple(j.name for j in moving)
        self._frames = [(j.parent, j.child) for j in moving]
        self._row_plan: tuple | None = None          # (name tuple of the last JointState, rows of our joints)
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

    def start(self) -> None:
        t = self.now()
        for topic, urdf in sorted(self.descriptions.items()):
            self.publish(topic, cv.string(self.types, urdf))
        self.publish(self.topics["tf_static"], cv.tf_message(self.types, [
            cv.transform_stamped(self.types, t, j.parent, j.child, j.origin_xyz, j.origin_xyzw)
            for j in self.static_joints]))

    def poses(self, names, position) -> np.ndarray | None:
        """[x, y, z, qx, qy, qz, qw] of each moving joint's child link in its parent link (rows in moving_joints
        order) for the named positions (rad, m); None when a moving joint is not named."""
        names = tuple(names)
        if self._row_plan is None or self._row_plan[0] != names:
            row_of = {name: i for i, name in enumerate(names)}
            rows = [row_of.get(name) for name in self._names]
            self._row_plan = (names, None if None in rows else np.array(rows, dtype=int))
        rows = self._row_plan[1]
        if rows is None:
            return None
        values = np.asarray(position, dtype=float)[rows]
        half = 0.5 * values * self._revolute           # a prismatic joint keeps its origin's rotation
        quaternions = self._u * np.sin(half)[:, None] + self._q0 * np.cos(half)[:, None]
        translations = self._xyz0 + self._slide * values[:, None] if self._any_prismatic else self._xyz0
        return np.hstack((translations, quaternions))

    def publish_tf(self, now: float) -> None:
        msg = self._latest
        topic = self.topics["tf"]
        if msg is None or not self.moving_joints or not self.wanted(topic):
            return
        poses = self.poses(msg.name, msg.position)
        if poses is None:            # a joint_states without all our joints: nothing to publish (as RSP)
            return
        build, header = self._tf.from_xyzquat, self._header
        stamp = msg.header.stamp                       # the joint state's time, as robot_state_publisher
        transforms = [build(header(stamp, parent), child, pose)
                      for (parent, child), pose in zip(self._frames, poses.tolist())]
        self.publish(topic, self._tf.message(transforms))
