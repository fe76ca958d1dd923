"""Holonomy-monitor node core: HolonomyMonitor (space_robot_monitoring) between ROS messages.

Subscribes joint_states and one nav_msgs/Odometry per floating base (the full state q, v). At its rate
(config/nodes.yaml, 50 Hz) it runs one monitor cycle and publishes
- holonomy/status (std_msgs/Float64MultiArray): the numeric figures for programs, in the fixed order
  STATUS_FIELDS, named in layout.dim[0].label (comma-separated).
At its diagnostics rate (10 Hz, as the other nodes) it reports the most severe cycle since the last report
(the latest among equally severe ones), so a single bad cycle between two reports is not lost:
- diagnostics (diagnostic_msgs/DiagnosticArray): one status "holonomy_monitor: holonomy" with that cycle's
  level (OK/WARN/ERROR), its sentence, every figure as a KeyValue (space_robot_monitoring docs), its time
  (cycle_time_s) and how many cycles ran since the last report;
- holonomy/marker (visualization_msgs/Marker): the level and the momentum finding as a text above the
  robot's base link, green / yellow / red, for RViz.
Without a fresh state (state_timeout) the cycle is skipped and reported at WARN; a state the monitor
rejects is reported at ERROR. The node never stops on bad input.
Capture (docs/contact.md sec. 10): with a target configured, the monitor follows grasp/state (the dynamics node's)
by itself: when the grasp closes it monitors robot + target under the combined momentum and weld constraints
(seed 004 eq. 2.34), and the robot alone again on release, retaking its momentum reference at each switch, so
the grasp impulse is reported as a contact event (its impulse and energy, in the report's
`last_contact_event` and the marker) and not as an external force. A grasp on a monitor without a target is
reported at WARN.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pinocchio as pin

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_monitoring.holonomy_monitor import HolonomyMonitor, MonitorReport
from space_robot_monitoring.monitor_settings import SECTION, read_monitor_settings
from space_robot_monitoring.orbital_view import OrbitalView, with_wrench
from space_robot_scenario.node_config import MonitorNodeConfig

from . import conversions as cv
from .grasp_state_message import read_grasp_state
from .message_types import MessageTypes
from .node_core import MONITOR, NodeCore
from .robot_state import StateAssembler, check_odometry_topics, floating_subtrees

LEVELS = {"OK": cv.OK, "WARN": cv.WARN, "ERROR": cv.ERROR}
MARKER = "visualization_msgs/msg/Marker"
MARKER_COLOURS = {cv.OK: (0.1, 0.8, 0.1), cv.WARN: (0.95, 0.75, 0.0), cv.ERROR: (0.9, 0.1, 0.1),
                  cv.STALE: (0.5, 0.5, 0.5)}   # RGB
MARKER_HEIGHT = 1.2        # m above the base-link origin (clear of the 1 m bus and the arm)
MARKER_TEXT_SIZE = 0.08    # m, height of capital letters: readable at RViz's default distance of ~6 m
MARKER_SPACE_WIDTH = 0.4 * MARKER_TEXT_SIZE   # m; RViz 2 takes scale.x as the space width, ~1.3 m when it is 0
MARKER_LINE_WIDTH = 60     # characters per line of the marker text


# The layout of holonomy/status: (MonitorReport field, entries), in order; vectors expand into one entry per
# component, and the level goes out as its diagnostic_msgs number. Units: N s, N m s (world frame, angular about
# the monitored bodies' centre of mass); fractions of the momentum capacity; ranks.
_STATUS_LAYOUT = (
    ("level", 1), ("attached", 1),
    ("linear_residual_fraction", 1), ("angular_residual_fraction", 1), ("momentum_jump_fraction", 1),
    ("linear_momentum_residual", 3), ("angular_momentum_residual", 3),
    ("constraint_rank", 1), ("constraint_singular_values", 6), ("nonholonomy_rank", 1),
    ("thesis_yh_rank_linear", 1), ("thesis_yh_rank_angular", 1),
    ("jstar_sigma_min", 1), ("jstar_manipulability", 1),
)


def _labels(name: str, size: int) -> list[str]:
    if size == 1:
        return [name]
    return [f"{name}_{axis}" for axis in ("xyz" if size == 3 else range(size))]


# the label of each entry of holonomy/status, in order
STATUS_FIELDS = [label for name, size in _STATUS_LAYOUT for label in _labels(name, size)]
STATUS_LABEL = ",".join(STATUS_FIELDS)


def status_values(report: MonitorReport) -> list[float]:
    """The entries of holonomy/status (STATUS_FIELDS) for one report."""
    values = [float(LEVELS[report.level])]
    for name, size in _STATUS_LAYOUT[1:]:
        value = getattr(report, name)
        if size > 1:
            values.extend(value.tolist())
        else:
            values.append(float(value))
    return values


def marker_text(report: MonitorReport) -> str:
    """A few short lines for RViz: the momentum change with units, the ranks, the end effector's conditioning, and
    for a WARN or ERROR what is wrong (wrapped)."""
    dp, dl = float(np.linalg.norm(report.linear_momentum_residual)), float(np.linalg.norm(
        report.angular_momentum_residual))
    lines = [f"momentum change: {dp:.2g} N s, {dl:.2g} N m s "
             f"({max(report.linear_residual_fraction, report.angular_residual_fraction):.1g} of capacity)",
             f"constraint rank {report.constraint_rank} of 6, nonholonomy rank {report.nonholonomy_rank}",
             f"end effector: J* inverse condition {report.jstar_inverse_condition:.2g}"]
    if report.level != "OK":
        lines.insert(0, textwrap.fill(report.message, MARKER_LINE_WIDTH))
    return "\n".join(lines)


def read_monitor(data: dict, source: str | None, system: SystemModel) -> HolonomyMonitor:
    """HolonomyMonitor from the mapping of a monitor YAML file (its holonomy_monitor section)."""
    root = ConfigReader(data, source)
    if not root.has(SECTION):
        raise ConfigError(SECTION, "is required", source)
    return HolonomyMonitor(system, read_monitor_settings(root.sub(SECTION)))


class MonitorCore(NodeCore):
    name = "holonomy_monitor"

    def __init__(self, types: MessageTypes, monitor: HolonomyMonitor, config: MonitorNodeConfig, orbit=None):
        """`orbit`: the scenario's OrbitConfig (docs/orbit.md sec. 7): the state, relative to LVLH, is then monitored
        in the free-falling frame of the reference orbit, gravity's impulse taken out (orbital_view.py)."""
        super().__init__(types)
        self.monitor = monitor
        self.orbit = None if orbit is None else OrbitalView(monitor.system, orbit)
        self.system = monitor.system
        self.config = config
        check_odometry_topics(self.system, config.odometry, "monitor.topics.odometry")
        # base thrusters: the wrench the dynamics node applied, a known external one (N, N m, the thrusters' base frame)
        self.thrust: np.ndarray | None = None
        thrusters = self.system.base_thrusters
        if thrusters is not None:
            self._thrust_joint = self.system.subtree(thrusters.config.subtree).root_joint_id
            self._thrust_limits = (thrusters.config.max_force, thrusters.config.max_torque)
            self._thrust_frame = thrusters.base_link
            self.add_subscription(config.base_thrusters_applied, cv.WRENCH_STAMPED, self.on_thrust, latest_only=True)
        self.state = StateAssembler(self.system, config.world_frame)
        self.report: MonitorReport | None = None
        self.cycles = 0
        self.errors = 0
        self.last_error = ""
        # state messages are only held on arrival (parsed at the next cycle): see StateAssembler; only the newest
        # matters, so a ROS host keeps one and drops the 1 kHz rest unread
        self.add_subscription(config.joint_states, cv.JOINT_STATE,
                              self.state.holder("joints", self, config.joint_states), latest_only=True)
        for subtree in floating_subtrees(self.system):
            topic = config.odometry[subtree.name]
            self.add_subscription(topic, cv.ODOMETRY, self.state.holder(subtree.name, self, topic), latest_only=True)
        if self.system.flexibility is not None:       # motor angles and modal coordinates (flexibility.md sec. 7)
            self.add_subscription(config.flexible_modes, cv.JOINT_STATE,
                                  self.state.holder("flexible", self, config.flexible_modes), latest_only=True)
        # the grasp (docs/contact.md sec. 10): the monitored set follows it
        self.grasp: dict | None = None          # the last grasp/state entries
        self.last_contact_event = ""
        if self.system.grasp is not None:
            self.add_subscription(config.grasp_state, cv.FLOAT64_MULTI_ARRAY, self.on_grasp_state, latest_only=True)
        self.add_publication(config.diagnostics, cv.DIAGNOSTIC_ARRAY)
        self.add_publication(config.status, cv.FLOAT64_MULTI_ARRAY)
        self.add_publication(config.marker, MARKER)
        self.marker_frame = self.system.subtree(monitor.robot.name).base_link
        self._marker_fields = self._constant_marker_fields()
        self._marker_colours = {level: types.make("std_msgs/msg/ColorRGBA", r=r, g=g, b=b, a=1.0)
                                for level, (r, g, b) in MARKER_COLOURS.items()}
        # the finding to report: (level, message, key-values or a callable giving them, marker headline, time)
        self._pending: tuple | None = None
        self._reported: tuple | None = None
        self._cycles_since_report = 0
        self.add_timer("monitor", 1.0 / config.rate, self.cycle, MONITOR, ("nodes", "monitor.rate"))
        self.add_timer("diagnostics", 1.0 / config.diagnostics_rate, self.publish_diagnostics, MONITOR,
                       ("nodes", "monitor.diagnostics_rate"))

    def on_thrust(self, msg) -> None:
        """base_thrusters/applied: the wrench the dynamics node applied over its last step (published with the
        throttled state, so it goes with the state this node monitors; the command itself runs ahead of it by the
        dynamics' latency under ROS 2)."""
        try:
            force, torque = cv.read_wrench_stamped(msg, self._thrust_frame, self.config.base_thrusters_applied,
                                                 *self._thrust_limits)
        except CommandError as exc:
            self._error(str(exc))
            return
        self.thrust = np.concatenate((force, torque))

    def _thrust_wrench(self, q: np.ndarray, wrenches):
        """`wrenches` with the thrusters' applied wrench added, through the thruster base's origin, world axes."""
        if self.thrust is None or not self.thrust.any():
            return wrenches
        model = self.system.model
        joint = model.joints[self._thrust_joint]
        placement = model.jointPlacements[self._thrust_joint] * pin.XYZQUATToSE3(q[joint.idx_q:joint.idx_q + 7])
        frame = placement * model.frames[model.getFrameId(self._thrust_frame)].placement
        return with_wrench(wrenches, self._thrust_joint, frame.rotation @ self.thrust[:3],
                           frame.rotation @ self.thrust[3:], frame.translation)

    def on_grasp_state(self, msg) -> None:
        try:
            self.grasp = read_grasp_state(msg, self.config.grasp_state)
        except CommandError as exc:
            self._error(str(exc))

    def _attached(self, now: float) -> bool | None:
        """What the grasp says the monitored set is (None: no grasp information, or no target to attach); notes the
        contact event when it changes."""
        if self.grasp is None:
            return None
        holding = self.grasp["holding"] > 0.5
        if holding == self.monitor.attached:
            return holding
        g = self.grasp
        if holding:
            impulse = [g["impulse_force_x"], g["impulse_force_y"], g["impulse_force_z"]]
            couple = [g["impulse_torque_x"], g["impulse_torque_y"], g["impulse_torque_z"]]
            self.last_contact_event = (
                f"grasp closed at t={g['grasp_time_s']:.3f} s: impulse {np.round(impulse, 6).tolist()} N s, "
                f"{np.round(couple, 6).tolist()} N m s on the hand (end-effector frame), "
                f"{g['impact_energy_loss_j']:.3g} J dissipated, total momentum change "
                f"{g['momentum_change_across_grasp']:.2g}; monitoring robot + target from now on")
        else:
            self.last_contact_event = f"grasp opened at t={g['last_event_time_s']:.3f} s; monitoring the robot alone"
        if self.monitor.target is None:
            self._status(now, cv.WARN, f"{self.last_contact_event.split(';')[0]}, but the monitor has no target "
                                       "configured: the grasp shows as an external impulse", [])
            return None
        return holding

    def _error(self, error: str) -> None:
        self.errors += 1
        self.last_error = error

    def _status(self, now: float, level: int, message: str, values, headline: str = "") -> None:
        """Note a cycle's finding; the next report carries the most severe one (the latest among equals).
        `values`: key-values, or a callable giving them (built only if this finding is reported)."""
        self._cycles_since_report += 1
        if self._pending is None or level >= self._pending[0]:
            self._pending = (level, message, values, headline or message, now)

    def publish_diagnostics(self, now: float) -> None:
        """diagnostics and marker with the finding noted since the last report (the last one again if no cycle
        ran since, so the aggregator does not see the monitor go stale)."""
        finding, self._pending = self._pending or self._reported, None
        if finding is None:
            return
        self._reported = finding
        level, message, values, headline, at = finding
        headline = headline() if callable(headline) else textwrap.fill(headline, MARKER_LINE_WIDTH)
        values = (values() if callable(values) else list(values)) + \
            [("cycle_time_s", at), ("cycles_since_last_report", self._cycles_since_report)]
        self._cycles_since_report = 0
        status = cv.diagnostic_status(self.types, level, f"{self.name}: holonomy", message, self.name, values)
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, now, [status]))
        self.publish(self.config.marker, self.marker(now, level, headline))

    def marker(self, now: float, level: int, text: str):
        return self.types.new(MARKER, header=cv.header(self.types, now, self.marker_frame),
                              color=self._marker_colours[level],
                              text=f"holonomy monitor: {cv.LEVEL_NAMES[level]}\n{text}", **self._marker_fields)

    def _constant_marker_fields(self) -> dict:
        """The marker's fields that never change (sub-messages built once; no one mutates published messages)."""
        types = self.types
        marker_class = types.cls(MARKER)
        pose = types.make("geometry_msgs/msg/Pose", position=cv.point(types, (0.0, 0.0, MARKER_HEIGHT)),
                          orientation=cv.quaternion(types, (0.0, 0.0, 0.0, 1.0)))
        return dict(ns=self.name, id=0, type=int(marker_class.TEXT_VIEW_FACING), action=int(marker_class.ADD),
                    pose=pose, scale=cv.vector3(types, (MARKER_SPACE_WIDTH, 0.0, MARKER_TEXT_SIZE)))

    def cycle(self, now: float) -> None:
        rejected = self.state.update()
        for error in rejected:
            self._error(error)
        error_values = [("state_errors", self.errors), ("last_state_error", self.last_error)]
        if rejected:
            self._status(now, cv.ERROR, f"state message rejected: {rejected[-1]}", error_values)
            return
        age = self.state.age(now)
        if age > self.config.state_timeout:
            self._status(now, cv.WARN, "waiting for joint_states and odometry" if not np.isfinite(age) else
                         f"state is {age:.3f} s old (timeout {self.config.state_timeout} s): cycle skipped",
                         error_values)
            return
        try:
            q, v, wrenches = self.state.q, self.state.v, None
            if self.orbit is not None:     # at the state's own instant (parts of different instants: ~ms apart)
                stamp = self.state.sample_time
                q, v, wrenches = self.orbit.in_frame(now - age if stamp is None else stamp, q, v)
            wrenches = self._thrust_wrench(q, wrenches)
            report = self.monitor.update(now, q, v, attached=self._attached(now), body_wrenches=wrenches)
        except CommandError as exc:
            self._error(str(exc))
            self._status(now, cv.ERROR, f"monitor rejected the state: {exc}", error_values)
            return
        self.report = report
        self.cycles += 1
        event = self.last_contact_event
        self._status(now, LEVELS[report.level], report.message,
                     lambda: [(k, v) for k, v in report.key_values() if k not in ("level", "message")]
                     + ([("last_contact_event", event)] if event else []),
                     lambda: marker_text(report) + (f"\n{textwrap.fill(event, MARKER_LINE_WIDTH)}" if event else ""))
        self.publish(self.config.status, cv.float64_multi_array(self.types, status_values(report), STATUS_LABEL))


def build_monitor(types: MessageTypes, system: SystemModel, scenario) -> MonitorCore:
    """The monitor node core of a scenario (its monitor file, after overrides) on `system`."""
    if scenario.monitor_data is None:
        raise ConfigError("monitor", "this scenario has no holonomy monitor (monitor: null)", scenario.source)
    return MonitorCore(types, read_monitor(scenario.monitor_data, scenario.monitor_source, system),
                       scenario.nodes.monitor, scenario.orbit)
