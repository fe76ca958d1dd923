"""Node configuration (config/nodes.yaml): topics, rates, joint lists and timeouts, validated at start-up.

config/nodes.yaml is the one source of every topic name and node default: a nodes file takes from it every key it
leaves out (with_shipped_defaults), so no default is written in code. Mappings keyed by subtree name (odometry
topics and rates) are taken whole from the file that gives them: a file lists its own subtrees, and an explicit
empty mapping means no floating base (e.g. the bench Sawyer).

Topic names are relative (no leading '/') so launch files can namespace or remap them. Rates are in Hz, times in s.
Overrides (ROS parameters, `--set`, a scenario's `overrides:`) are merged into the YAML mapping before
validation by space_robot_scenario.overrides, so an override is checked exactly like the file.
"""
from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from space_robot_dynamics.config_reader import ConfigReader, load_config_file, load_yaml_file
from space_robot_dynamics.package_share import resolve

from .overrides import apply_overrides

SHIPPED_NODES = "config/nodes.yaml"
# keyed by subtree name: taken whole from the file that gives them, never merged key by key with the shipped ones
WHOLE_MAPPINGS = ("dynamics.topics.odometry", "dynamics.rates.odometry", "controller.topics.odometry",
                  "monitor.topics.odometry", "visualization.topics.odometry", "sensors.topics.odometry",
                  "estimators.topics.odometry", "estimators.topics.truth_odometry")
_TOPIC = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
TIMEOUT_BEHAVIOURS = ("hold_position", "zero_torque")
THROTTLED_SUFFIX = "_throttle"          # topic_tools' `throttle` names its output so
# Intera leaves torque mode when suppress_gravity_compensation is not renewed within 0.2 s (Intera SDK)
INTERA_SUPPRESS_PERIOD = 0.2


def topic(reader: ConfigReader, key: str) -> str:
    """A relative ROS 2 topic name: tokens of [A-Za-z0-9_] not starting with a digit, joined by '/'."""
    name = reader.string(key)
    if not _TOPIC.match(name):
        raise reader.error(key, f"must be a relative topic name like 'base/odom' (no leading '/'), got {name!r}")
    return name


def rate(reader: ConfigReader, key: str) -> float:
    return reader.frequency(key)


@functools.lru_cache(maxsize=1)
def _shipped() -> dict:
    return load_yaml_file(resolve(SHIPPED_NODES)).data


def with_shipped_defaults(data: dict, defaults: dict | None = None, path: str = "") -> dict:
    """A copy of `data` (a nodes file's mapping) with every key it leaves out taken from config/nodes.yaml."""
    merged = copy.deepcopy(_shipped() if defaults is None else defaults)
    for key, value in data.items():
        dotted = f"{path}.{key}" if path else str(key)
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and dotted not in WHOLE_MAPPINGS:
            merged[key] = with_shipped_defaults(value, merged[key], dotted)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _odometry_topics(reader: ConfigReader, key: str = "odometry") -> dict[str, str]:
    """subtree name -> topic; an empty mapping means no floating base (e.g. the bench Sawyer)."""
    sub = reader.sub(key)
    return {name: topic(sub, name) for name in list(sub.data)}


def _odometry_rates(reader: ConfigReader) -> dict[str, float]:
    """subtree name -> Hz; a subtree not listed publishes at the state rate."""
    sub = reader.sub("odometry")
    return {name: rate(sub, name) for name in list(sub.data)}


