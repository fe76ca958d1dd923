"""Execution of control_msgs/action/FollowJointTrajectory goals on the servicer controller, on plain Python data.

The semantics are those of ros2_controllers' joint_trajectory_controller (JTC; Humble, with the goal tolerances
of its pull requests #716 and #1192), on the controller node's arm joints:

- Acceptance. The goal's trajectory goes through ServicerController.set_trajectory, the validation of the
  arm_controller/joint_trajectory topic (joint names, lengths, finite values, position limits, time scaling).
  Its CommandError rejects the goal with INVALID_JOINTS (-2) when the joint names are at fault (unknown,
  duplicate, missing joints; a tolerance naming an unknown joint), INVALID_GOAL (-1) otherwise; the error
  string names the field. A goal before the controller's first update (no measured state to start from) is
  rejected likewise. A rejected goal changes nothing: an active goal goes on.
- Preemption. An accepted goal, or a trajectory accepted on the topic, ends the active goal: ABORTED with
  INVALID_GOAL and an error string saying what preempted it (JTC reports CANCELED with the same code; ROS 2's
  goal state machine reaches CANCELED only through a cancel request, so the goal is aborted).
- Execution, at every control update while a goal is active (time t, s): desired (q_d, qdot_d) is the
  follower's reference at t, actual (q, qdot) the measured state the controller used, error = desired - actual
  (JTC's sign), per arm joint (rad, rad/s). Before the trajectory's end time T (its last point, after any time
  scaling): an error beyond the path tolerance on any joint aborts with PATH_TOLERANCE_VIOLATED (-4). From T on:
  SUCCESSFUL (0) at the first update where every joint is within its goal tolerance; still outside after
  T + goal_time_tolerance: GOAL_TOLERANCE_VIOLATED (-5). After either abort the controller holds the measured
  position (ServicerController.stop_trajectory), as JTC's set_hold_position.
- Cancel. The controller holds the measured position; the goal ends CANCELED (error_code 0, JTC's).
- Feedback at the first update of a goal, then every 1/feedback_rate s (at most the control rate).

Tolerances (control_msgs/JointTolerance): a joint passes when |error| <= tolerance. In a goal, per joint and
quantity: > 0 sets the tolerance, 0 keeps the default, -1 removes it (not checked); other negative or non-finite
values reject the goal. Acceleration and effort tolerances must be 0 or -1: the controller measures neither,
so it could not honour them (JTC skips them without a word). Defaults: controller.trajectory_action in
config/nodes.yaml, where 0 means not checked. goal_time_tolerance (s): > 0 sets it, 0 keeps the default, -1
waits for the goal tolerance indefinitely.

A stale state stops the control updates (ControllerCore publishes no command then), and with them the
tolerance checks: a goal resumes being checked when the state returns.

Events (TrajectoryFeedback, and TrajectoryResult of an accepted goal) go to the listener given to connect();
submit() returns a rejection directly. The standalone runtime (space-robot-sim) does not serve the action:
control_msgs is not in the rosbags typestore, and its scenarios send their goals on the topic. Under ROS 2,
space_robot_nodes.ros.trajectory_action_server serves it with rclpy's ActionServer on this class.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from space_robot_control.joint_trajectory import joint_column
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.index_views import contiguous_index
from space_robot_scenario.node_config import StateTolerance, TrajectoryActionConfig

from . import conversions as cv

# control_msgs/action/FollowJointTrajectory Result.error_code values
SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP = 0, -1, -2, -3
PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = -4, -5
# terminal states of a goal (action_msgs/GoalStatus, by name)
SUCCEEDED, ABORTED, CANCELED, REJECTED = "succeeded", "aborted", "canceled", "rejected"
ERASE = -1.0            # control_msgs/JointTolerance: the tolerance is removed
_KEEP_DEFAULT = 0.0     # ... and 0 keeps the default


@dataclass(frozen=True)
class JointTolerance:
    """One control_msgs/JointTolerance: name, position (rad), velocity (rad/s), acceleration (rad/s^2), effort."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0
    effort: float = 0.0


