"""Controller configuration (config/controller.yaml), validated at load; errors name the dotted field.

Only control parameters live here (modes, gains, limits, joint lists, rate); topics belong to the node's
configuration. Units: Hz, rad/s (natural frequencies), rad, rad/s, rad/s^2.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader, load_config_file
from space_robot_dynamics.errors import ConfigError

from .cartesian_approach import CartesianApproachSettings, read_cartesian_approach_settings
from .force_motion_control import ForceMotionConfig, read_force_motion_config
from .joint_trajectory import LIMIT_POLICIES
from .station_keeping import StationKeepingConfig, read_station_keeping

# force_motion: while the grasp holds, the hybrid force/motion law (force_motion_control.py) replaces the capture hold;
# station_keeping: the bus thrusters hold the bus at a point (station_keeping.py, docs/orbit.md sec. 8)
MODES = ("joint_tracking", "attitude_hold", "force_motion", "station_keeping")
DEFAULT_MODES = ("joint_tracking", "attitude_hold", "force_motion")    # `modes` absent (as before station keeping)


@dataclass(frozen=True)
class TrajectoryConfig:
    """Trajectory acceptance. velocity_scale: fraction of the URDF velocity limits used; acceleration_limits:
    rad/s^2 per arm joint (URDF has none); position_margin: rad kept inside the URDF position limits;
    start_tolerance: rad, how far a first point at t = 0 may be from the current positions."""

    limit_policy: str = "time_scale"
    velocity_scale: float = 1.0
    acceleration_limits: dict = field(default_factory=dict)
    position_margin: float = 0.0
    start_tolerance: float = 0.05
    allow_partial_joints: bool = False


@dataclass(frozen=True)
class JointTrackingConfig:
    """Computed-torque tracking: per-joint error dynamics e'' + 2 zeta wn e' + wn^2 e = 0."""

    natural_frequency: float
    damping_ratio: float
    trajectory: TrajectoryConfig


@dataclass(frozen=True)
class AttitudeHoldConfig:
    """Reaction-wheel attitude PD: natural frequency wn (rad/s) and damping ratio of the small-angle loop,
    feed-forward of the predicted bus acceleration on/off, setpoint (x, y, z, w) or None (hold the attitude
    found at the first update)."""

    natural_frequency: float
    damping_ratio: float
    feedforward: bool = True
    setpoint_xyzw: tuple | None = None


@dataclass(frozen=True)
class VibrationSuppressionConfig:
    """Flexible models only: modal-rate feedback through the joint torques (vibration_suppression.py), asking for
    damping ratio `damping_ratio` on every elastic coordinate; off unless enabled."""

    enabled: bool = False
    damping_ratio: float = 0.02


@dataclass(frozen=True)
class CaptureConfig:
    """After a grasp (docs/contact.md sec. 8): the grasp wrench (N, N m) the arm's commands are scaled to stay
    below, predicted on the joined model (grasp_wrench_limit.py); the bus rate (rad/s) below which the wheels'
    rate damping of the joined stack ends and its attitude is held. The overload watch (CaptureMode): the time (s)
    the arm may stay at an effort limit while holding before the controller asks for the gripper to open (None:
    never), and the factor on the wrench limits beyond which a measured grasp wrench, while at an effort limit,
    asks for it at once (None: never)."""

    force_limit: float = 20.0
    torque_limit: float = 10.0
    detumble_rate: float = 1.0e-3
    overload_release_time: float | None = 0.5
    overload_wrench_factor: float | None = 1.5


@dataclass(frozen=True)
class ControllerConfig:
    """rate: Hz (the node's command rate). modes: subset of MODES. arm_joints / wheel_joints: output order
    (None: the model's order). bus_subtree: the model subtree whose base the wheels turn."""

    rate: float
    modes: tuple
    bus_subtree: str
    arm_joints: tuple | None
    wheel_joints: tuple | None
    joint_tracking: JointTrackingConfig
    attitude_hold: AttitudeHoldConfig
    source: str | None = None
    vibration_suppression: VibrationSuppressionConfig = VibrationSuppressionConfig()
    capture: CaptureConfig = CaptureConfig()
    # the Cartesian approach mode (cartesian_approach.py), entered on a Cartesian goal; None: no such mode
    cartesian_approach: CartesianApproachSettings | None = None
    # the hybrid force/motion mode's settings (read when the section is there; needed with "force_motion" in modes)
    force_motion: ForceMotionConfig | None = None
    station_keeping: StationKeepingConfig = StationKeepingConfig()


