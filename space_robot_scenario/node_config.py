"""Node configuration (config/nodes.yaml): topics, rates, joint lists and timeouts, validated at start-up.

Topic names are relative (no leading '/') so launch files can namespace or remap them. Rates are in Hz.
Overrides (ROS parameters, `--set`, a scenario's `overrides:`) are merged into the YAML mapping before
validation by space_robot_scenario.overrides, so an override is checked exactly like the file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from space_robot_dynamics.config_reader import ConfigReader, load_config_file

from .overrides import apply_overrides

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
THROTTLED_SUFFIX = "_throttle"          # topic_tools' `throttle` names its output so
DEFAULT_THROTTLED_ODOMETRY = {name: topic_name + THROTTLED_SUFFIX for name, topic_name in DEFAULT_ODOMETRY.items()}


@dataclass(frozen=True)
class DynamicsNodeConfig:
    world_frame: str
    state_rate: float          # Hz: joint_states
    odometry_rates: dict       # subtree name -> Hz of its odometry (default: state_rate)
    throttled_rate: float      # Hz: the throttled copy of joint_states and of every odometry
    tf_rate: float
    clock_rate: float
    momentum_rate: float
    diagnostics_rate: float
    command_timeout: float     # s
    joint_states: str
    odometry: dict             # subtree name -> topic
    throttled_joint_states: str     # joint_states + THROTTLED_SUFFIX
    throttled_odometry: dict        # subtree name -> its odometry topic + THROTTLED_SUFFIX
    tf: str
    tf_static: str             # the world -> base transforms of fixed (mounted) bases, latched
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
    throttled_flexible_modes: str = "flexible_modes" + THROTTLED_SUFFIX     # at throttled_rate, for the monitor
    deformation_marker: str = "flexible_links/marker"
    marker_magnification: float = 100.0      # deflections drawn this many times their size
    marker_points_per_link: int = 16
    marker_line_width: float = 0.01          # m
    # models with a grasp or contact surfaces (docs/contact.md sec. 10)
    grasp_wrench_rate: float = 100.0          # Hz, grasp/wrench (geometry_msgs/WrenchStamped)
    grasp_state_rate: float = 50.0            # Hz, grasp/state (std_msgs/Float64MultiArray), and at each event
    grasp_wrench: str = "grasp/wrench"
    grasp_state: str = "grasp/state"
    grasp_events: str = "grasp/events"        # std_msgs/String, transient-local: one message per contact event
    gripper_command: str = "gripper/command"  # std_msgs/Bool from the controller: true close, false open
    base_thrusters_command: str = "base_thrusters/command"   # geometry_msgs/WrenchStamped, base link frame


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
    gripper_command: str = "gripper_controller/command"   # std_msgs/Bool from users: true close, false open
    gripper_output: str = "gripper/command"    # std_msgs/Bool to the gripper (the dynamics node)
    grasp_state: str = "grasp/state"           # the dynamics node's grasp state: the joined model while held
    cartesian_goal: str = "cartesian_controller/goal"      # geometry_msgs/PoseStamped: the Cartesian approach mode
    force_setpoint: str = "force_controller/setpoint"      # geometry_msgs/WrenchStamped: the contact-force setpoint
    grasp_wrench: str = "grasp/wrench"         # the measured grasp wrench (force_motion mode's force feedback)
    base_thrusters_command: str = "base_thrusters/command"   # force_motion mode's thruster wrench, base link frame
    force_estimates: str = "force_controller/estimates"      # the adaptive force_motion mode's estimates and V


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
    grasp_state: str = "grasp/state"          # the monitored set (robot, or robot + target) follows the grasp


@dataclass(frozen=True)
class VisualizationNodeConfig:
    """What the visualization node draws for RViz (space_robot_nodes.visualization_core), at display rates."""

    world_frame: str
    rate: float                     # Hz: markers and poses
    path_rate: float                # Hz: the end-effector path
    end_effector_frame: str         # "" : no end-effector displays
    path_duration: float            # s of past end-effector path kept
    path_spacing: float             # m between two points of the path
    planned_path_samples: int
    linear_momentum_scale: float    # m of arrow per N s
    angular_momentum_scale: float   # m of arrow per N m s
    wheel_indicator_offset: float   # m along a wheel's spin axis from its frame to its disc
    momentum_text_offset: tuple     # m, world axes, from the system's centre of mass: the momentum figures
    diagnostics_text_offset: tuple  # m, in the bus's (or a fixed base's) frame: every node's diagnostic level
    joint_states: str | None        # None: the dynamics node's throttled joint state
    odometry: dict | None           # subtree -> topic; None: the dynamics node's throttled odometry
    attitude_setpoint: str
    trajectory: str
    diagnostics: str
    markers: str
    static_markers: str             # latched: what moves only with its frame (the wheels' discs)
    end_effector_path: str
    planned_end_effector_path: str
    goal_pose: str
    attitude_setpoint_pose: str
    display_joint_states: str       # the joint state (efforts) at the display rate, for RViz's Effort display
    commanded_efforts: str          # the arm's commanded torques as a JointState's efforts, for the same


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
    visualization: VisualizationNodeConfig | None = None
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
    joint_states = topic(topics, "joint_states", "joint_states")
    odometry = _odometry_topics(topics, DEFAULT_ODOMETRY)
    dynamics = DynamicsNodeConfig(
        world_frame=world,
        state_rate=rate(rates, "state", 1000.0), odometry_rates=_odometry_rates(rates, rate(rates, "state", 1000.0)),
        throttled_rate=rate(rates, "throttled_state", 50.0), tf_rate=rate(rates, "tf", 100.0),
        clock_rate=rate(rates, "clock", 100.0), momentum_rate=rate(rates, "momentum", 100.0),
        diagnostics_rate=rate(rates, "diagnostics", 10.0),
        command_timeout=dyn.number("command_timeout", 0.05, exclusive_minimum=0.0),
        joint_states=joint_states, odometry=odometry,
        throttled_joint_states=joint_states + THROTTLED_SUFFIX,
        throttled_odometry={name: name_ + THROTTLED_SUFFIX for name, name_ in odometry.items()},
        tf=topic(topics, "tf", "tf"), tf_static=topic(topics, "tf_static", "tf_static"),
        clock=topic(topics, "clock", "clock"),
        momentum_linear=topic(topics, "momentum_linear", "momentum/linear"),
        momentum_angular=topic(topics, "momentum_angular", "momentum/angular"),
        arm_command=topic(topics, "arm_command", "arm_effort_controller/commands"),
        wheel_command=topic(topics, "wheel_command", "reaction_wheel_effort_controller/commands"),
        diagnostics=topic(topics, "diagnostics", "diagnostics"),
        flexible_modes_rate=rate(rates, "flexible_modes", rate(rates, "state", 1000.0)),
        deformation_marker_rate=rate(rates, "deformation_marker", 25.0),
        flexible_modes=topic(topics, "flexible_modes", "flexible_modes"),
        throttled_flexible_modes=topic(topics, "flexible_modes", "flexible_modes") + THROTTLED_SUFFIX,
        deformation_marker=topic(topics, "deformation_marker", "flexible_links/marker"),
        **_deformation_marker(dyn.sub("deformation_marker", {})),
        grasp_wrench_rate=rate(rates, "grasp_wrench", 100.0), grasp_state_rate=rate(rates, "grasp_state", 50.0),
        grasp_wrench=topic(topics, "grasp_wrench", "grasp/wrench"), grasp_state=topic(topics, "grasp_state",
                                                                                      "grasp/state"),
        grasp_events=topic(topics, "grasp_events", "grasp/events"),
        gripper_command=topic(topics, "gripper_command", "gripper/command"),
        base_thrusters_command=topic(topics, "base_thrusters_command", "base_thrusters/command"),
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
        gripper_command=topic(topics, "gripper_command", "gripper_controller/command"),
        gripper_output=topic(topics, "gripper_output", "gripper/command"),
        grasp_state=topic(topics, "grasp_state", "grasp/state"),
        cartesian_goal=topic(topics, "cartesian_goal", "cartesian_controller/goal"),
        force_setpoint=topic(topics, "force_setpoint", "force_controller/setpoint"),
        grasp_wrench=topic(topics, "grasp_wrench", "grasp/wrench"),
        base_thrusters_command=topic(topics, "base_thrusters_command", "base_thrusters/command"),
        force_estimates=topic(topics, "force_estimates", "force_controller/estimates"),
    )
    topics.reject_unknown()
    ctl.reject_unknown()

    mon = reader.sub("monitor", {})
    topics = mon.sub("topics", {})
    monitor = MonitorNodeConfig(
        world_frame=world, rate=rate(mon, "rate", 50.0), diagnostics_rate=rate(mon, "diagnostics_rate", 10.0),
        state_timeout=mon.number("state_timeout", 0.1, exclusive_minimum=0.0),
        joint_states=topic(topics, "joint_states", "joint_states" + THROTTLED_SUFFIX),
        odometry=_odometry_topics(topics, DEFAULT_THROTTLED_ODOMETRY),
        diagnostics=topic(topics, "diagnostics", "diagnostics"),
        status=topic(topics, "status", "holonomy/status"),
        marker=topic(topics, "marker", "holonomy/marker"),
        flexible_modes=topic(topics, "flexible_modes", "flexible_modes" + THROTTLED_SUFFIX),
        grasp_state=topic(topics, "grasp_state", "grasp/state"),
    )
    topics.reject_unknown()
    mon.reject_unknown()

    visualization = _visualization(reader.sub("visualization", {}), world)

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
    return NodesConfig(dynamics, controller, monitor, adapter, visualization, reader.source)


def _visualization(vis: ConfigReader, world: str) -> VisualizationNodeConfig:
    topics = vis.sub("topics", {})
    scales = vis.sub("momentum_arrow_scale", {})
    config = VisualizationNodeConfig(
        world_frame=world, rate=rate(vis, "rate", 10.0), path_rate=rate(vis, "path_rate", 5.0),
        end_effector_frame=vis.string("end_effector_frame", ""),
        path_duration=vis.number("path_duration", 60.0, exclusive_minimum=0.0),
        path_spacing=vis.number("path_spacing", 0.005, minimum=0.0),
        planned_path_samples=vis.integer("planned_path_samples", 100, minimum=2),
        linear_momentum_scale=scales.number("linear", 0.05, exclusive_minimum=0.0),
        angular_momentum_scale=scales.number("angular", 0.2, exclusive_minimum=0.0),
        wheel_indicator_offset=vis.number("wheel_indicator_offset", 0.65, minimum=0.0),
        momentum_text_offset=tuple(vis.vector("momentum_text_offset", 3, [0.0, 0.0, -1.0])),
        diagnostics_text_offset=tuple(vis.vector("diagnostics_text_offset", 3, [0.0, 0.0, -1.5])),
        joint_states=topic(topics, "joint_states", "") if topics.has("joint_states") else None,
        odometry=_odometry_topics(topics, {}) if topics.has("odometry") else None,
        attitude_setpoint=topic(topics, "attitude_setpoint", "attitude_controller/setpoint"),
        trajectory=topic(topics, "trajectory", "arm_controller/joint_trajectory"),
        diagnostics=topic(topics, "diagnostics", "diagnostics"),
        markers=topic(topics, "markers", "visualization/markers"),
        static_markers=topic(topics, "static_markers", "visualization/static_markers"),
        end_effector_path=topic(topics, "end_effector_path", "visualization/end_effector_path"),
        planned_end_effector_path=topic(topics, "planned_end_effector_path",
                                        "visualization/planned_end_effector_path"),
        goal_pose=topic(topics, "goal_pose", "visualization/goal_pose"),
        attitude_setpoint_pose=topic(topics, "attitude_setpoint_pose", "visualization/attitude_setpoint"),
        display_joint_states=topic(topics, "display_joint_states", "visualization/joint_states"),
        commanded_efforts=topic(topics, "commanded_efforts", "visualization/commanded_efforts"),
    )
    for sub in (topics, scales, vis):
        sub.reject_unknown()
    return config


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
