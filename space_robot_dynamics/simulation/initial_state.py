"""Initial (q, v) from a scenario's `initial_state` section, by subtree and joint name.

initial_state:
  <subtree name>:                 # free_flyer, spherical or planar base
    position: [x, y, z]           # m, base-link origin in the world frame (free flyer; planar uses x, y)
    orientation_rpy: [r, p, y]    # rad, fixed-axis roll-pitch-yaw of base link in world (or:)
    orientation_xyzw: [x, y, z, w]
    linear_velocity: [vx, vy, vz]   # m/s, base-link frame
    angular_velocity: [wx, wy, wz]  # rad/s, base-link frame
  joint_positions: {name: rad}
  joint_velocities: {name: rad/s}
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..config_reader import ConfigReader
from ..model.system_model import SystemModel


def _check_within_limits(reader: ConfigReader, system: SystemModel, name: str, value: float) -> None:
    """A start outside the URDF position limits is a configuration error (the controller would refuse to
    plan from it, and the simulation has no joint stops to bring it back)."""
    joint = system.model.joints[system.joint_id(name)]
    if joint.nq != 1:                       # continuous joints (cos, sin) have no limits
        return
    lower, upper = system.model.lowerPositionLimit[joint.idx_q], system.model.upperPositionLimit[joint.idx_q]
    if not lower <= value <= upper:
        raise reader.error(f"joint_positions.{name}", f"{value:.6g} is outside the joint's position limits "
                                                      f"[{lower:.6g}, {upper:.6g}] (URDF)")


def read_initial_state(reader: ConfigReader, system: SystemModel) -> tuple[np.ndarray, np.ndarray]:
    q, v = system.neutral(), np.zeros(system.nv)
    for subtree in system.subtrees:
        if subtree.root_joint_id == 0 or not reader.has(subtree.name):
            continue
        sub = reader.sub(subtree.name)
        kind = subtree.config.base_joint
        qs, vs = system.q_slice(subtree.config.root_joint_name), system.v_slice(subtree.config.root_joint_name)
        if sub.has("orientation_rpy") and sub.has("orientation_xyzw"):
            raise sub.error("orientation_xyzw", "give orientation_rpy or orientation_xyzw, not both")
        if sub.has("orientation_xyzw"):
            quat = sub.vector("orientation_xyzw", 4)
            norm = np.linalg.norm(quat)
            if abs(norm - 1.0) > 1e-6:
                raise sub.error("orientation_xyzw", f"must be a unit quaternion, norm is {norm}")
            rotation = Rotation.from_quat(quat / norm)
        else:
            rotation = Rotation.from_euler("xyz", sub.vector("orientation_rpy", 3, [0.0, 0.0, 0.0]))
        position = sub.vector("position", 3, [0.0, 0.0, 0.0])
        linear = sub.vector("linear_velocity", 3, [0.0, 0.0, 0.0])
        angular = sub.vector("angular_velocity", 3, [0.0, 0.0, 0.0])
        if kind == "free_flyer":
            q[qs] = np.concatenate([position, rotation.as_quat()])
            v[vs] = np.concatenate([linear, angular])
        elif kind == "spherical":
            q[qs] = rotation.as_quat()
            v[vs] = angular
        elif kind == "planar":
            yaw = rotation.as_euler("xyz")[2]
            q[qs] = [position[0], position[1], np.cos(yaw), np.sin(yaw)]
            v[vs] = [linear[0], linear[1], angular[2]]
        sub.reject_unknown()
    for key, target, setter in (("joint_positions", q, system.set_joint_angle),
                                ("joint_velocities", v, None)):
        for name, value in reader.number_map(key, {}).items():
            if not system.model.existJointName(name) or system.model.joints[system.joint_id(name)].nv != 1:
                raise reader.error(f"{key}.{name}", f"unknown one-DOF joint (have {system.actuated_joint_names()})")
            if setter is not None:
                _check_within_limits(reader, system, name, value)
                setter(target, name, value)
            else:
                target[system.v_index(name)] = value
    known = {s.name for s in system.subtrees} | {"joint_positions", "joint_velocities"}
    for key in reader.data:
        if key not in known:
            raise reader.error(key, "unknown key (expected a subtree name or joint_positions/joint_velocities)")
        reader.raw(key)
    return q, v
