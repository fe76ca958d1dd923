"""Initial (q, v) from a scenario's `initial_state` section, by subtree and joint name.

initial_state:
  <subtree name>:                 # free_flyer, spherical or planar base (not a fixed one)
    position: [x, y, z]           # m, base-link origin in the world frame (free flyer, planar)
    orientation_rpy: [r, p, y]    # rad, fixed-axis roll-pitch-yaw of the base link in the world frame (or:)
    orientation_xyzw: [x, y, z, w]  # unit quaternion base link -> world
    linear_velocity: [vx, vy, vz]   # m/s, base-link origin, base-link frame (free flyer, planar)
    angular_velocity: [wx, wy, wz]  # rad/s, base-link frame
  joint_positions: {name: rad}
  joint_velocities: {name: rad/s}
  modal_coordinates: {<link>/bending_y_1: m}      # flexible links (docs/flexibility.md eq. 2); default 0
  elastic_joint_deflections: {name: rad}          # lambda = q - theta_m (eq. 12); default the spring's offset

Elastic joints: joint_positions and joint_velocities give the link-side angle q and rate; the motor follows at
theta_m = q - lambda with the rate of q (Flexibility.relax). Modal coordinates start at rest.

The pose is always the base link's in the world frame, also when the model config gives the subtree a
`mount`: Pinocchio's base-joint configuration is relative to the mount, so the joint entries are
M_joint = M_mount^-1 M_world M_base^-1 (M_base: the base link's placement on its joint, the identity for a
URDF root link). Twists in the base-link frame do not depend on the (fixed) mount. A base joint that cannot
take the given pose or twist is an error naming the field, not a silent projection:
- spherical: the base link turns about the pivot the mount places; `position` and `linear_velocity` are not
  state and are rejected;
- planar: the base moves in the mount's x-y plane and turns about its z axis; `position` must lie in that
  plane, the orientation turn about its normal, and the twist have no vz, wx, wy (1e-9 tolerances: round-off
  of the rotations, far below any intended offset);
- fixed: no entry (its pose is the mount).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..config_reader import ConfigReader
from ..model.system_model import SystemModel

_PLANE_TOLERANCE = 1e-9     # m and rad: out-of-plane position, tilt and twist components taken as zero


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
        if reader.raw(subtree.name, None) is None:      # absent or null: the base starts at its defaults
            continue
        sub = reader.sub(subtree.name)
        if subtree.root_joint_id == 0:
            raise reader.error(subtree.name, "this subtree has a fixed base: its pose is the model's mount "
                                             "(subtrees[].mount), not initial state")
        kind = subtree.config.base_joint
        qs, vs = system.q_slice(subtree.config.root_joint_name), system.v_slice(subtree.config.root_joint_name)
        if sub.has("orientation_rpy") and sub.has("orientation_xyzw"):
            raise sub.error("orientation_xyzw", "give orientation_rpy or orientation_xyzw, not both")
        if sub.has("orientation_xyzw"):
            quat = sub.vector("orientation_xyzw", 4)
            norm = np.linalg.norm(quat)
            if abs(norm - 1.0) > 1e-6:
                raise sub.error("orientation_xyzw", f"must be a unit quaternion, norm is {norm}")
            x, y, z, w = quat / norm
            rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
        else:                       # fixed axes x, y, z (URDF rpy): R = Rz(yaw) Ry(pitch) Rx(roll)
            rotation = pin.rpy.rpyToMatrix(sub.vector("orientation_rpy", 3, [0.0, 0.0, 0.0]))
        if kind == "spherical":
            for key in ("position", "linear_velocity"):
                if sub.has(key):
                    raise sub.error(key, "a spherical base does not translate: its pivot is the model's mount "
                                         "(subtrees[].mount.xyz)")
        position = sub.vector("position", 3, [0.0, 0.0, 0.0])
        linear = sub.vector("linear_velocity", 3, [0.0, 0.0, 0.0])
        angular = sub.vector("angular_velocity", 3, [0.0, 0.0, 0.0])
        # world pose of the base link -> pose of the base joint relative to its mount
        mount = system.model.jointPlacements[subtree.root_joint_id]
        base = system.model.frames[subtree.base_frame_id].placement
        joint = mount.actInv(pin.SE3(rotation, position)) * base.inverse()
        if kind == "free_flyer":
            q[qs] = np.concatenate([joint.translation, pin.Quaternion(joint.rotation).coeffs()])
            v[vs] = np.concatenate([linear, angular])
        elif kind == "spherical":
            q[qs] = pin.Quaternion(joint.rotation).coeffs()
            v[vs] = angular
        elif kind == "planar":
            _check_planar(sub, joint, linear, angular)
            yaw = np.arctan2(joint.rotation[1, 0], joint.rotation[0, 0])
            q[qs] = [joint.translation[0], joint.translation[1], np.cos(yaw), np.sin(yaw)]
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
    flexibility = system.flexibility
    if flexibility is not None:
        _flexible_state(reader, system, q, v)
    known = {s.name for s in system.subtrees} | {"joint_positions", "joint_velocities"}
    if flexibility is not None:
        known |= {"modal_coordinates", "elastic_joint_deflections"}
    for key in reader.data:
        if key not in known:
            raise reader.error(key, "unknown key (expected a subtree name, joint_positions, joint_velocities"
                                    + (", modal_coordinates or elastic_joint_deflections)" if flexibility is not None
                                       else ")"))
        reader.raw(key)
    return q, v


def _flexible_state(reader: ConfigReader, system: SystemModel, q: np.ndarray, v: np.ndarray) -> None:
    """Modal coordinates and elastic-joint deflections by name; rotors and tip chains completed (relax)."""
    flexibility = system.flexibility
    generated = flexibility.generated_joints
    for key in ("joint_positions", "joint_velocities"):
        for name in reader.number_map(key, {}):
            if name in generated:
                raise reader.error(f"{key}.{name}", "a joint of the flexible model's own; set modal_coordinates and "
                                                    "elastic_joint_deflections instead")
    modal = {m.name: m for m in flexibility.modal}
    for name, value in reader.number_map("modal_coordinates", {}).items():
        if name not in modal:
            raise reader.error(f"modal_coordinates.{name}", f"unknown modal coordinate (have {sorted(modal)})")
        q[modal[name].q] = modal[name].scale * value
    deflections = reader.number_map("elastic_joint_deflections", {})
    for name in deflections:
        if flexibility.elastic(name) is None:
            raise reader.error(f"elastic_joint_deflections.{name}", "not an elastic joint (have "
                               f"{[j.joint.name for j in flexibility.joints]})")
    flexibility.relax(q, v, deflections)


def initial_state_from(system: SystemModel, mapping: dict) -> tuple[np.ndarray, np.ndarray]:
    """(q0, v0) from an initial_state mapping written in Python (the keys of the module docstring), e.g.
    initial_state_from(system, {"target": {"position": [1.7, 0.0, 0.8]}, "joint_positions": {"right_j1": -1.2}}).
    ConfigError naming the field (under `initial_state`) for bad input."""
    return read_initial_state(ConfigReader(mapping, "<initial_state mapping>", "initial_state"), system)


def _check_planar(sub: ConfigReader, joint: pin.SE3, linear: np.ndarray, angular: np.ndarray) -> None:
    """The pose and twist a planar joint can take: in the mount's x-y plane, turning about its z axis."""
    if abs(joint.translation[2]) > _PLANE_TOLERANCE:
        raise sub.error("position", f"is {joint.translation[2]:.6g} m off the plane of the planar base (the "
                                    "mount's x-y plane; with no mount, world z = 0)")
    tilt = float(np.linalg.norm(joint.rotation[:2, 2]))
    if tilt > _PLANE_TOLERANCE:
        field = "orientation_xyzw" if sub.has("orientation_xyzw") else "orientation_rpy"
        raise sub.error(field, f"tilts the planar base by {np.arcsin(min(tilt, 1.0)):.6g} rad out of its plane "
                               "(it turns about the mount's z axis only)")
    if abs(linear[2]) > _PLANE_TOLERANCE:
        raise sub.error("linear_velocity", "a planar base has no velocity along its plane's normal (vz)")
    if np.abs(angular[:2]).max() > _PLANE_TOLERANCE:
        raise sub.error("angular_velocity", "a planar base turns about its plane's normal only (wx, wy are zero)")
