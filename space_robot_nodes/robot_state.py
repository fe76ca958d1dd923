"""The system state (q, v) <-> the messages that carry it: JointState for the joints, one nav_msgs/Odometry
per floating base.

Odometry of a subtree: pose of its base link in the world frame, twist of the base link expressed in the
base-link frame (the message's child frame). For a Pinocchio free flyer that twist is exactly the joint
velocity v = [v_lin, w] (LOCAL convention), so q and v pass through the messages without conversion;
spherical and planar bases are mapped to the entries they have.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.index_views import contiguous_index
from space_robot_dynamics.model.model_config import mount_rotation
from space_robot_dynamics.model.system_model import SystemModel

from .conversions import read_joint_state, read_odometry_values, seconds


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
    """Base-link poses and twists of every floating subtree from (q, v).

    A free flyer mounted at the world origin whose base link is its joint frame (the usual case) is read
    straight from q and v; any other base goes through Pinocchio's frame kinematics.
    """

    def __init__(self, system: SystemModel):
        self.system = system
        self.data = system.model.createData()
        self._direct = {}
        model = system.model
        for subtree in floating_subtrees(system):
            joint = model.joints[subtree.root_joint_id]
            if (subtree.config.base_joint == "free_flyer"
                    and model.jointPlacements[subtree.root_joint_id].isIdentity()
                    and model.frames[subtree.base_frame_id].placement.isIdentity()
                    and model.frames[subtree.base_frame_id].parentJoint == subtree.root_joint_id):
                self._direct[subtree.name] = (joint.idx_q, joint.idx_v)
        # the same by subtree object identity: lists() runs at 1 kHz and subtree.name is a property
        self._direct_by_subtree = {id(s): self._direct[s.name] for s in floating_subtrees(system)
                                   if s.name in self._direct}

    def lists(self, subtree, q: np.ndarray, v: np.ndarray) -> tuple[list, list]:
        """compute_one as Python floats, [x, y, z, qx, qy, qz, qw] and [vx, vy, vz, wx, wy, wz] (the message
        builders' fast input)."""
        direct = self._direct_by_subtree.get(id(subtree))
        if direct is not None:
            iq, iv = direct
            return q[iq:iq + 7].tolist(), v[iv:iv + 6].tolist()
        base = self.compute_one(subtree, q, v)
        return ([*base.position.tolist(), *base.orientation_xyzw.tolist()],
                [*base.linear_velocity.tolist(), *base.angular_velocity.tolist()])

    def compute_one(self, subtree, q: np.ndarray, v: np.ndarray) -> BasePose:
        direct = self._direct.get(subtree.name)
        if direct is not None:
            iq, iv = direct
            return BasePose(q[iq:iq + 3].copy(), q[iq + 3:iq + 7].copy(), v[iv:iv + 3].copy(), v[iv + 3:iv + 6].copy())
        model, data = self.system.model, self.data
        pin.forwardKinematics(model, data, q, v)
        placement = pin.updateFramePlacement(model, data, subtree.base_frame_id)
        twist = pin.getFrameVelocity(model, data, subtree.base_frame_id, pin.ReferenceFrame.LOCAL)
        return BasePose(placement.translation.copy(), pin.Quaternion(placement.rotation).coeffs().copy(),
                        twist.linear.copy(), twist.angular.copy())


class StateAssembler:
    """Rebuilds (q, v) of a SystemModel from JointState and Odometry messages.

    `joints` are the one-DOF joints that must appear in JointState (others in the message are ignored,
    e.g. Sawyer's head_pan). A flexible model's modal coordinates and motor angles come from a third part,
    "flexible" (the dynamics node's flexible_modes, docs/flexibility.md sec. 7): every modal coordinate and
    `<joint>/motor` must be in it; the tip chains then follow (eq. 14).
    `ready` once every part has been received; `age` counts from the oldest part.
    Subscription callbacks (`holder`) keep the latest message with its arrival time; `update()` parses the held
    ones when the node needs the state, so a 50 Hz node does not parse a 1 kHz stream.
    """

    def __init__(self, system: SystemModel, world_frame: str, joints: tuple[str, ...] | None = None):
        self.system = system
        self.world_frame = world_frame
        self.joints = tuple(joints) if joints is not None else system.arm_joints + system.wheel_joints
        self.q = system.neutral()
        self.v = np.zeros(system.nv)
        slices = [system.q_slice(n) for n in self.joints]
        continuous = np.array([s.stop - s.start == 2 for s in slices], dtype=bool)
        rows = np.flatnonzero(~continuous)
        self._revolute_rows = contiguous_index(rows)
        self._revolute_q = contiguous_index(np.array([slices[i].start for i in rows], dtype=int))
        cos_rows = np.flatnonzero(continuous)
        # continuous joints: (row in the message, index of cos in q); sin follows cos
        self._continuous = [(int(row), slices[row].start) for row in cos_rows]
        self._v_index = contiguous_index(np.array([system.v_index(n) for n in self.joints], dtype=int))
        self._bases = {s.name: BaseSlot(system, s) for s in floating_subtrees(system)}
        flexibility = system.flexibility
        self._flexible = None
        if flexibility is not None:
            # (name in flexible_modes, q index, v index, factor to the model's coordinate): s = a delta, phi = N theta_m
            entries = [(m.name, m.q, m.v, m.scale) for m in flexibility.modal] + \
                [(j.joint.name + "/motor", j.rotor_q, j.rotor_v, j.joint.gear_ratio) for j in flexibility.joints]
            self._flexible = (tuple(e[0] for e in entries), np.array([e[1] for e in entries], dtype=int),
                              np.array([e[2] for e in entries], dtype=int), np.array([e[3] for e in entries]))
        self._stamps: dict[str, float] = {}
        self._samples: dict[str, object] = {}     # part -> the message its values come from (its stamp: sample_time)
        self._held: dict[str, tuple] = {}
        self._ready = False

    def holder(self, part: str, node, field: str):
        """A subscription callback holding each message of `part` ("joints" or a floating subtree's name)
        with its arrival time node.now(); `field` names the topic in errors."""
        def hold(msg) -> None:
            self._held[part] = (msg, node.now(), field)
        return hold

    def update(self) -> list[str]:
        """Parse the held messages into q and v; returns the errors (a rejected part keeps its last value)."""
        errors = []
        held, self._held = self._held, {}
        for part, (msg, now, field) in held.items():
            try:
                if part == "joints":
                    self.take_joint_state(msg, now, field)
                elif part == "flexible":
                    self.take_flexible_modes(msg, now, field)
                else:
                    self.take_odometry(part, msg, now, field)
            except CommandError as exc:
                errors.append(str(exc))
                continue
            self._samples[part] = msg           # the stamp is read only when asked (sample_time): not every node does
        if held and self._flexible is not None:
            self.system.coordinates.project(self.q, self.v)
        return errors

    @property
    def ready(self) -> bool:
        if not self._ready:                   # once every part has arrived it stays so
            self._ready = "joints" in self._stamps and all(name in self._stamps for name in self._bases) and \
                (self._flexible is None or "flexible" in self._stamps)
        return self._ready

    @property
    def sample_time(self) -> float | None:
        """The header stamp (s) every part of q, v comes from, when they all share it: one instant of the
        publisher's (the dynamics node stamps a tick's messages alike). None when parts come from different instants
        (under ROS 2 a control period can fall between two parts' arrivals) or before every part arrived."""
        if not self.ready:
            return None
        stamps = {seconds(msg.header.stamp) for msg in self._samples.values()}
        return stamps.pop() if len(stamps) == 1 else None

    def age(self, now: float) -> float:
        """Seconds since the oldest part was received (inf before all parts arrived)."""
        if not self.ready:
            return float("inf")
        return now - min(self._stamps.values())

    def take_joint_state(self, msg, now: float, field: str = "joint_states") -> None:
        position, velocity = read_joint_state(msg, self.joints, field)
        q = self.q
        q[self._revolute_q] = position[self._revolute_rows]
        if self._continuous:                  # a few wheels: plain floats beat numpy's per-call cost
            angles = position.tolist()
            for row, cos_index in self._continuous:
                angle = angles[row]
                q[cos_index] = math.cos(angle)
                q[cos_index + 1] = math.sin(angle)
        self.v[self._v_index] = velocity
        self._stamps["joints"] = now

    def take_flexible_modes(self, msg, now: float, field: str = "flexible_modes") -> None:
        """Modal coordinates (delta) and motor angles (theta_m) with their rates, into the model's s and phi."""
        if self._flexible is None:
            raise CommandError(field, "this model has no flexible links or elastic joints")
        names, q_index, v_index, factor = self._flexible
        position, velocity = read_joint_state(msg, names, field)
        self.q[q_index] = factor * position
        self.v[v_index] = factor * velocity
        self._stamps["flexible"] = now

    def take_odometry(self, subtree_name: str, msg, now: float, field: str) -> None:
        slot = self._bases.get(subtree_name)
        if slot is None:
            raise CommandError(field, f"no floating subtree {subtree_name!r}")
        slot.write_values(self.q, self.v, read_odometry_values(msg, self.world_frame, slot.base_link, field))
        self._stamps[subtree_name] = now


class BaseSlot:
    """Where one floating base's pose and twist go in q and v."""

    def __init__(self, system: SystemModel, subtree):
        config = subtree.config
        self.base_link = subtree.base_link
        self.kind = config.base_joint
        self.qs = system.q_slice(config.root_joint_name)
        self.vs = system.v_slice(config.root_joint_name)
        self.mount = None
        if any(config.mount_xyz) or any(config.mount_rpy):
            self.mount = pin.SE3(mount_rotation(config.mount_rpy), np.asarray(config.mount_xyz, float))
        # an unmounted free flyer's q and v entries are the message's pose and twist as they are
        self._direct = self.kind == "free_flyer" and self.mount is None

    def write_values(self, q: np.ndarray, v: np.ndarray, values: list[float]) -> None:
        """write() from read_odometry_values' [position, xyzw, linear, angular] (the quaternion normalised)."""
        if self._direct:
            q[self.qs] = values[0:7]
            v[self.vs] = values[7:13]
        else:
            array = np.array(values)
            self.write(q, v, array[0:3], array[3:7], array[7:10], array[10:13])

    def write(self, q: np.ndarray, v: np.ndarray, position, xyzw, linear, angular) -> None:
        """Pose (world) and twist (base frame) into the root joint entries: M_joint = M_mount^-1 M_world."""
        xyzw = xyzw / math.sqrt(xyzw[0] ** 2 + xyzw[1] ** 2 + xyzw[2] ** 2 + xyzw[3] ** 2)
        if self.mount is not None:
            local = self.mount.actInv(pin.SE3(pin.Quaternion(xyzw).matrix(), np.asarray(position, float)))
            position, xyzw = local.translation, pin.Quaternion(local.rotation).coeffs()
        if self.kind == "free_flyer":
            q[self.qs.start:self.qs.start + 3] = position
            q[self.qs.start + 3:self.qs.stop] = xyzw
            v[self.vs.start:self.vs.start + 3] = linear
            v[self.vs.start + 3:self.vs.stop] = angular
        elif self.kind == "spherical":
            q[self.qs] = xyzw
            v[self.vs] = angular
        elif self.kind == "planar":
            x, y, z, w = xyzw              # yaw of the rotation about the table normal z (planar base)
            yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
            q[self.qs] = [position[0], position[1], np.cos(yaw), np.sin(yaw)]
            v[self.vs] = [linear[0], linear[1], angular[2]]
