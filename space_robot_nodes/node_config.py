"""Node configuration (config/nodes.yaml): topics, rates, joint lists and timeouts, validated at start-up.

Topic names are relative (no leading '/') so launch files can namespace or remap them. Rates are in Hz.
Overrides (ROS parameters, `--set`, a scenario's `overrides:`) are merged into the YAML mapping before
validation by space_robot_dynamics.config_overrides, so an override is checked exactly like the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from space_robot_dynamics.config_overrides import apply_overrides
from space_robot_dynamics.config_reader import ConfigReader, load_config_file

_TOPIC = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
TIMEOUT_BEHAVIOURS = ("hold_position", "zero_torque")


def topic(reader: ConfigReader, key: str, default: str) -> str:
    """A relative ROS 2 topic name: tokens of [A-Za-z0-9_] not starting with a digit, joined by '/'."""
    name = reader.string(key, default)
    if not _TOPIC.match(name):
        raise reader.error(key, f"must be a relative topic name like 'base/odom' (no leading '/'), got {name!r}")
    return name


def rate(reader: ConfigReader, key: str, default: float) -> float:
    return reader.number(key, default, exclusive_minimum=0.0)


def _odometry_topics(reader: ConfigReader, defaults: dict[str, str]) -> dict[str, str]:
    """subtree name -> topic; an explicit empty mapping means no floating base (e.g. the bench Sawyer)."""
    names = list(reader.sub("odometry").data) if reader.has("odometry") else list(defaults)
    sub = reader.sub("odometry", {})
    return {name: topic(sub, name, defaults.get(name, f"{name}/odom")) for name in names}


def _odometry_rates(reader: ConfigReader, default: float) -> dict[str, float]:
    sub = reader.sub("odometry", {})
    return {name: rate(sub, name, default) for name in sub.data}


DEFAULT_ODOMETRY = {"servicer": "base/odom", "target": "target/odom"}


@dataclass(frozen=True)
class DynamicsNodeConfig:
    world_frame: str
    state_rate: float          # Hz: joint_states
    odometry_rates: dict       # subtree name -> Hz of its odometry (default: state_rate)
    tf_rate: float
    clock_rate: float
    momentum_rate: float
    diagnostics_rate: float
    command_timeout: float     # s
    joint_states: str
    odometry: dict             # subtree name -> topic
    tf: str
    clock: str
    momentum_linear: str
    momentum_angular: str
    arm_command: str
    wheel_command: str
    diagnostics: str
    # flexible models only (docs/flexibility.md sec. 7)
    flexible_modes_rate: float = 1000.0      # Hz, flexible_modes (sensor_msgs/JointState)
    deformation_marker_rate: float = 25.0    # Hz, the deformed beams' Marker
    flexible_modes: str = "flexible_modes"
    deformation_marker: str = "flexible_links/marker"
    marker_magnification: float = 100.0      # deflections drawn this many times their size
    marker_points_per_link: int = 16
    marker_line_width: float = 0.01          # m


@dataclass(frozen=True)
class StateTolerance:
    """A default tolerance on |desired - actual| of every arm joint; 0 means not checked (as the
    joint_trajectory_controller's `constraints` parameters)."""

    position: float            # rad
    velocity: float            # rad/s


@dataclass(frozen=True)
class TrajectoryActionConfig:
    """control_msgs/action/FollowJointTrajectory on the controller node (space_robot_nodes.trajectory_execution)."""

    name: str                  # relative action name
    feedback_rate: float       # Hz, at most the control rate
    default_path_tolerance: StateTolerance      # while the trajectory runs
    default_goal_tolerance: StateTolerance      # from its end time on
    default_goal_time_tolerance: float          # s after the end time to get within the goal tolerance


@dataclass(frozen=True)
class ControllerNodeConfig:
    world_frame: str
    diagnostics_rate: float    # the control rate and modes are in the controller's own config
    state_timeout: float       # s: older state -> no command published (the actuators' timeout takes over)
    setpoint_norm_tolerance: float
    joint_states: str
    odometry: dict
    trajectory: str
    attitude_setpoint: str
    arm_command: str
    wheel_command: str
    diagnostics: str
    trajectory_action: TrajectoryActionConfig
    flexible_modes: str = "flexible_modes"     # motor angles and modal coordinates of a flexible model


@dataclass(frozen=True)
class MonitorNodeConfig:
    world_frame: str
    rate: float                     # monitor cycles and holonomy/status (Hz)
    diagnostics_rate: float         # diagnostics and holonomy/marker (Hz): the worst cycle since the last report
    state_timeout: float
    joint_states: str
    odometry: dict
    diagnostics: str
    status: str
    marker: str
    flexible_modes: str = "flexible_modes"


@dataclass(frozen=True)
class SawyerAdapterConfig:
    joints: tuple
    rate: float
    diagnostics_rate: float
    command_timeout: float          # s without a valid arm command before the adapter reacts
    timeout_behaviour: str          # hold_position: stop publishing (Intera falls back to position mode)
    intera_command_timeout: float   # s, published on joint_command_timeout
    intera_timeout_rate: float      # Hz of that publication
    suppress_gravity_compensation: bool
    suppress_rate: float            # Hz; Intera needs it faster than every 0.2 s
    arm_command: str
    joint_command: str
    joint_command_timeout: str
    suppress_gravity_topic: str
    diagnostics: str


@dataclass(frozen=True)
class NodesConfig:
    dynamics: DynamicsNodeConfig
    controller: ControllerNodeConfig
    monitor: MonitorNodeConfig
    sawyer_adapter: SawyerAdapterConfig
    source: str | None = None


def _state_tolerance(reader: ConfigReader, key: str, position: float, velocity: float) -> StateTolerance:
    sub = reader.sub(key, {})
    tolerance = StateTolerance(position=sub.number("position", position, minimum=0.0),
                               velocity=sub.number("velocity", velocity, minimum=0.0))
    sub.reject_unknown()
    return tolerance


def _deformation_marker(reader: ConfigReader) -> dict:
    """dynamics.deformation_marker: how the deformed beams are drawn (DynamicsNodeConfig's marker_* fields)."""
    fields = dict(marker_magnification=reader.number("magnification", 100.0, exclusive_minimum=0.0),
                  marker_points_per_link=reader.integer("points_per_link", 16, minimum=2),
                  marker_line_width=reader.number("line_width", 0.01, exclusive_minimum=0.0))
    reader.reject_unknown()
    return fields


def _trajectory_action(reader: ConfigReader) -> TrajectoryActionConfig:
    """controller.trajectory_action (defaults: the values config/nodes.yaml gives, and explains)."""
    config = TrajectoryActionConfig(
        name=topic(reader, "name", "arm_controller/follow_joint_trajectory"),
        feedback_rate=rate(reader, "feedback_rate", 20.0),
        default_path_tolerance=_state_tolerance(reader, "default_path_tolerance", 0.1, 0.0),
        default_goal_tolerance=_state_tolerance(reader, "default_goal_tolerance", 0.01, 0.01),
        default_goal_time_tolerance=reader.number("default_goal_time_tolerance", 0.5, exclusive_minimum=0.0),
    )
    reader.reject_unknown()
    return config


def read_nodes_config(reader: ConfigReader) -> NodesConfig:
    world = reader.string("world_frame", "world")
    dyn = reader.sub("dynamics", {})
    rates, topics = dyn.sub("rates", {}), dyn.sub("topics", {})
    dynamics = DynamicsNodeConfig(
        world_frame=world,
        state_rate=rate(rates, "state", 1000.0), odometry_rates=_odometry_rates(rates, rate(rates, "state", 1000.0)),
        tf_rate=rate(rates, "tf", 100.0),
        clock_rate=rate(rates, "clock", 1000.0), momentum_rate=rate(rates, "momentum", 100.0),
        diagnostics_rate=rate(rates, "diagnostics", 10.0),
        command_timeout=dyn.number("command_timeout", 0.05, exclusive_minimum=0.0),
        joint_states=topic(topics, "joint_states", "joint_states"),
        odometry=_odometry_topics(topics, DEFAULT_ODOMETRY),
        tf=topic(topics, "tf", "tf"), clock=topic(topics, "clock", "clock"),
        momentum_linear=topic(topics, "momentum_linear", "momentum/linear"),
        momentum_angular=topic(topics, "momentum_angular", "momentum/angular"),
        arm_command=topic(topics, "arm_command", "arm_effort_controller/commands"),
        wheel_command=topic(topics, "wheel_command", "reaction_wheel_effort_controller/commands"),
        diagnostics=topic(topics, "diagnostics", "diagnostics"),
        flexible_modes_rate=rate(rates, "flexible_modes", rate(rates, "state", 1000.0)),
        deformation_marker_rate=rate(rates, "deformation_marker", 25.0),
        flexible_modes=topic(topics, "flexible_modes", "flexible_modes"),
        deformation_marker=topic(topics, "deformation_marker", "flexible_links/marker"),
        **_deformation_marker(dyn.sub("deformation_marker", {})),
    )
    for sub in (rates, topics, dyn):
        sub.reject_unknown()

    ctl = reader.sub("controller", {})
    topics = ctl.sub("topics", {})
    controller = ControllerNodeConfig(
        world_frame=world,
        diagnostics_rate=rate(ctl, "diagnostics_rate", 10.0),
        state_timeout=ctl.number("state_timeout", 0.05, exclusive_minimum=0.0),
        setpoint_norm_tolerance=ctl.number("setpoint_norm_tolerance", 1e-3, exclusive_minimum=0.0, maximum=0.5),
        joint_states=topic(topics, "joint_states", "joint_states"),
        odometry=_odometry_topics(topics, DEFAULT_ODOMETRY),
        trajectory=topic(topics, "trajectory", "arm_controller/joint_trajectory"),
        attitude_setpoint=topic(topics, "attitude_setpoint", "attitude_controller/setpoint"),
        arm_command=topic(topics, "arm_command", "arm_effort_controller/commands"),
        wheel_command=topic(topics, "wheel_command", "reaction_wheel_effort_controller/commands"),
        diagnostics=topic(topics, "diagnostics", "diagnostics"),
        trajectory_action=_trajectory_action(ctl.sub("trajectory_action", {})),
        flexible_modes=topic(topics, "flexible_modes", "flexible_modes"),
    )
    topics.reject_unknown()
    ctl.reject_unknown()

    mon = reader.sub("monitor", {})
    topics = mon.sub("topics", {})
    monitor = MonitorNodeConfig(
        world_frame=world, rate=rate(mon, "rate", 50.0), diagnostics_rate=rate(mon, "diagnostics_rate", 10.0),
        state_timeout=mon.number("state_timeout", 0.1, exclusive_minimum=0.0),
        joint_states=topic(topics, "joint_states", "joint_states"),
        odometry=_odometry_topics(topics, DEFAULT_ODOMETRY),
        diagnostics=topic(topics, "diagnostics", "diagnostics"),
        status=topic(topics, "status", "holonomy/status"),
        marker=topic(topics, "marker", "holonomy/marker"),
        flexible_modes=topic(topics, "flexible_modes", "flexible_modes"),
    )
    topics.reject_unknown()
    mon.reject_unknown()

    ada = reader.sub("sawyer_adapter", {})
    topics = ada.sub("topics", {})
    joints = ada.string_list("joints", [f"right_j{i}" for i in range(7)])
    if not joints:
        raise ada.error("joints", "must name at least one joint")
    adapter = SawyerAdapterConfig(
        joints=tuple(joints), rate=rate(ada, "rate", 1000.0), diagnostics_rate=rate(ada, "diagnostics_rate", 10.0),
        command_timeout=ada.number("command_timeout", 0.05, exclusive_minimum=0.0),
        timeout_behaviour=ada.string("timeout_behaviour", "hold_position", choices=TIMEOUT_BEHAVIOURS),
        intera_command_timeout=ada.number("intera_command_timeout", 0.05, exclusive_minimum=0.0),
        intera_timeout_rate=rate(ada, "intera_timeout_rate", 10.0),
        suppress_gravity_compensation=ada.boolean("suppress_gravity_compensation", False),
        suppress_rate=rate(ada, "suppress_rate", 10.0),
        arm_command=topic(topics, "arm_command", "arm_effort_controller/commands"),
        joint_command=topic(topics, "joint_command", "robot/limb/right/joint_command"),
        joint_command_timeout=topic(topics, "joint_command_timeout", "robot/limb/right/joint_command_timeout"),
        suppress_gravity_topic=topic(topics, "suppress_gravity_compensation",
                                     "robot/limb/right/suppress_gravity_compensation"),
        diagnostics=topic(topics, "diagnostics", "diagnostics"),
    )
    if adapter.suppress_rate <= 5.0 and adapter.suppress_gravity_compensation:
        raise ada.error("suppress_rate", "Intera needs suppress_gravity_compensation faster than every 0.2 s "
                        f"(> 5 Hz), got {adapter.suppress_rate} Hz")
    if adapter.command_timeout > adapter.intera_command_timeout and adapter.timeout_behaviour == "zero_torque":
        raise ada.error("command_timeout", "must not exceed intera_command_timeout with zero_torque, or Intera "
                        "leaves torque mode before the adapter notices the timeout")
    topics.reject_unknown()
    ada.reject_unknown()
    reader.reject_unknown()
    return NodesConfig(dynamics, controller, monitor, adapter, reader.source)


def flatten(data: dict, prefix: str = "") -> dict[str, object]:
    """Dotted keys of every leaf (the inverse of apply_overrides on an empty mapping)."""
    flat = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def load_nodes_config(path: str | Path, overrides: dict[str, object] | None = None) -> NodesConfig:
    reader = load_config_file(path)
    if overrides:
        reader = ConfigReader(apply_overrides(reader.data, overrides, reader.source), reader.source,
                              directory=reader.directory)
    return read_nodes_config(reader)