@dataclass(frozen=True)
class DynamicsNodeConfig:
    world_frame: str
    state_rate: float          # Hz: joint_states
    odometry_rates: dict       # subtree name -> Hz of its odometry (default: state_rate)
    throttled_rate: float      # Hz: the throttled copy of joint_states and of every odometry
    tf_rate: float
    clock_rate: float
    momentum_rate: float
    momentum_balance_rate: float
    orbit_reference_rate: float
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
    momentum_balance: str      # std_msgs/Float64MultiArray (docs/orbit.md sec. 5)
    orbit_reference: str       # nav_msgs/Odometry, in orbit only (docs/orbit.md sec. 6)
    arm_command: str
    wheel_command: str
    diagnostics: str
    # flexible models only (docs/flexibility.md sec. 7)
    flexible_modes_rate: float           # Hz, flexible_modes (sensor_msgs/JointState)
    deformation_marker_rate: float       # Hz, the deformed beams' Marker
    flexible_modes: str
    throttled_flexible_modes: str        # at throttled_rate, for the monitor
    deformation_marker: str
    marker_magnification: float          # deflections drawn this many times their size
    marker_points_per_link: int
    marker_line_width: float             # m
    # models with a grasp or contact surfaces (docs/contact.md sec. 10)
    grasp_wrench_rate: float             # Hz, grasp/wrench (geometry_msgs/WrenchStamped)
    grasp_state_rate: float              # Hz, grasp/state (std_msgs/Float64MultiArray), and at each event
    grasp_wrench: str
    grasp_state: str
    grasp_events: str                    # std_msgs/String, transient-local: one message per contact event
    gripper_command: str                 # std_msgs/Bool from the controller: true close, false open
    base_thrusters_command: str          # geometry_msgs/WrenchStamped, base link frame
    base_thrusters_applied: str          # the same, as applied over the last step (with the throttled state)


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
    flexible_modes: str                  # motor angles and modal coordinates of a flexible model
    gripper_command: str                 # std_msgs/Bool from users: true close, false open
    gripper_output: str                  # std_msgs/Bool to the gripper (the dynamics node)
    grasp_state: str                     # the dynamics node's grasp state: the joined model while held
    cartesian_goal: str                  # geometry_msgs/PoseStamped: the Cartesian approach mode
    force_setpoint: str                  # geometry_msgs/WrenchStamped: the contact-force setpoint
    grasp_wrench: str                    # the measured grasp wrench (force_motion mode's force feedback)
    base_thrusters_command: str          # force_motion mode's thruster wrench, base link frame
    force_estimates: str                 # the adaptive force_motion mode's estimates and V


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
    flexible_modes: str
    grasp_state: str                     # the monitored set (robot, or robot + target) follows the grasp
    base_thrusters_applied: str = "base_thrusters/applied"   # a known external wrench (models with thrusters)


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
class SensorsNodeConfig:
    """The sensors node (space_robot_nodes.sensors_core): the truth it reads, the topics it reports on."""

    world_frame: str
    release_rate: float             # Hz: how often measurements held for their latency are looked at
    diagnostics_rate: float
    joint_states: str
    odometry: dict                  # subtree -> topic
    grasp_wrench: str
    imu: str
    star_tracker: str
    joint_encoders: str
    wheel_tachometers: str
    wrist_force_torque: str
    target_pose: str
    tf_static: str
    diagnostics: str
    field_of_view: str = "visualization/pose_sensor_field_of_view"   # the pose sensor's cone (Marker, latched)
    field_of_view_length: float = 2.5       # m: how far the cone is drawn (the sensor's max_range may be 20 m)


@dataclass(frozen=True)
class EstimatorsNodeConfig:
    """The estimators node (space_robot_nodes.estimators_core): the measurements it reads, the estimates it
    publishes, the truth it compares them with (for NEES in diagnostics)."""

    world_frame: str
    diagnostics_rate: float
    imu: str
    star_tracker: str
    joint_encoders: str
    wheel_tachometers: str
    target_pose: str
    truth_odometry: dict            # subtree -> topic (the dynamics node's exact state)
    grasp_state: str                # the gripper's latch: the held target follows the arm (held_target.py)
    joint_states: str               # the estimated joint state
    odometry: dict                  # subtree -> topic of its estimated odometry
    diagnostics: str


@dataclass(frozen=True)
class NodesConfig:
    dynamics: DynamicsNodeConfig
    controller: ControllerNodeConfig
    monitor: MonitorNodeConfig
    sawyer_adapter: SawyerAdapterConfig
    visualization: VisualizationNodeConfig
    source: str | None
    sensors: SensorsNodeConfig | None = None
    estimators: EstimatorsNodeConfig | None = None


