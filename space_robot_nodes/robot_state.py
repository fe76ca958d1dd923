"""The system state (q, v) <-> the messages that carry it: JointState for the joints, one nav_msgs/Odometry
per floating base.

Odometry of a subtree: pose of its base link in the world frame, twist of the base link expressed in the
base-link frame (the message's child frame). For a Pinocchio free flyer that twist is exactly the joint
velocity v = [v_lin, w] (LOCAL convention), so q and v pass through the messages without conversion;
spherical and planar bases are mapped to the entries they have.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.model_config import mount_rotation
from space_robot_dynamics.model.system_model import SystemModel

from .conversions import read_joint_state, read_odometry


@dataclass(frozen=True)
class BasePose:
    """Base-link pose in the world frame and twist in the base-link frame (SI units)."""

    position: np.ndarray
    orientation_xyzw: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray


def floating_subtrees(system: SystemModel) -> list:
    return [s for s in system.subtrees if s.root_joint_id != 0]


def check_odometry_topics(system: SystemModel, topics: dict, field: str) -> None:
    """Every floating subtree needs an odometry topic, and every topic a floating subtree."""
    floating = {s.name for s in floating_subtrees(system)}
    unknown = sorted(set(topics) - floating)
    missing = sorted(floating - set(topics))
    if unknown or missing:
        raise ConfigError(field, f"needs one topic per floating subtree {sorted(floating)}"
                          f"{'; unknown ' + str(unknown) if unknown else ''}"
                          f"{'; missing ' + str(missing) if missing else ''}")


class BaseKinematics:
    """Base-link poses and twists of every floating subtree from (q, v), via Pinocchio frame kinematics."""

    def __init__(self, system: SystemModel):
        self.system = system
        self.data = system.model.createData()

    def compute(self, q: np.ndarray, v: np.ndarray) -> dict[str, BasePose]:
        model, data = self.system.model, self.data
        pin.forwardKinematics(model, data, q, v)
        out = {}
        for subtree in floating_subtrees(self.system):
            placement = pin.updateFramePlacement(model, data, subtree.base_frame_id)
            twist = pin.getFrameVelocity(model, data, subtree.base_frame_id, pin.ReferenceFrame.LOCAL)
            out[subtree.name] = BasePose(placement.translation.copy(),
                                         pin.Quaternion(placement.rotation).coeffs().copy(),
                                         twist.linear.copy(), twist.angular.copy())
        return out


class StateAssembler:
    """Rebuilds (q, v) of a SystemModel from JointState and Odometry messages.

    `joints` are the one-DOF joints that must appear in JointState (others in the message are ignored,
    e.g. Sawyer's head_pan). `ready` once every part has been received; `stamp` is the oldest part's time.
    """

    def __init__(self, system: SystemModel, world_frame: str, joints: tuple[str, ...] | None = None):
        self.system = system
        self.world_frame = world_frame
        self.joints = tuple(joints) if joints is not None else system.arm_joints + system.wheel_joints
        self.q = system.neutral()
        self.v = np.zeros(system.nv)
        self._q_slices = [system.q_slice(n) for n in self.joints]
        self._v_index = np.array([system.v_index(n) for n in self.joints], dtype=int)
        self._continuous = [s.stop - s.start == 2 for s in self._q_slices]
        self._bases = {s.name: s for s in floating_subtrees(system)}
        self._stamps: dict[str, float] = {}

    @property
    def ready(self) -> bool:
        return "joints" in self._stamps and all(name in self._stamps for name in self._bases)

    def age(self, now: float) -> float:
        """Seconds since the oldest part was received (inf before all parts arrived)."""
        if not self.ready:
            return float("inf")
        return now - min(self._stamps.values())

    def take_joint_state(self, msg, now: float, field: str = "joint_states") -> None:
        position, velocity = read_joint_state(msg, self.joints, field)
        q = self.q
        for s, continuous, angle in zip(self._q_slices, self._continuous, position):
            if continuous:
                q[s.start], q[s.start + 1] = np.cos(angle), np.sin(angle)
            else:
                q[s.start] = angle
        self.v[self._v_index] = velocity
        self._stamps["joints"] = now

    def take_odometry(self, subtree_name: str, msg, now: float, field: str) -> None:
        subtree = self._bases.get(subtree_name)
        if subtree is None:
            raise CommandError(field, f"no floating subtree {subtree_name!r}")
        position, xyzw, linear, angular = read_odometry(msg, self.world_frame, subtree.base_link, field)
        set_base(self.system, self.q, self.v, subtree, position, xyzw, linear, angular)
        self._stamps[subtree_name] = now


def set_base(system: SystemModel, q: np.ndarray, v: np.ndarray, subtree, position, xyzw, linear, angular) -> None:
    """Write a base pose (world) and twist (base frame) into the root joint entries of q and v.

    The joint placement is the pose relative to the subtree's mount: M_joint = M_mount^-1 M_world.
    """
    name = subtree.config.root_joint_name
    qs, vs = system.q_slice(name), system.v_slice(name)
    kind = subtree.config.base_joint
    xyzw = np.asarray(xyzw, float) / np.linalg.norm(xyzw)
    config = subtree.config
    if any(config.mount_xyz) or any(config.mount_rpy):
        mount = pin.SE3(mount_rotation(config.mount_rpy), np.asarray(config.mount_xyz, float))
        local = mount.actInv(pin.SE3(pin.Quaternion(xyzw).matrix(), np.asarray(position, float)))
        position, xyzw = local.translation, pin.Quaternion(local.rotation).coeffs()
    if kind == "free_flyer":
        q[qs] = np.concatenate([position, xyzw])
        v[vs] = np.concatenate([linear, angular])
    elif kind == "spherical":
        q[qs] = xyzw
        v[vs] = angular
    elif kind == "planar":
        yaw = Rotation.from_quat(xyzw).as_euler("xyz")[2]
        q[qs] = [position[0], position[1], np.cos(yaw), np.sin(yaw)]
        v[vs] = [linear[0], linear[1], angular[2]]
