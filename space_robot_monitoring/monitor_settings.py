"""Settings of the holonomy monitor: the `holonomy_monitor` section of config/monitor.yaml, validated at load.

Every threshold is relative to a scale the monitor computes from the model (see holonomy_monitor.py):
- momentum: fraction of the momentum capacity, the momentum the robot's joints generate at their reference
  speeds (URDF velocity limits by default);
- contact: fraction of the end-effector speed capacity (same joint speeds through J*);
- ranks: fraction of the size of the terms whose cancellation makes a singular value zero;
- generalized Jacobian: inverse condition number sigma_min / sigma_max of J* made dimensionless with the
  length scale L (a dynamic singularity is a loss of rank, whatever the overall size of J*).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from space_robot_dynamics.config_reader import ConfigReader, load_config_file
from space_robot_dynamics.errors import ConfigError

from .yh_criterion import METHODS

SECTION = "holonomy_monitor"
JOINT_SETS = ("arm", "robot")


@dataclass(frozen=True)
class TargetSettings:
    subtree: str
    grapple_frame: str
    attached: bool = False      # contact state before the first update(..., attached=...)


@dataclass(frozen=True)
class MonitorSettings:
    """See config/monitor.yaml for the meaning and the reasons behind each default."""

    robot_subtree: str
    end_effector_frame: str
    target: TargetSettings | None = None
    model: str | None = None                 # model config path (used by HolonomyMonitor.from_yaml)
    length_scale: float | None = None        # m; None = auto (base centroid to end effector at neutral)
    rank_rtol: float = 1e-8
    thesis_yh_method: str = "closed_form"
    reference_joint_speed: float | None = None   # rad/s (m/s prismatic); None = URDF velocity limits
    momentum_warn: float = 1e-3
    momentum_error: float = 1e-2
    momentum_jump: float = 1e-3
    contact_warn: float = 1e-3
    contact_error: float = 1e-2
    jacobian_joints: str = "arm"
    inverse_condition_warn: float = 1e-3
    inverse_condition_error: float = 1e-4
    linear_residual_error: float = 1e-6
    source: str | None = None


def read_monitor_settings(reader: ConfigReader) -> MonitorSettings:
    """Parse the holonomy_monitor mapping (unknown keys are rejected)."""
    target = None
    if reader.has("target"):
        t = reader.sub("target")
        target = TargetSettings(t.string("subtree"), t.string("grapple_frame"), t.boolean("attached", False))
        t.reject_unknown()
    length = reader.raw("length_scale", "auto")
    if length != "auto":
        length = reader.number("length_scale", exclusive_minimum=0.0)
    momentum = reader.sub("momentum", {})
    ref_speed = momentum.raw("reference_joint_speed", "urdf")
    if ref_speed != "urdf":
        ref_speed = momentum.number("reference_joint_speed", exclusive_minimum=0.0)
    contact = reader.sub("contact", {})
    jac = reader.sub("generalized_jacobian", {})
    settings = MonitorSettings(
        robot_subtree=reader.string("robot_subtree"),
        end_effector_frame=reader.string("end_effector_frame"),
        target=target,
        model=reader.string("model") if reader.has("model") else None,
        length_scale=None if length == "auto" else float(length),
        rank_rtol=reader.number("rank_rtol", 1e-8, exclusive_minimum=0.0, maximum=1e-2),
        thesis_yh_method=reader.string("thesis_yh_method", "closed_form", choices=METHODS),
        reference_joint_speed=None if ref_speed == "urdf" else float(ref_speed),
        momentum_warn=momentum.number("warn_fraction", 1e-3, exclusive_minimum=0.0),
        momentum_error=momentum.number("error_fraction", 1e-2, exclusive_minimum=0.0),
        momentum_jump=momentum.number("jump_fraction", 1e-3, exclusive_minimum=0.0),
        contact_warn=contact.number("warn_fraction", 1e-3, exclusive_minimum=0.0),
        contact_error=contact.number("error_fraction", 1e-2, exclusive_minimum=0.0),
        jacobian_joints=jac.string("joints", "arm", choices=JOINT_SETS),
        inverse_condition_warn=jac.number("warn_inverse_condition", 1e-3, exclusive_minimum=0.0, maximum=1.0),
        inverse_condition_error=jac.number("error_inverse_condition", 1e-4, exclusive_minimum=0.0, maximum=1.0),
        linear_residual_error=reader.number("linear_residual_error", 1e-6, exclusive_minimum=0.0),
        source=reader.source,
    )
    for section, key_warn, key_error, warn, error in (
            (momentum, "warn_fraction", "error_fraction", settings.momentum_warn, settings.momentum_error),
            (contact, "warn_fraction", "error_fraction", settings.contact_warn, settings.contact_error)):
        if warn >= error:
            raise section.error(key_warn, f"must be below {key_error} ({error}), got {warn}")
    if settings.inverse_condition_error >= settings.inverse_condition_warn:
        raise jac.error("error_inverse_condition", f"must be below warn_inverse_condition "
                        f"({settings.inverse_condition_warn}), got {settings.inverse_condition_error}")
    for section in (momentum, contact, jac):
        section.reject_unknown()
    reader.reject_unknown()
    return settings


def load_monitor_settings(path: str | Path) -> MonitorSettings:
    """Read the holonomy_monitor section of a YAML file (other top-level sections are left to their readers)."""
    root = load_config_file(path)
    if not root.has(SECTION):
        raise ConfigError(SECTION, "is required", root.source)
    return read_monitor_settings(root.sub(SECTION))