# the topics read by name alone (config/nodes.yaml gives each, with what goes on it)
_CONTROLLER_TOPICS = ("joint_states", "trajectory", "attitude_setpoint", "arm_command", "wheel_command",
                      "diagnostics", "flexible_modes", "gripper_command", "gripper_output", "grasp_state",
                      "cartesian_goal", "force_setpoint", "grasp_wrench", "base_thrusters_command", "force_estimates")
_VISUALIZATION_TOPICS = ("attitude_setpoint", "trajectory", "diagnostics", "markers", "static_markers",
                         "end_effector_path", "planned_end_effector_path", "goal_pose", "attitude_setpoint_pose",
                         "display_joint_states", "commanded_efforts")


def _state_tolerance(reader: ConfigReader, key: str) -> StateTolerance:
    sub = reader.sub(key)
    tolerance = StateTolerance(position=sub.number("position", minimum=0.0),
                               velocity=sub.number("velocity", minimum=0.0))
    sub.reject_unknown()
    return tolerance


def _deformation_marker(reader: ConfigReader) -> dict:
    """dynamics.deformation_marker: how the deformed beams are drawn (DynamicsNodeConfig's marker_* fields)."""
    fields = dict(marker_magnification=reader.number("magnification", exclusive_minimum=0.0),
                  marker_points_per_link=reader.integer("points_per_link", minimum=2),
                  marker_line_width=reader.number("line_width", exclusive_minimum=0.0))
    reader.reject_unknown()
    return fields


def _trajectory_action(reader: ConfigReader) -> TrajectoryActionConfig:
    """controller.trajectory_action (config/nodes.yaml explains each value)."""
    config = TrajectoryActionConfig(
        name=topic(reader, "name"),
        feedback_rate=rate(reader, "feedback_rate"),
        default_path_tolerance=_state_tolerance(reader, "default_path_tolerance"),
        default_goal_tolerance=_state_tolerance(reader, "default_goal_tolerance"),
        default_goal_time_tolerance=reader.number("default_goal_time_tolerance", exclusive_minimum=0.0),
    )
    reader.reject_unknown()
    return config


def read_nodes_config(reader: ConfigReader) -> NodesConfig:
    """Validate a nodes file's mapping, every key it leaves out taken from config/nodes.yaml."""
    reader = ConfigReader(with_shipped_defaults(reader.data), reader.source, reader.path, reader.directory)
    world = reader.string("world_frame")
    nodes = NodesConfig(_dynamics(reader.sub("dynamics"), world), _controller(reader.sub("controller"), world),
                        _monitor(reader.sub("monitor"), world), _sawyer_adapter(reader.sub("sawyer_adapter")),
                        _visualization(reader.sub("visualization"), world), reader.source,
                        _sensors(reader.sub("sensors"), world), _estimators(reader.sub("estimators"), world))
    reader.reject_unknown()
    return nodes


_SENSOR_TOPICS = ("joint_states", "grasp_wrench", "imu", "star_tracker", "joint_encoders", "wheel_tachometers",
                  "wrist_force_torque", "target_pose", "tf_static", "diagnostics", "field_of_view")


def _sensors(sen: ConfigReader, world: str) -> SensorsNodeConfig:
    topics = sen.sub("topics")
    config = SensorsNodeConfig(world_frame=world, release_rate=rate(sen, "release_rate"),
                               diagnostics_rate=rate(sen, "diagnostics_rate"), odometry=_odometry_topics(topics),
                               field_of_view_length=sen.number("field_of_view_length", exclusive_minimum=0.0),
                               **{name: topic(topics, name) for name in _SENSOR_TOPICS})
    topics.reject_unknown()
    sen.reject_unknown()
    return config


_ESTIMATOR_TOPICS = ("imu", "star_tracker", "joint_encoders", "wheel_tachometers", "target_pose", "grasp_state",
                     "joint_states", "diagnostics")