@dataclass(frozen=True)
class TrajectoryActionGoal:
    """A FollowJointTrajectory goal in plain form.

    joint_names, points, start_time: as ServicerController.set_trajectory takes them (points as
    (positions, velocities or None, accelerations or None, time_from_start s); start_time = header.stamp in s,
    None for "now"). path_tolerance, goal_tolerance: JointTolerance entries; goal_time_tolerance in s.
    """

    joint_names: Sequence[str]
    points: Sequence
    start_time: float | None = None
    path_tolerance: Sequence[JointTolerance] = ()
    goal_tolerance: Sequence[JointTolerance] = ()
    goal_time_tolerance: float = 0.0


@dataclass(frozen=True)
class TrajectoryFeedback:
    """One feedback of the active goal at `stamp` (s, node time), arrays in `joint_names` order (rad, rad/s);
    errors are desired - actual."""

    goal_id: Hashable
    stamp: float
    joint_names: tuple
    desired_positions: np.ndarray
    desired_velocities: np.ndarray
    actual_positions: np.ndarray
    actual_velocities: np.ndarray
    error_positions: np.ndarray
    error_velocities: np.ndarray


@dataclass(frozen=True)
class TrajectoryResult:
    """How a goal ended: status (SUCCEEDED, ABORTED, CANCELED, REJECTED), error_code (the Result constants
    above) and error_string (why, naming the field, joint or tolerance)."""

    goal_id: Hashable
    status: str
    error_code: int
    error_string: str


@dataclass
class _ActiveGoal:
    goal_id: Hashable
    end_time: float               # s: the trajectory's last point
    path: np.ndarray              # (2 n) [position (rad) | velocity (rad/s)] tolerances, inf = not checked
    goal: np.ndarray              # (2 n)
    goal_time_tolerance: float    # s, inf = no limit
    next_feedback: float          # s


