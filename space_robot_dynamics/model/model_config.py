"""Model configuration (config/models/*.yaml), validated at load.

A model is one Pinocchio tree built from one or more URDF subtrees, each with its own base joint:
the servicer and the target are two free-floating subtrees of one model so a loop can close between them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..config_reader import ConfigReader, load_config_file
from .base_thrusters import read_base_thrusters
from .contact_config import read_contact_surfaces, read_grasp
from .flexibility_config import read_elastic_joints, read_flexible_links
from .urdf_source import declared_arguments

BASE_JOINT_TYPES = ("free_flyer", "spherical", "planar", "fixed")


@dataclass(frozen=True)
class SubtreeConfig:
    """One URDF attached to the world by a base joint.

    mount_xyz/mount_rpy: placement of the base joint in the world frame (m, rad; URDF fixed-axis rpy).
    For a free flyer the pose is state, so the mount is normally identity; for a spherical air
    bearing it is the pivot; for a fixed base it is where the root link sits.
    mount_frame: "" (the world) or a frame (link, joint or fixed frame) of a subtree listed earlier, which
    mount_xyz/mount_rpy are then relative to; only for a fixed base: the subtree is rigidly attached to that
    frame and moves with it (e.g. a captured target on the hand), its bodies merged into the frame's body.
    """

    name: str
    urdf: Path
    base_joint: str
    base_link: str
    frame_prefix: str = ""
    xacro_args: dict = field(default_factory=dict)
    mount_xyz: tuple = (0.0, 0.0, 0.0)
    mount_rpy: tuple = (0.0, 0.0, 0.0)
    mount_frame: str = ""

    @property
    def root_joint_name(self) -> str:
        return f"{self.frame_prefix}{self.name}_base_joint"


@dataclass(frozen=True)
class ModelConfig:
    """Everything needed to build the Pinocchio system model.

    gravity: world frame, m/s^2. arm_joints / wheel_joints: the order of the command vectors.
    wheel_max_torque (N m) and wheel_max_speed (rad/s, relative to the bus) apply to every wheel.
    flexible_links / elastic_joints: FlexibleLinkConfig / ElasticJointConfig (flexibility_config.py,
    docs/flexibility.md); empty for a rigid model.
    grasp: the capture mechanism on the hand (contact_config.GraspConfig, docs/contact.md), None without one;
    contact_surfaces: SurfaceConfig per surface the end effector can be kept on.
    base_thrusters: a commanded wrench on a free-floating base (base_thrusters.py), None without one.
    """

    name: str
    subtrees: tuple
    gravity: tuple = (0.0, 0.0, 0.0)
    arm_joints: tuple = ()
    wheel_joints: tuple = ()
    wheel_max_torque: float = float("inf")
    wheel_max_speed: float = float("inf")
    source: str | None = None
    flexible_links: tuple = ()
    elastic_joints: tuple = ()
    grasp: object = None
    contact_surfaces: tuple = ()
    base_thrusters: object = None

    @property
    def flexible(self) -> bool:
        return bool(self.flexible_links or self.elastic_joints)

    def rigid(self) -> ModelConfig:
        """The same model with every link rigid and every joint stiff (its flexibility removed)."""
        return replace(self, flexible_links=(), elastic_joints=())


def read_model_config(reader: ConfigReader) -> ModelConfig:
    """Parse a model mapping (the content of a config/models/*.yaml file)."""
    subtrees = []
    for sub in reader.sub_list("subtrees"):
        mount = sub.sub("mount", {})
        xyz = tuple(mount.vector("xyz", 3, [0.0, 0.0, 0.0]))
        rpy = tuple(mount.vector("rpy", 3, [0.0, 0.0, 0.0]))
        mount_frame = mount.string("frame", "")
        mount.reject_unknown()
        urdf = sub.file_path("urdf")        # next to this file, else in the share
        xacro_args = _xacro_args(sub, urdf)
        subtrees.append(SubtreeConfig(
            name=sub.string("name"),
            urdf=urdf,
            base_joint=sub.string("base_joint", choices=BASE_JOINT_TYPES),
            base_link=sub.string("base_link"),
            frame_prefix=sub.string("frame_prefix", ""),
            xacro_args=dict(xacro_args),
            mount_xyz=xyz,
            mount_rpy=rpy,
            mount_frame=mount_frame,
        ))
        if mount_frame and subtrees[-1].base_joint != "fixed":
            raise mount.error("frame", f"a subtree mounted on a frame ({mount_frame!r}) must have base_joint: "
                                       f"fixed (it is rigidly attached), got {subtrees[-1].base_joint!r}")
        sub.reject_unknown()
    names = [s.name for s in subtrees]
    if len(set(names)) != len(names):
        raise reader.error("subtrees", f"subtree names must be unique, got {names}")
    prefixes = [s.frame_prefix for s in subtrees]
    if len(set(prefixes)) != len(prefixes):
        raise reader.error("subtrees", f"each subtree needs its own frame_prefix, got {prefixes}")
    wheels = reader.sub("reaction_wheels", {})
    config = ModelConfig(
        name=reader.string("name"),
        subtrees=tuple(subtrees),
        gravity=tuple(reader.vector("gravity", 3, [0.0, 0.0, 0.0])),
        arm_joints=tuple(reader.string_list("arm_joints", [])),
        wheel_joints=tuple(wheels.string_list("joints", [])),
        wheel_max_torque=wheels.number("max_torque", float("inf"), exclusive_minimum=0.0)
        if wheels.has("max_torque") else float("inf"),
        wheel_max_speed=wheels.number("max_speed", float("inf"), exclusive_minimum=0.0)
        if wheels.has("max_speed") else float("inf"),
        source=reader.source,
        flexible_links=read_flexible_links(reader),
        elastic_joints=read_elastic_joints(reader),
        grasp=read_grasp(reader),
        contact_surfaces=read_contact_surfaces(reader),
        base_thrusters=read_base_thrusters(reader),
    )
    # the model file's `sensors` section: read and validated where a scenario is loaded (space_robot_sensing, a
    # later layer: building the multibody model does not need it), so only marked as known here
    reader.raw("sensors", None)
    reader.raw("estimators", None)       # read by the scenario (space_robot_estimation.estimators_config)
    wheels.reject_unknown()
    reader.reject_unknown()
    return config


def _xacro_args(sub: ConfigReader, urdf: Path) -> dict:
    """The subtree's xacro arguments: scalars, each declared by the file (a misspelt argument would otherwise
    be ignored by xacro, silently leaving the default in place)."""
    xacro_args = sub.raw("xacro_args", {}) or {}
    if not isinstance(xacro_args, dict):
        raise sub.error("xacro_args", "must be a mapping name -> value")
    if xacro_args and urdf.suffix != ".xacro":
        raise sub.error("xacro_args", f"{urdf.name} is not a xacro file: it takes no arguments")
    declared = declared_arguments(urdf) if xacro_args else set()
    for name, value in xacro_args.items():
        if declared is not None and name not in declared:
            raise sub.error(f"xacro_args.{name}", f"is not an argument of {urdf.name} (its arguments: "
                            f"{', '.join(sorted(declared)) or 'none'})")
        if isinstance(value, (dict, list)) or value is None:
            raise sub.error(f"xacro_args.{name}", f"must be a string, number or boolean, got {value!r}")
    return dict(xacro_args)


def load_model_config(path: str | Path) -> ModelConfig:
    """Read and validate a model file (a relative path not found from the working directory is looked up in
    the package share, e.g. 'config/models/servicer_target.yaml')."""
    return read_model_config(load_config_file(path))


def mount_rotation(rpy) -> np.ndarray:
    """URDF rpy (fixed axes X, then Y, then Z) to a rotation matrix: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    import pinocchio as pin

    return pin.rpy.rpyToMatrix(np.asarray(rpy, dtype=float))