def _estimators(est: ConfigReader, world: str) -> EstimatorsNodeConfig:
    topics = est.sub("topics")
    config = EstimatorsNodeConfig(world_frame=world, diagnostics_rate=rate(est, "diagnostics_rate"),
                                  odometry=_odometry_topics(topics),
                                  truth_odometry=_odometry_topics(topics, "truth_odometry"),
                                  **{name: topic(topics, name) for name in _ESTIMATOR_TOPICS})
    topics.reject_unknown()
    est.reject_unknown()
    return config


def _dynamics(dyn: ConfigReader, world: str) -> DynamicsNodeConfig:
    rates, topics = dyn.sub("rates"), dyn.sub("topics")
    joint_states, odometry = topic(topics, "joint_states"), _odometry_topics(topics)
    flexible_modes = topic(topics, "flexible_modes")
    config = DynamicsNodeConfig(
        world_frame=world,
        state_rate=rate(rates, "state"), odometry_rates=_odometry_rates(rates),
        throttled_rate=rate(rates, "throttled_state"), tf_rate=rate(rates, "tf"),
        clock_rate=rate(rates, "clock"), momentum_rate=rate(rates, "momentum"),
        momentum_balance_rate=rate(rates, "momentum_balance"), orbit_reference_rate=rate(rates, "orbit_reference"),
        diagnostics_rate=rate(rates, "diagnostics"),
        command_timeout=dyn.number("command_timeout", exclusive_minimum=0.0),
        joint_states=joint_states, odometry=odometry,
        throttled_joint_states=joint_states + THROTTLED_SUFFIX,
        throttled_odometry={name: name_ + THROTTLED_SUFFIX for name, name_ in odometry.items()},
        tf=topic(topics, "tf"), tf_static=topic(topics, "tf_static"), clock=topic(topics, "clock"),
        momentum_linear=topic(topics, "momentum_linear"), momentum_angular=topic(topics, "momentum_angular"),
        momentum_balance=topic(topics, "momentum_balance"), orbit_reference=topic(topics, "orbit_reference"),
        arm_command=topic(topics, "arm_command"), wheel_command=topic(topics, "wheel_command"),
        diagnostics=topic(topics, "diagnostics"),
        flexible_modes_rate=rate(rates, "flexible_modes"),
        deformation_marker_rate=rate(rates, "deformation_marker"),
        flexible_modes=flexible_modes, throttled_flexible_modes=flexible_modes + THROTTLED_SUFFIX,
        deformation_marker=topic(topics, "deformation_marker"),
        **_deformation_marker(dyn.sub("deformation_marker")),
        grasp_wrench_rate=rate(rates, "grasp_wrench"), grasp_state_rate=rate(rates, "grasp_state"),
        grasp_wrench=topic(topics, "grasp_wrench"), grasp_state=topic(topics, "grasp_state"),
        grasp_events=topic(topics, "grasp_events"), gripper_command=topic(topics, "gripper_command"),
        base_thrusters_command=topic(topics, "base_thrusters_command"),
        base_thrusters_applied=topic(topics, "base_thrusters_applied"),
    )
    for sub in (rates, topics, dyn):
        sub.reject_unknown()
    return config


def _controller(ctl: ConfigReader, world: str) -> ControllerNodeConfig:
    topics = ctl.sub("topics")
    config = ControllerNodeConfig(
        world_frame=world,
        diagnostics_rate=rate(ctl, "diagnostics_rate"),
        state_timeout=ctl.number("state_timeout", exclusive_minimum=0.0),
        setpoint_norm_tolerance=ctl.number("setpoint_norm_tolerance", exclusive_minimum=0.0, maximum=0.5),
        trajectory_action=_trajectory_action(ctl.sub("trajectory_action")),
        odometry=_odometry_topics(topics),
        **{name: topic(topics, name) for name in _CONTROLLER_TOPICS},
    )
    topics.reject_unknown()
    ctl.reject_unknown()
    return config


def _monitor(mon: ConfigReader, world: str) -> MonitorNodeConfig:
    topics = mon.sub("topics")
    config = MonitorNodeConfig(
        world_frame=world, rate=rate(mon, "rate"), diagnostics_rate=rate(mon, "diagnostics_rate"),
        state_timeout=mon.number("state_timeout", exclusive_minimum=0.0),
        odometry=_odometry_topics(topics),
        **{name: topic(topics, name) for name in ("joint_states", "diagnostics", "status", "marker",
                                                 "flexible_modes", "grasp_state", "base_thrusters_applied")},
    )
    topics.reject_unknown()
    mon.reject_unknown()
    return config


