"""The Pinocchio model of the whole system and the name -> index maps every other module uses.

Ordering (never index by position; the URDF loader may reorder joints):
- q (size nq): per Pinocchio joint in tree order; a free flyer contributes
  [x, y, z, qx, qy, qz, qw] (position of the base-link origin in the mount frame, m; unit quaternion
  rotating base-link coordinates into mount coordinates; the mount is the world frame unless the model
  config gives the subtree a `mount`), a spherical joint [qx, qy, qz, qw], a planar
  joint [x, y, cos(yaw), sin(yaw)], a continuous joint [cos, sin], a revolute joint its angle.
- v (size nv): a free flyer contributes [v_x, v_y, v_z, w_x, w_y, w_z], linear velocity of the base-link
  origin and angular velocity, both in the base-link frame (Pinocchio LOCAL convention); other joints
  their rate. `SystemModel.q_slice(name)` and `v_slice(name)` give a joint's entries.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..config_reader import ConfigReader
from ..errors import CommandError, ConfigError
from ..package_share import find_in_share
from ..pinocchio_compat import append_model_at_frame, append_model_at_universe, build_model_from_urdf_string
from . import flexible_urdf, urdf_source
from .base_thrusters import resolve_base_thrusters
from .contact_sites import resolve_grasp, resolve_surfaces
from .flexibility import Flexibility
from .model_config import ModelConfig, SubtreeConfig, load_model_config, mount_rotation, read_model_config

_ROOT_JOINTS = {
    "free_flyer": pin.JointModelFreeFlyer,
    "spherical": pin.JointModelSpherical,
    "planar": pin.JointModelPlanar,
}


@dataclass(frozen=True)
class Subtree:
    """One subtree in the built model. root_joint_id is 0 for a fixed base.

    joint_names: its joints (base joint first, if any), frame_names: its frames (links, joints, fixed frames),
    both with the subtree's frame_prefix and in model order.
    """

    config: SubtreeConfig
    root_joint_id: int
    base_frame_id: int
    joint_names: tuple = ()
    frame_names: tuple = ()

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def base_link(self) -> str:
        return self.config.frame_prefix + self.config.base_link

    @property
    def base_joint_type(self) -> str:
        """"free_flyer", "spherical", "planar" or "fixed"."""
        return self.config.base_joint

    @property
    def base_joint(self) -> str | None:
        """Name of the base joint (the key of its entries in q and v: SystemModel.q_slice), None if fixed."""
        return None if self.root_joint_id == 0 else self.config.root_joint_name


class SystemModel:
    """Pinocchio model plus the joint bookkeeping of the servicer, the wheels, the arm and the target."""

    def __init__(self, config: ModelConfig):
        self.config = config
        model = pin.Model()
        subtrees, flexible_links, elastic_joints = [], [], []
        for sub in config.subtrees:
            model, subtree, expanded = _append_subtree(model, sub, config)
            subtrees.append(subtree)
            flexible_links += expanded.flexible_links
            elastic_joints += expanded.elastic_joints
        _check_all_found(config, flexible_links, elastic_joints)
        model.gravity = pin.Motion(np.asarray(config.gravity, float), np.zeros(3))
        self.model = model
        # Flexible links and elastic joints (docs/flexibility.md): None for a rigid model.
        self.flexibility = Flexibility(model, tuple(flexible_links), tuple(elastic_joints)) if config.flexible \
            else None
        # Frame ids are only final once every subtree is appended: resolve them now.
        self.subtrees = tuple(
            Subtree(s.config, s.root_joint_id, _frame_id(model, s.config.frame_prefix + s.config.base_link,
                                                         f"subtrees[{s.config.name}].base_link", config.source),
                    s.joint_names, s.frame_names)
            for s in subtrees)
        self.arm_joints = tuple(config.arm_joints)
        self.wheel_joints = tuple(config.wheel_joints)
        for group, names in (("arm_joints", self.arm_joints), ("reaction_wheels.joints", self.wheel_joints)):
            for name in names:
                if not model.existJointName(name):
                    raise ConfigError(group, f"unknown joint {name!r} (model has: {self.actuated_joint_names()})",
                                      config.source)
                if model.joints[model.getJointId(name)].nv != 1:
                    raise ConfigError(group, f"joint {name!r} is not a one-degree-of-freedom joint", config.source)
        self.arm_v = np.array([self.v_index(n) for n in self.arm_joints], dtype=int)
        self.wheel_v = np.array([self.v_index(n) for n in self.wheel_joints], dtype=int)
        self.arm_effort_limit = model.effortLimit[self.arm_v].copy() if len(self.arm_v) else np.zeros(0)
        self.wheel_max_torque = np.full(len(self.wheel_v), config.wheel_max_torque)
        self.wheel_max_speed = np.full(len(self.wheel_v), config.wheel_max_speed)
        # the capture mechanism and the contact surfaces (docs/contact.md): frames resolved now, errors name the field
        self.grasp = resolve_grasp(model, config.grasp, config.source)
        self.contact_surfaces = resolve_surfaces(model, config.contact_surfaces, config.source)
        # a commanded wrench on a free-floating base (base_thrusters.py), None without thrusters
        self.base_thrusters = resolve_base_thrusters(self, config.base_thrusters, config.source)

    # ---- lookups ----------------------------------------------------------------------------
    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    def joint_id(self, name: str) -> int:
        if not self.model.existJointName(name):
            raise CommandError("joint", f"unknown joint {name!r}")
        return self.model.getJointId(name)

    def q_slice(self, name: str) -> slice:
        joint = self.model.joints[self.joint_id(name)]
        return slice(joint.idx_q, joint.idx_q + joint.nq)

    def v_slice(self, name: str) -> slice:
        joint = self.model.joints[self.joint_id(name)]
        return slice(joint.idx_v, joint.idx_v + joint.nv)

    def v_index(self, name: str) -> int:
        return self.model.joints[self.joint_id(name)].idx_v

    def frame_id(self, name: str) -> int:
        """Pinocchio frame id of a link, joint or fixed frame, by name."""
        if not self.model.existFrame(name):
            raise CommandError("frame", f"no link or frame named {name!r} in the model")
        return self.model.getFrameId(name)

    def subtree(self, name: str) -> Subtree:
        """The subtree named `name` in the model config (e.g. "servicer", "target")."""
        for subtree in self.subtrees:
            if subtree.name == name:
                return subtree
        raise CommandError("subtree", f"unknown subtree {name!r} (have {self.subtree_names()})")

    def subtree_names(self) -> list[str]:
        return [s.name for s in self.subtrees]

    def subtree_of(self, name: str) -> Subtree:
        """The subtree a joint, link or frame belongs to, by its (prefixed) name."""
        for subtree in self.subtrees:
            if name in subtree.joint_names or name in subtree.frame_names:
                return subtree
        raise CommandError("name", f"no joint, link or frame named {name!r} in the model")

    def base_joint(self, subtree: str) -> str:
        """Name of the base joint of a floating subtree: the key of its pose and twist in q and v
        (q_slice(system.base_joint("target")) are the target's [x, y, z, qx, qy, qz, qw])."""
        found = self.subtree(subtree)
        if found.base_joint is None:
            raise CommandError("subtree", f"subtree {subtree!r} has a fixed base: no base joint")
        return found.base_joint

    def actuated_joint_names(self) -> list[str]:
        """Names of the one-DOF joints (everything but the base joints)."""
        return [self.model.names[j] for j in range(1, self.model.njoints) if self.model.joints[j].nv == 1]

    def ordering(self) -> list[tuple[str, slice, slice]]:
        """(joint name, q slice, v slice) for every joint, in q/v order."""
        out = []
        for j in range(1, self.model.njoints):
            joint = self.model.joints[j]
            out.append((self.model.names[j], slice(joint.idx_q, joint.idx_q + joint.nq),
                        slice(joint.idx_v, joint.idx_v + joint.nv)))
        return out

    def joint_angle(self, q: np.ndarray, name: str) -> float:
        """Angle of a one-DOF joint in rad; continuous joints are stored as (cos, sin)."""
        s = self.q_slice(name)
        if s.stop - s.start == 2:
            return float(np.arctan2(q[s.start + 1], q[s.start]))
        return float(q[s.start])

    def set_joint_angle(self, q: np.ndarray, name: str, angle: float) -> None:
        s = self.q_slice(name)
        if s.stop - s.start == 2:
            q[s.start], q[s.start + 1] = np.cos(angle), np.sin(angle)
        else:
            q[s.start] = angle

    def neutral(self) -> np.ndarray:
        """Pinocchio's neutral configuration; with elastic joints, their springs relaxed (rotor angles at
        theta_m = q - lambda_0, docs/flexibility.md eq. 12)."""
        q = pin.neutral(self.model)
        if self.flexibility is not None:
            self.flexibility.relax(q)
        return q

    def set_elastic_joint(self, joint: str, *, motor_inertia: float | None = None, stiffness: float | None = None,
                          damping: float | None = None) -> None:
        """Change an elastic joint's motor inertia I_r (kg m^2, the rotor about its axis, motor side: the model
        file's `motor_inertia`; the inertia reflected to the link is N^2 I_r), stiffness k (N m/rad) and damping b
        (N m s/rad) in place, without reading the URDF again (docs/flexibility.md sec. 4, eqs. 11-12). None keeps
        a value. The values are checked as the model file's are (finite; I_r > 0, k > 0, b >= 0): CommandError
        naming the argument, and nothing changes, otherwise; so is the joint (an elastic joint of this model).

        Everything computed with this model afterwards uses the new values: Pinocchio's algorithms on `model`
        (the rotor body's inertia), the elastic and damping forces, readouts and energy of `flexibility`, and
        `config` (a model built from it, or its rigid counterpart, has them). Build Simulators and controllers
        after the change: a Simulator checks its dt against the stiffest mode, and decides whether to integrate
        the dampers' energy, when it is built; a ControlModel copies the rotor inertia when it is built."""
        flexibility = self.flexibility
        coordinates = None if flexibility is None else flexibility.elastic(joint)
        if coordinates is None:
            have = [] if flexibility is None else [j.joint.name for j in flexibility.joints]
            raise CommandError("joint", f"{joint!r} is not an elastic joint of this model (have {have})")
        changes = {}
        for name, value, unit, positive in (("motor_inertia", motor_inertia, "kg m^2", True),
                                            ("stiffness", stiffness, "N m/rad", True),
                                            ("damping", damping, "N m s/rad", False)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
                    or not math.isfinite(value) or value < 0.0 or (positive and value == 0.0):
                raise CommandError(name, f"must be a finite number {'>' if positive else '>='} 0 ({unit}), "
                                         f"got {value!r}")
            changes[name] = float(value)
        config = replace(coordinates.joint.config, **changes)
        flexibility.update_elastic_joint(self.model, config)
        self.config = replace(self.config, elastic_joints=tuple(
            config if e.joint == joint else e for e in self.config.elastic_joints))

    @property
    def coordinates(self):
        """The CoordinateMap v = T v_r of a model with flexible links (docs/flexibility.md eq. 15), None
        otherwise."""
        return None if self.flexibility is None else self.flexibility.coordinates


def _frame_id(model: pin.Model, name: str, field: str, source: str | None) -> int:
    if not model.existFrame(name):
        raise ConfigError(field, f"no link or frame named {name!r} in the model", source)
    return model.getFrameId(name)


def _append_subtree(model: pin.Model, sub: SubtreeConfig, config: ModelConfig
                    ) -> tuple[pin.Model, Subtree, flexible_urdf.ExpandedUrdf]:
    """Load one URDF with its base joint (expanded with the flexible links and elastic joints it holds,
    flexible_urdf.py) and append it to `model` at its mount (world frame)."""
    field = f"subtrees[{sub.name}]"
    urdf_xml = urdf_source.prefix_names(urdf_source.expand(sub.urdf, sub.xacro_args), sub.frame_prefix)
    root = urdf_source.validate(urdf_xml, str(sub.urdf))
    expanded = _expanded(urdf_xml, root, config)
    urdf_xml = expanded.xml
    link_names = [link.get("name") for link in root.findall("link")]
    if sub.frame_prefix + sub.base_link not in link_names:
        raise ConfigError(f"{field}.base_link", f"no link {sub.frame_prefix + sub.base_link!r} in {sub.urdf}")
    children = {j.find("child").get("link") for j in root.findall("joint")}
    roots = [name for name in link_names if name not in children]
    if roots != [sub.frame_prefix + sub.base_link]:
        raise ConfigError(f"{field}.base_link", f"the URDF root link is {roots}, expected the base link "
                          f"{sub.frame_prefix + sub.base_link!r}")
    root_joint = None if sub.base_joint == "fixed" else _ROOT_JOINTS[sub.base_joint]()
    try:
        part = build_model_from_urdf_string(urdf_xml, root_joint, sub.root_joint_name)
    except (RuntimeError, ValueError) as exc:
        raise ConfigError(f"{field}.urdf", f"Pinocchio could not load {sub.urdf}: {exc}") from exc
    mount = pin.SE3(mount_rotation(sub.mount_rpy), np.asarray(sub.mount_xyz, float))
    for name in part.names[1:]:
        if model.existJointName(name):
            raise ConfigError(f"{field}.frame_prefix", f"joint name {name!r} is already in the model")
    for frame in part.frames[1:]:
        if model.existFrame(frame.name):
            raise ConfigError(f"{field}.frame_prefix", f"frame name {frame.name!r} is already in the model")
    if sub.mount_frame:
        if not model.existFrame(sub.mount_frame):
            raise ConfigError(f"{field}.mount.frame", f"no frame {sub.mount_frame!r} in the subtrees listed before "
                              f"this one (a subtree is mounted on a frame of an earlier subtree)")
        model = append_model_at_frame(model, part, model.getFrameId(sub.mount_frame), mount)
    else:
        model = append_model_at_universe(model, part, mount)
    root_id = 0 if root_joint is None else model.getJointId(sub.root_joint_name)
    if sub.base_joint == "planar":
        _check_planar(part, expanded, config.source)
    return (model, Subtree(sub, root_id, 0, tuple(part.names[1:]), tuple(f.name for f in part.frames[1:])),
            expanded)


def _expanded(urdf_xml: str, root, config: ModelConfig, dynamics: bool = True) -> flexible_urdf.ExpandedUrdf:
    """The subtree's URDF with the flexible links and elastic joints of `config` that it holds."""
    links = {link.get("name") for link in root.findall("link")}
    joints = {joint.get("name") for joint in root.findall("joint")}
    flexible = [f for f in config.flexible_links if f.link in links]
    elastic = [e for e in config.elastic_joints if e.joint in joints]
    if not flexible and not elastic:
        return flexible_urdf.ExpandedUrdf(urdf_xml, (), ())
    return flexible_urdf.expand(urdf_xml, flexible, elastic, config.source, dynamics)


def description_urdf(urdf_xml: str, config: ModelConfig, frame_prefix: str = "") -> str:
    """The robot description of one subtree for robot_state_publisher, from its unprefixed URDF (names without
    `frame_prefix`, which robot_state_publisher adds to the TF frames): with the tip chains of its flexible links,
    so the links beyond them follow the deformation from joint_states (docs/flexibility.md sec. 7); the URDF
    itself when it has no flexible link."""
    import dataclasses
    import xml.etree.ElementTree as ET

    root = ET.fromstring(urdf_xml)
    links = {link.get("name") for link in root.findall("link")}
    def unprefixed(name):
        return name[len(frame_prefix):] if name and name.startswith(frame_prefix) else name

    flexible = [dataclasses.replace(f, link=unprefixed(f.link), tip=unprefixed(f.tip))
                for f in config.flexible_links if f.link.startswith(frame_prefix) and unprefixed(f.link) in links]
    if not flexible:
        return urdf_xml
    return flexible_urdf.expand(urdf_xml, flexible, [], config.source, dynamics=False).xml


def _check_all_found(config: ModelConfig, links: list, joints: list) -> None:
    found_links, found_joints = {f.name for f in links}, {e.name for e in joints}
    for f in config.flexible_links:
        if f.link not in found_links:
            raise ConfigError(f"{f.field}.link", f"no link {f.link!r} in the model (names carry their subtree's "
                                                 "frame_prefix)", config.source)
    for e in config.elastic_joints:
        if e.joint not in found_joints:
            raise ConfigError(f"{e.field}.joint", f"no joint {e.joint!r} in the model (names carry their subtree's "
                                                  "frame_prefix)", config.source)


def _check_planar(part: pin.Model, expanded: flexible_urdf.ExpandedUrdf, source: str | None) -> None:
    """A planar model bends in its plane only: no out-of-plane bending or torsion, and e_x, e_y of each beam in
    the plane (normal: the planar base's z axis) at the neutral configuration."""
    data = part.createData()
    pin.framesForwardKinematics(part, data, pin.neutral(part))
    normal = data.oMi[1].rotation[:, 2]
    for link in expanded.flexible_links:
        for direction in ("bending_z", "torsion"):
            if direction in link.families:
                raise ConfigError(f"{link.field}.{direction}", "this subtree has a planar base: in-plane bending "
                                  "(bending_y) only", source)
        rotation = data.oMf[part.getFrameId(link.name)].rotation @ link.rotation
        if max(abs(rotation[:, 0] @ normal), abs(rotation[:, 1] @ normal)) > 1e-9:
            raise ConfigError(f"{link.field}.bending_y_axis", "this subtree has a planar base: the beam and its "
                              "bending direction must lie in the plane of motion", source)


def build_model(source: str | Path | dict | ModelConfig) -> SystemModel:
    """The SystemModel of a model configuration (config/models/*.yaml explains the keys), given as
    - a mapping: the content of such a file, e.g. written in Python or read with yaml.safe_load;
    - a path to such a file: absolute, relative to the working directory, or relative to the package share
      ("config/models/hubble.yaml");
    - a name of a file in the share's config/models/ ("servicer_target");
    - a ModelConfig.
    URDF paths inside are absolute or relative to the package share. Bad input raises ConfigError naming the
    field (and the file)."""
    if isinstance(source, ModelConfig):
        return SystemModel(source)
    if isinstance(source, dict):
        return SystemModel(read_model_config(ConfigReader(source, source="<model mapping>")))
    if not isinstance(source, (str, Path)):
        raise ConfigError("model", f"expected a mapping, a path or a name, got {type(source).__name__}")
    return SystemModel(load_model_config(find_in_share(source, "config/models", "model")))