def read_controller_config(reader: ConfigReader) -> ControllerConfig:
    """Parse the content of a controller YAML file (see config/controller.yaml)."""
    ctl = reader.sub("controller")
    modes = ctl.string_list("modes", list(DEFAULT_MODES))
    if not modes:
        raise ctl.error("modes", f"must name at least one of {list(MODES)}")
    for i, mode in enumerate(modes):
        if mode not in MODES:
            raise ctl.error(f"modes[{i}]", f"must be one of {list(MODES)}, got {mode!r}")
    rate = ctl.frequency("rate", 1000.0, maximum=10000.0)
    bus = ctl.string("bus_subtree", "servicer")
    arm = tuple(ctl.string_list("arm_joints")) if ctl.has("arm_joints") else None
    wheels = tuple(ctl.string_list("wheel_joints")) if ctl.has("wheel_joints") else None
    ctl.reject_unknown()

    jt = reader.sub("joint_tracking")
    tr = jt.sub("trajectory", {})
    trajectory = TrajectoryConfig(
        limit_policy=tr.string("limit_policy", "time_scale", choices=LIMIT_POLICIES),
        velocity_scale=tr.number("velocity_scale", 1.0, exclusive_minimum=0.0, maximum=1.0),
        acceleration_limits=_positive_map(tr, "acceleration_limits"),
        position_margin=tr.number("position_margin", 0.0, minimum=0.0),
        start_tolerance=tr.number("start_tolerance", 0.05, minimum=0.0),
        allow_partial_joints=tr.boolean("allow_partial_joints", False),
    )
    tr.reject_unknown()
    joint_tracking = JointTrackingConfig(
        natural_frequency=jt.number("natural_frequency", exclusive_minimum=0.0),
        damping_ratio=jt.number("damping_ratio", exclusive_minimum=0.0),
        trajectory=trajectory,
    )
    jt.reject_unknown()

    at = reader.sub("attitude_hold")
    setpoint = at.raw("setpoint_xyzw", None)
    if setpoint is not None:
        quat = at.vector("setpoint_xyzw", 4)
        norm = float(np.linalg.norm(quat))
        if abs(norm - 1.0) > 1e-6:
            raise at.error("setpoint_xyzw", f"must be a unit quaternion (x, y, z, w), norm is {norm:.9g}")
        setpoint = tuple(quat / norm)
    attitude = AttitudeHoldConfig(
        natural_frequency=at.number("natural_frequency", exclusive_minimum=0.0),
        damping_ratio=at.number("damping_ratio", exclusive_minimum=0.0),
        feedforward=at.boolean("feedforward", True),
        setpoint_xyzw=setpoint,
    )
    at.reject_unknown()
    vs = reader.sub("vibration_suppression", {})
    # above ~0.1 the term's least-squares torques fight the computed torque and the loop goes unstable
    # (servicer_flexible: growing at 0.3); 0.1 is the validated ceiling
    vibration = VibrationSuppressionConfig(enabled=vs.boolean("enabled", False),
                                           damping_ratio=vs.number("damping_ratio", 0.02, exclusive_minimum=0.0,
                                                                   maximum=0.1))
    vs.reject_unknown()
    cp = reader.sub("capture", {})
    capture = CaptureConfig(force_limit=cp.number("grasp_force_limit", 20.0, exclusive_minimum=0.0),
                            torque_limit=cp.number("grasp_torque_limit", 10.0, exclusive_minimum=0.0),
                            detumble_rate=cp.number("detumble_rate", 1.0e-3, exclusive_minimum=0.0),
                            overload_release_time=_optional_positive(cp, "overload_release_time", 0.5),
                            overload_wrench_factor=_optional_positive(cp, "overload_wrench_factor", 1.5, 1.0))
    cp.reject_unknown()
    cartesian = read_cartesian_approach_settings(reader.sub("cartesian_approach")) \
        if reader.has("cartesian_approach") else None
    force_motion = read_force_motion_config(reader.sub("force_motion")) \
        if reader.raw("force_motion", None) is not None else None
    if "force_motion" in modes and force_motion is None:
        raise ctl.error("modes", "force_motion needs a `force_motion` section (gains, contact_force)")
    station_keeping = read_station_keeping(reader.sub("station_keeping", {}))
    reader.reject_unknown()
    return ControllerConfig(rate, tuple(modes), bus, arm, wheels, joint_tracking, attitude, reader.source, vibration,
                            capture, cartesian, force_motion, station_keeping)


def load_controller_config(path: str | Path) -> ControllerConfig:
    """Read and validate a controller YAML file (a relative path is looked up in the package share)."""
    return read_controller_config(load_config_file(path))


def _optional_positive(reader: ConfigReader, key: str, default: float, minimum: float = 0.0) -> float | None:
    """A number > minimum, or null (None: the feature is off)."""
    return None if reader.raw(key, default) is None else reader.number(key, default, exclusive_minimum=minimum)


def _positive_map(reader: ConfigReader, key: str) -> dict:
    values = reader.number_map(key, {})
    for name, value in values.items():
        if value <= 0.0:
            raise ConfigError(f"{reader.field(key)}.{name}", f"must be > 0, got {value}", reader.source)
    return values


def check_joint_list(given, model_list, field_name: str, source: str | None) -> tuple:
    """The configured joint order, which must name exactly the model's joints (any order)."""
    if given is None:
        return tuple(model_list)
    if sorted(given) != sorted(model_list):
        raise ConfigError(field_name, f"must name exactly the model's joints {list(model_list)} (any order), "
                                      f"got {list(given)}", source)
    return tuple(given)