def _sawyer_adapter(ada: ConfigReader) -> SawyerAdapterConfig:
    topics = ada.sub("topics")
    joints = ada.string_list("joints")
    if not joints:
        raise ada.error("joints", "must name at least one joint")
    adapter = SawyerAdapterConfig(
        joints=tuple(joints), rate=rate(ada, "rate"), diagnostics_rate=rate(ada, "diagnostics_rate"),
        command_timeout=ada.number("command_timeout", exclusive_minimum=0.0),
        timeout_behaviour=ada.string("timeout_behaviour", choices=TIMEOUT_BEHAVIOURS),
        intera_command_timeout=ada.number("intera_command_timeout", exclusive_minimum=0.0),
        intera_timeout_rate=rate(ada, "intera_timeout_rate"),
        suppress_gravity_compensation=ada.boolean("suppress_gravity_compensation"),
        suppress_rate=rate(ada, "suppress_rate"),
        arm_command=topic(topics, "arm_command"),
        joint_command=topic(topics, "joint_command"),
        joint_command_timeout=topic(topics, "joint_command_timeout"),
        suppress_gravity_topic=topic(topics, "suppress_gravity_compensation"),
        diagnostics=topic(topics, "diagnostics"),
    )
    if adapter.suppress_rate <= 1.0 / INTERA_SUPPRESS_PERIOD and adapter.suppress_gravity_compensation:
        raise ada.error("suppress_rate", f"Intera needs suppress_gravity_compensation faster than every "
                        f"{INTERA_SUPPRESS_PERIOD:g} s (> {1.0 / INTERA_SUPPRESS_PERIOD:g} Hz), got "
                        f"{adapter.suppress_rate} Hz")
    if adapter.command_timeout > adapter.intera_command_timeout and adapter.timeout_behaviour == "zero_torque":
        raise ada.error("command_timeout", "must not exceed intera_command_timeout with zero_torque, or Intera "
                        "leaves torque mode before the adapter notices the timeout")
    topics.reject_unknown()
    ada.reject_unknown()
    return adapter


def _visualization(vis: ConfigReader, world: str) -> VisualizationNodeConfig:
    topics = vis.sub("topics")
    scales = vis.sub("momentum_arrow_scale")
    config = VisualizationNodeConfig(
        world_frame=world, rate=rate(vis, "rate"), path_rate=rate(vis, "path_rate"),
        end_effector_frame=vis.string("end_effector_frame"),
        path_duration=vis.number("path_duration", exclusive_minimum=0.0),
        path_spacing=vis.number("path_spacing", minimum=0.0),
        planned_path_samples=vis.integer("planned_path_samples", minimum=2),
        linear_momentum_scale=scales.number("linear", exclusive_minimum=0.0),
        angular_momentum_scale=scales.number("angular", exclusive_minimum=0.0),
        wheel_indicator_offset=vis.number("wheel_indicator_offset", minimum=0.0),
        momentum_text_offset=tuple(vis.vector("momentum_text_offset", 3)),
        diagnostics_text_offset=tuple(vis.vector("diagnostics_text_offset", 3)),
        # absent: the dynamics node's throttled state
        joint_states=topic(topics, "joint_states") if topics.has("joint_states") else None,
        odometry=_odometry_topics(topics) if topics.has("odometry") else None,
        **{name: topic(topics, name) for name in _VISUALIZATION_TOPICS},
    )
    for sub in (topics, scales, vis):
        sub.reject_unknown()
    return config


def load_nodes_config(path: str | Path, overrides: dict[str, object] | None = None) -> NodesConfig:
    reader = load_config_file(path)
    if overrides:
        reader = ConfigReader(apply_overrides(reader.data, overrides, reader.source), reader.source,
                              directory=reader.directory)
    return read_nodes_config(reader)