class TrajectoryExecution:
    """FollowJointTrajectory goals on a ServicerController: submit(), cancel(), preempt(), and on_control() at
    every control update while `active` (the host's control cycle drives it; see the module docstring)."""

    def __init__(self, controller: ServicerController, config: TrajectoryActionConfig,
                 report: Callable[[int, str], None] | None = None, field: str = "controller.trajectory_action"):
        rate = controller.config.rate
        if config.feedback_rate > rate:
            raise ConfigError(f"{field}.feedback_rate", f"must not exceed the control rate ({rate} Hz), got "
                                                        f"{config.feedback_rate} Hz")
        self.controller = controller
        self.config = config
        # the node's reason to refuse any goal now (e.g. a mode that holds the arm itself), or None
        self.refusal: Callable[[], str | None] = lambda: None
        self.joint_names = tuple(controller.arm_joints)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        system = controller.system
        self._q_index = contiguous_index([system.model.joints[system.joint_id(n)].idx_q for n in self.joint_names])
        self._v_index = contiguous_index([system.v_index(n) for n in self.joint_names])
        n = len(self.joint_names)
        self._actual = np.zeros(2 * n)            # [q | qdot] of the arm joints at the update being checked
        self._default_path = _tolerance_vector(config.default_path_tolerance, n)
        self._default_goal = _tolerance_vector(config.default_goal_tolerance, n)
        self._feedback_period = 1.0 / config.feedback_rate
        self._slack = 0.5 / rate      # half a control period: feedback times are compared on the update grid
        self._report = report
        self._listener: Callable[[object], None] | None = None
        self._goal: _ActiveGoal | None = None

    @property
    def active(self) -> bool:
        """A goal is being executed."""
        return self._goal is not None

    def connect(self, listener: Callable[[object], None]) -> None:
        """Where TrajectoryFeedback and the TrajectoryResult of accepted goals go (the action server)."""
        self._listener = listener

    @property
    def goal_id(self) -> Hashable | None:
        return self._goal.goal_id if self._goal is not None else None

    # ---- goals ---------------------------------------------------------------------------------
    def submit(self, goal_id: Hashable, goal: TrajectoryActionGoal) -> TrajectoryResult | None:
        """Start executing `goal` from the state of the last control update (preempting the active goal);
        None when accepted, else the rejection (nothing changes then)."""
        try:
            refusal = self.refusal()
            if refusal is not None:
                raise CommandError("mode", refusal)
            path = self._tolerances(goal.path_tolerance, self._default_path, "path_tolerance")
            tolerance = self._tolerances(goal.goal_tolerance, self._default_goal, "goal_tolerance")
            goal_time = self._goal_time_tolerance(goal.goal_time_tolerance)
            report = self.controller.set_trajectory(goal.joint_names, goal.points, goal.start_time)
        except CommandError as exc:
            return self.reject(goal_id, exc)
        self.preempt("preempted by a new FollowJointTrajectory goal")
        end = report.start_time + report.duration
        self._goal = _ActiveGoal(goal_id, end, path, tolerance, goal_time, -math.inf)
        self._say(cv.OK, f"FollowJointTrajectory goal accepted ({report.duration:.3f} s, ends at t = {end:.3f} s): "
                         f"{report.message}")
        return None

    def reject(self, goal_id: Hashable, exc: CommandError) -> TrajectoryResult:
        """The rejection of a goal that failed validation with `exc` (also used by the glue's own checks)."""
        if exc.field == "state":      # ServicerController.set_trajectory before its first update
            text = ("no measured state yet: the controller has not run (waiting for joint_states and odometry), "
                    "so a trajectory cannot start from the current pose; send the goal once it runs")
        else:
            text = str(exc)
        code = INVALID_JOINTS if _names_joints(exc.field) else INVALID_GOAL
        self._say(cv.ERROR, f"FollowJointTrajectory goal rejected, keeping the current reference: {text}")
        return TrajectoryResult(goal_id, REJECTED, code, text)

    def preempt(self, reason: str) -> None:
        """End the active goal (if any) because another trajectory replaced it; the controller follows that one."""
        if self._goal is not None:
            self._finish(ABORTED, INVALID_GOAL, reason, hold=False)

    def cancel(self, goal_id: Hashable) -> bool:
        """Cancel the active goal if it is `goal_id`: hold the measured position. False if it is not active."""
        if self._goal is None or self._goal.goal_id != goal_id:
            return False
        self._finish(CANCELED, SUCCESSFUL, "canceled on request: holding the measured position", hold=True)
        return True

    def state_lost(self, now: float, reason: str) -> None:
        """No usable state at the control period `now` (stale or refused): the path cannot be checked and the
        controller publishes nothing, so the active goal ends aborted (PATH_TOLERANCE_VIOLATED: the path is no
        longer verified) and the arm is told to hold the last measured position once commands resume."""
        if self._goal is not None:
            self._finish(ABORTED, PATH_TOLERANCE_VIOLATED, f"at t = {now:.3f} s the controller lost its state "
                         f"({reason}): the path cannot be checked; holding the last measured position", hold=True)

    # ---- control cycle -----------------------------------------------------------------------------
    def on_control(self, now: float, q: np.ndarray, v: np.ndarray) -> None:
        """After a control update at `now` (s) from the full model state (q, v): feedback and the tolerances."""
        goal = self._goal
        if goal is None:
            return
        n = len(self.joint_names)
        reference, _ = self.controller.follower.sample_stacked(now)     # [q_d | qdot_d | qddot_d]
        actual = self._actual
        actual[:n] = q[self._q_index]
        actual[n:] = v[self._v_index]
        error = reference[:2 * n] - actual                                # [e | e'], one vector
        if now >= goal.next_feedback - self._slack:
            goal.next_feedback = now + self._feedback_period
            self._emit(TrajectoryFeedback(goal.goal_id, now, self.joint_names, reference[:n], reference[n:2 * n],
                                          actual[:n].copy(), actual[n:].copy(), error[:n], error[n:]))
        moving = now < goal.end_time
        tolerance = goal.path if moving else goal.goal
        if (np.abs(error) <= tolerance).all():                           # the usual case: one comparison
            if not moving:
                worst = int(np.argmax(np.abs(error[:n])))
                self._finish(SUCCEEDED, SUCCESSFUL, f"goal reached at t = {now:.3f} s: every joint within its goal "
                             f"tolerance (largest position error {error[worst]:.3g} rad, {self.joint_names[worst]})",
                             hold=False)
        elif moving:
            self._finish(ABORTED, PATH_TOLERANCE_VIOLATED, f"path tolerance violated at t = {now:.3f} s (the "
                         f"trajectory ends at {goal.end_time:.3f} s): {self._violation(error, tolerance)}; holding "
                         "the measured position", hold=True)
        elif now - goal.end_time > goal.goal_time_tolerance:
            self._finish(ABORTED, GOAL_TOLERANCE_VIOLATED, f"goal tolerance not met {now - goal.end_time:.3f} s "
                         f"after the trajectory's end (goal_time_tolerance {goal.goal_time_tolerance:.3f} s): "
                         f"{self._violation(error, tolerance)}; holding the measured position", hold=True)

    # ---- helpers -----------------------------------------------------------------------------------
    def _violation(self, error: np.ndarray, tolerance: np.ndarray) -> str:
        """Which joint exceeds its tolerance the most (relative to it), for the error string."""
        k = int(np.argmax(np.abs(error) / tolerance))                    # an inf tolerance gives 0
        n = len(self.joint_names)
        kind, unit = ("position", "rad") if k < n else ("velocity", "rad/s")
        return f"{self.joint_names[k % n]} {kind} error {error[k]:.4g} {unit} exceeds {tolerance[k]:.4g} {unit}"

    def _finish(self, status: str, code: int, text: str, hold: bool) -> None:
        goal, self._goal = self._goal, None
        if hold:
            self.controller.stop_trajectory()
        level = cv.OK if status in (SUCCEEDED, CANCELED) else cv.ERROR
        self._say(level, f"FollowJointTrajectory goal {status}: {text}")
        self._emit(TrajectoryResult(goal.goal_id, status, code, text))

    def _emit(self, event) -> None:
        if self._listener is not None:
            self._listener(event)

    def _say(self, level: int, message: str) -> None:
        if self._report is not None:
            self._report(level, message)

    def _tolerances(self, entries, defaults: np.ndarray, field: str) -> np.ndarray:
        """[position | velocity] tolerances (2 n): the defaults with the goal's JointTolerance entries applied."""
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
            raise CommandError(field, f"must be a list of JointTolerance entries, got {entries!r}")
        rows = defaults.copy()
        n = len(self.joint_names)
        seen: set[str] = set()
        for i, entry in enumerate(entries):
            j = joint_column(getattr(entry, "name", None), self._index, seen, f"{field}[{i}].name")
            for row, kind in enumerate(("position", "velocity")):
                value = _tolerance_value(getattr(entry, kind), f"{field}[{i}].{kind}")
                if value == ERASE:
                    rows[row * n + j] = math.inf
                elif value != _KEEP_DEFAULT:
                    rows[row * n + j] = value
            for kind in ("acceleration", "effort"):
                if _tolerance_value(getattr(entry, kind, 0.0), f"{field}[{i}].{kind}") > 0.0:
                    raise CommandError(f"{field}[{i}].{kind}", f"cannot be checked: the controller measures no "
                                                               f"joint {kind}; give 0 (default) or -1 (none)")
        return rows

    def _goal_time_tolerance(self, value) -> float:
        value = _tolerance_value(value, "goal_time_tolerance")
        if value == ERASE:
            return math.inf
        return self.config.default_goal_time_tolerance if value == _KEEP_DEFAULT else value


def _tolerance_vector(tolerance: StateTolerance, n: int) -> np.ndarray:
    """Configured defaults as [position | velocity] (2 n), 0 (not checked) as inf."""
    rows = np.array([tolerance.position] * n + [tolerance.velocity] * n, dtype=float)
    rows[rows == 0.0] = math.inf
    return rows


def _tolerance_value(value, field: str) -> float:
    """A tolerance as JointTolerance defines it: > 0, 0 (default) or -1 (none); else CommandError."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise CommandError(field, f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (value < 0.0 and value != ERASE):
        raise CommandError(field, f"must be > 0 (the tolerance), 0 (the default) or -1 (no limit), got {value}")
    return value


def _names_joints(field: str) -> bool:
    """Whether a rejected field is about which joints the goal names (INVALID_JOINTS) rather than its values."""
    return field.startswith("joint_names") or field.endswith("].name") or field.startswith("multi_dof")
