"""Controller node core: ServicerController (space_robot_control) between ROS messages.

Subscribes: joint_states (sensor_msgs/JointState) and one nav_msgs/Odometry per floating base (the full
model state q, v); arm_controller/joint_trajectory (trajectory_msgs/JointTrajectory, the
joint_trajectory_controller topic); attitude_controller/setpoint (geometry_msgs/QuaternionStamped, bus
base_link -> world, frame_id world).
Publishes at the controller's rate (config/controller.yaml, 1 kHz): arm_effort_controller/commands and
reaction_wheel_effort_controller/commands (std_msgs/Float64MultiArray, ros2_control forward-command
controller interface, in the controller's joint orders), plus diagnostics.
FollowJointTrajectory goals (arm_controller/follow_joint_trajectory, served under ROS 2 by
ros/trajectory_action_server.py) are checked after each control update: trajectory_execution.py.
Capture (docs/contact.md sec. 10): gripper_controller/command (std_msgs/Bool, true close, false open) is passed on
to the gripper on gripper/command (the dynamics node, or a gripper driver) when the model has a grasp, and
rejected with an ERROR diagnostic otherwise (no target to grasp); grasp/state (from the dynamics node) switches
the controller to the joined system when the grasp closes and back when it opens (ServicerController.set_grasp).

Cartesian approach (docs/controllers.md sec. 1): a geometry_msgs/PoseStamped on cartesian_controller/goal
(the hand's goal pose in the world frame or in a frame of the model, e.g. target/grapple_frame: the goal then moves
with it) switches the arm to the resolved-rate Cartesian controller through the generalized Jacobian, the wheels
holding the bus (controller.yaml `cartesian_approach`); a joint trajectory, a FollowJointTrajectory goal or a grasp
switches back to joint space. A geometry_msgs/WrenchStamped on force_controller/setpoint is validated and held as
the contact-force setpoint (reported in diagnostics; no mode of this node applies it yet: the hybrid force/motion
law runs in the thesis studies, docs/controllers.md sec. 2).

Safety: a malformed goal or setpoint is rejected with an ERROR diagnostic and the current reference kept;
a trajectory arriving before the first state is applied at the first update. With no state, or a state
older than state_timeout, no command is published: the actuators' own command timeout then applies zero
torque (dynamics node, Intera), and the controller reports it.
"""
from __future__ import annotations

import math

import numpy as np

from space_robot_control.adaptive_force_motion_control import build_force_motion_controller
from space_robot_control.cartesian_approach import CartesianApproachController, CartesianOutput
from space_robot_control.force_motion_control import ForceMotionController, ForceMotionOutput
from space_robot_control.servicer_controller import ControlOutput, ServicerController
from space_robot_control.station_keeping import StationKeeping, StationKeepingOutput
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_scenario.node_config import ControllerNodeConfig

from . import conversions as cv
from . import message_builders as mb
from .contact_goal_input import POSE_STAMPED, ContactGoalInput, ContactGoalSettings
from .grasp_state_message import read_grasp_state
from .message_types import MessageTypes
from .node_core import CONTROL, MONITOR, NodeCore
from .robot_state import StateAssembler, check_odometry_topics, floating_subtrees
from .trajectory_execution import TrajectoryExecution


class ControllerCore(NodeCore):
    name = "controller"

    def __init__(self, types: MessageTypes, controller: ServicerController, config: ControllerNodeConfig,
                 mean_motion: float = 0.0):
        """`mean_motion` (rad/s): the scenario's orbit's (docs/orbit.md), for station keeping's feedforward; 0 in free
        space."""
        super().__init__(types)
        self.controller = controller
        self.system = controller.system
        self.config = config
        check_odometry_topics(self.system, config.odometry, "controller.topics.odometry")
        self.state = StateAssembler(self.system, config.world_frame)
        self.period = 1.0 / controller.config.rate
        self.output: ControlOutput | None = None
        self.updates = 0
        self.commands_published = 0
        self.skipped = 0                  # control periods without a usable state
        # control periods that never ran: under ROS 2 the control timer follows the joint_states stamps and runs
        # once however many periods they jumped (timer_schedule.py), i.e. state samples that arrived while the
        # node was busy and were superseded by newer ones (0 in the lockstep runtime)
        self.missed_periods = 0
        self._last_control: float | None = None
        self._pending_trajectory = None
        self._goal_events: list[tuple[int, str]] = []   # (level, message) since the last report
        self.goals_accepted = 0
        self.goals_rejected = 0
        self.trajectories_late = 0      # accepted after their header.stamp (see _apply_trajectory)
        self.last_goal_message = ""
        self.state_errors = 0
        self.last_state_error = ""
        self._state_errors_since_report = 0

        # state messages are only held on arrival (parsed at the next control period): see StateAssembler. Only
        # the newest matters; joint_states also carries the time the control update follows (node_core).
        self.add_subscription(config.joint_states, cv.JOINT_STATE,
                              self.state.holder("joints", self, config.joint_states), latest_only=True,
                              time_source=True)
        for subtree in floating_subtrees(self.system):
            topic = config.odometry[subtree.name]
            self.add_subscription(topic, cv.ODOMETRY, self.state.holder(subtree.name, self, topic), latest_only=True)
        if self.system.flexibility is not None:       # motor angles and modal coordinates (flexibility.md sec. 7)
            self.add_subscription(config.flexible_modes, cv.JOINT_STATE,
                                  self.state.holder("flexible", self, config.flexible_modes), latest_only=True)
        self.add_subscription(config.trajectory, cv.JOINT_TRAJECTORY, self.on_trajectory)
        self.add_subscription(config.attitude_setpoint, cv.QUATERNION_STAMPED, self.on_setpoint)
        # capture: the user's gripper command, passed on to the gripper; the grasp state from the dynamics node
        self.has_gripper = self.system.grasp is not None
        self.add_subscription(config.gripper_command, cv.BOOL, self.on_gripper_command)
        if self.has_gripper:
            self.add_publication(config.gripper_output, cv.BOOL)
            self.add_subscription(config.grasp_state, cv.FLOAT64_MULTI_ARRAY, self.on_grasp_state, latest_only=True)
        self._grasp_holding = False            # what grasp/state last said
        self._grasp_wrench: tuple[float, float] | None = None     # (N, N m) measured, from grasp/state
        self.overload_release: tuple[float, list[str]] | None = None   # (s, joints): the controller let go
        self._grasp_pending: bool | None = None     # a change to apply at the next control update (needs a state)
        self.gripper_commands = 0
        # Cartesian approach: a mode when the configuration has one and the model its end effector and wheels
        self.cartesian = self._cartesian_controller(controller)
        self.cartesian_output: CartesianOutput | None = None
        self.cartesian_active = False
        # the contact-force setpoint's frame: the grasp's hand frame (force_motion), else the Cartesian mode's
        grasp = self.system.grasp
        contact_frame = self.system.model.frames[grasp.ee_frame].name if grasp is not None else \
            self.cartesian.settings.end_effector if self.cartesian is not None else "end_effector"
        self.contact_goals = ContactGoalInput(self.cartesian, ContactGoalSettings(
            cartesian_goal=config.cartesian_goal, force_setpoint=config.force_setpoint,
            world_frame=config.world_frame, contact_frame=contact_frame))
        self.add_subscription(config.cartesian_goal, POSE_STAMPED, self.on_cartesian_goal)
        self.add_subscription(config.force_setpoint, cv.WRENCH_STAMPED, self.on_force_setpoint)
        # hybrid force/motion (controller.yaml modes: force_motion): while the grasp holds, the law of seed 004
        # ch. 6 on the arm and the base thrusters, the measured grasp wrench feeding its force loop
        self.force_motion: ForceMotionController | None = None
        self.force_motion_output: ForceMotionOutput | None = None
        self._measured_force: np.ndarray | None = None      # N, on the target, hand frame (minus grasp/wrench's)
        if "force_motion" in controller.config.modes:
            self.force_motion = build_force_motion_controller(self.system, controller.config.force_motion,
                                                              controller.config.bus_subtree, controller.config.source)
            self._force_motion_arm = [list(self.system.arm_joints).index(n) for n in controller.arm_joints]
            self._hand_frame = contact_frame
            self._thrust_frame = self.system.base_thrusters.base_link
            self._idle_wheels = np.zeros(len(controller.wheel_joints))
            self.add_subscription(config.grasp_wrench, cv.WRENCH_STAMPED, self.on_grasp_wrench, latest_only=True)
            self.add_publication(config.base_thrusters_command, cv.WRENCH_STAMPED)
            names = self.force_motion.parameter_names
            if names:                    # the adaptive law: its estimates and V, with the diagnostics
                self.add_publication(config.force_estimates, cv.FLOAT64_MULTI_ARRAY)
                self._estimates = mb.Float64MultiArrayBuilder(types, len(names) + 3, ",".join(
                    (*names, "lyapunov", "lyapunov_at_grasp", "max_lyapunov_increase")))
        # station keeping (controller.yaml modes: station_keeping): the bus thrusters hold the bus at a point
        self.station_keeping: StationKeeping | None = None
        self.station_keeping_output: StationKeepingOutput | None = None
        if "station_keeping" in controller.config.modes:
            if self.force_motion is not None:
                raise ConfigError("controller.modes", "station_keeping and force_motion both command the thrusters: "
                                  "choose one", controller.config.source)
            self.station_keeping = StationKeeping(self.system, controller.config.bus_subtree,
                                                  controller.config.station_keeping, mean_motion,
                                                  controller.config.source)
            self._thrust_frame = self.system.base_thrusters.base_link
            self.add_publication(config.base_thrusters_command, cv.WRENCH_STAMPED)
        self.add_publication(config.arm_command, cv.FLOAT64_MULTI_ARRAY)
        self.has_wheels = len(controller.wheel_joints) > 0
        self._arm_command = mb.Float64MultiArrayBuilder(types, len(controller.arm_joints), "effort")
        self._wheel_command = mb.Float64MultiArrayBuilder(types, len(controller.wheel_joints), "effort")
        if self.has_wheels:
            self.add_publication(config.wheel_command, cv.FLOAT64_MULTI_ARRAY)
        self.add_publication(config.diagnostics, cv.DIAGNOSTIC_ARRAY)
        self.add_timer("control", self.period, self.control, CONTROL, ("controller", "controller.rate"))
        self.add_timer("diagnostics", 1.0 / config.diagnostics_rate, self.publish_diagnostics, MONITOR,
                       ("nodes", "controller.diagnostics_rate"))
        # FollowJointTrajectory goals: submitted by the rclpy glue (ros/trajectory_action_server.py), checked
        # after each control update while one is active (see trajectory_execution.py)
        self.trajectory_action = TrajectoryExecution(controller, config.trajectory_action, self._goal_event)
        if self.force_motion is not None:      # it would never run: the mode drives the arm while the grasp holds
            self.trajectory_action.refusal = lambda: (
                "the force_motion mode drives the arm while the grasp holds (a joint trajectory's last point is its "
                "setpoint, on " + config.trajectory + ")") if self.force_motion.active else None

    def _target_mass(self) -> float:
        """The mass (kg) of the subtree the grasp's fixture belongs to (0 without a grasp)."""
        grasp, model = self.system.grasp, self.system.model
        if grasp is None:
            return 0.0
        target = self.system.subtree_of(model.frames[grasp.target_frame].name)
        return sum(model.inertias[self.system.joint_id(n)].mass for n in target.joint_names)

    def _cartesian_controller(self, controller: ServicerController) -> CartesianApproachController | None:
        settings = controller.config.cartesian_approach
        system = self.system
        # (a flexible arm: the resolved-rate law's rigid joint torques do not converge through its springs)
        if settings is None or not controller.wheel_joints or not system.model.existFrame(settings.end_effector) \
                or settings.bus_subtree not in system.subtree_names() or system.flexibility is not None:
            return None
        cartesian = CartesianApproachController(system, settings)
        # its torques come in the model's joint orders; the commands go out in the controller's
        self._cartesian_arm = [list(system.arm_joints).index(n) for n in controller.arm_joints]
        self._cartesian_wheels = [list(system.wheel_joints).index(n) for n in controller.wheel_joints]
        return cartesian

    # ---- inputs ----------------------------------------------------------------------------------
    def on_cartesian_goal(self, msg) -> None:
        """A Cartesian goal (contact_goal_input.py checks it; a rejected one keeps the current mode and goal)."""
        accepted = self.contact_goals.accepted
        self.contact_goals.on_cartesian_goal(msg)
        if self.contact_goals.accepted == accepted:
            return
        if self.controller.capture_mode is not None:     # holding the target: the arm stays held
            self.goals_rejected += 1
            self._goal_event(cv.ERROR, "Cartesian goal ignored: the grasp is closed (the arm holds the target)")
            return
        self.cartesian_active = True
        self.trajectory_action.preempt(f"preempted by a Cartesian goal on {self.config.cartesian_goal}")

    def on_force_setpoint(self, msg) -> None:
        """A contact-force setpoint (contact_goal_input.py checks it): the force_motion mode's f_d from now on."""
        accepted = self.contact_goals.accepted
        self.contact_goals.on_force_setpoint(msg)
        if self.force_motion is not None and self.contact_goals.accepted != accepted:
            self.force_motion.set_force_setpoint(self.contact_goals.force_setpoint)

    def on_grasp_wrench(self, msg) -> None:
        """The dynamics node's grasp/wrench: the target's wrench on the hand (hand frame); the force_motion mode
        feeds back its opposite, the hand's force on the target."""
        try:
            force, _torque = cv.read_wrench_stamped(msg, self._hand_frame, self.config.grasp_wrench, math.inf,
                                                    math.inf)
        except CommandError as exc:
            self._state_error(str(exc))
            return
        self._measured_force = -force

    def _state_error(self, error: str) -> None:
        self.state_errors += 1
        self._state_errors_since_report += 1
        self.last_state_error = error

    def on_trajectory(self, msg) -> None:
        if self.updates == 0:
            self._pending_trajectory = msg          # set_trajectory needs a measured start state
            return
        self._apply_trajectory(msg)

    def _apply_trajectory(self, msg) -> None:
        if self.force_motion is not None and self.force_motion.active:
            self._apply_force_motion_joints(msg)
            return
        try:
            names, points, start = cv.read_joint_trajectory(msg)
            report = self.controller.set_trajectory(names, points, start)
        except CommandError as exc:
            self._goal_event(cv.ERROR, f"trajectory rejected, keeping the current reference: {exc}")
            self.goals_rejected += 1
            return
        self.goals_accepted += 1
        self.cartesian_active = False
        if report.late > self.period:
            # A stamp already past on arrival (a message delayed by a loaded machine, a planner's stale stamp): the
            # points keep their stamped times (joint_trajectory_controller's rule), so the way to the first one
            # left is shorter than planned by `late`.
            self.trajectories_late += 1
            self._goal_event(cv.WARN, f"trajectory accepted {report.late:.3f} s after its start time (header.stamp "
                                      f"{start:.3f} s): its points keep their stamped times, {report.skipped} "
                                      f"already past skipped, the motion to the next one starts now "
                                      f"({report.duration:.3f} s to the last); {report.message}")
        else:
            ahead = f", {start - self.now():.3f} s before its start time" if start is not None else ""
            self._goal_event(cv.OK, f"trajectory accepted ({report.duration:.3f} s{ahead}): {report.message}")
        self.trajectory_action.preempt(f"preempted by a trajectory on {self.config.trajectory}")

    def _apply_force_motion_joints(self, msg) -> None:
        """A trajectory while the force_motion mode runs: its last point becomes the joint setpoint (a step, as in
        seed 004 sec. 6.3; the law's K_P, K_D shape the motion)."""
        try:
            names, points, _start = cv.read_joint_trajectory(msg)
            if not points:
                raise CommandError("points", "empty: no joint setpoint")
            positions = points[-1][0]
            self.force_motion.set_joint_setpoint(names, positions)
        except CommandError as exc:
            self.goals_rejected += 1
            self._goal_event(cv.ERROR, f"joint setpoint rejected, keeping the current one: {exc}")
            return
        self.goals_accepted += 1
        self._goal_event(cv.OK, f"force_motion joint setpoint {np.round(positions, 6).tolist()} accepted (the "
                                "trajectory's last point)")

    def on_setpoint(self, msg) -> None:
        try:
            quat = cv.read_quaternion_stamped(msg, self.config.world_frame, self.config.attitude_setpoint,
                                              self.config.setpoint_norm_tolerance)
            self.controller.set_attitude_setpoint(quat)
            if self.force_motion is not None:
                self.force_motion.set_orientation_setpoint(quat)
        except CommandError as exc:
            self.goals_rejected += 1
            self._goal_event(cv.ERROR, f"attitude setpoint rejected, keeping the current one: {exc}")
            return
        self.goals_accepted += 1
        self._goal_event(cv.OK, f"attitude setpoint {np.round(quat, 6).tolist()} accepted")

    def on_gripper_command(self, msg) -> None:
        try:
            closed = cv.read_boolean(msg, self.config.gripper_command)
        except CommandError as exc:
            self.goals_rejected += 1
            self._goal_event(cv.ERROR, f"gripper command rejected: {exc}")
            return
        if not self.has_gripper:
            self.goals_rejected += 1
            self._goal_event(cv.ERROR, f"gripper command ({'close' if closed else 'open'}) rejected: the model has "
                                       "no gripper and no target to grasp (model file: no `grasp` section)")
            return
        self.gripper_commands += 1
        self.publish(self.config.gripper_output, cv.boolean(self.types, closed))
        self._goal_event(cv.OK, f"gripper command passed on: {'close' if closed else 'open'}")

    def on_grasp_state(self, msg) -> None:
        try:
            state = read_grasp_state(msg, self.config.grasp_state)
        except CommandError as exc:
            self._state_error(str(exc))
            return
        holding = state["holding"] > 0.5
        # the grasp wrench now (its parts, constraint_wrench.py): the overload watch's measured wrench
        self._grasp_wrench = (math.hypot(state["axial_force_n"], state["shear_force_n"]),
                              math.hypot(state["twist_torque_nm"], state["bending_torque_nm"]))
        if holding != self._grasp_holding:
            self._grasp_holding = holding
            self._grasp_pending = holding

    def _goal_event(self, level: int, message: str) -> None:
        self._goal_events.append((level, message))
        self.last_goal_message = message

    # ---- control ---------------------------------------------------------------------------------
    def control(self, now: float) -> None:
        if self._last_control is not None:
            self.missed_periods += max(0, round((now - self._last_control) / self.period) - 1)
        self._last_control = now
        for error in self.state.update():      # a rejected message leaves that part's last value (and age)
            self._state_error(error)
        if self.state.age(now) > self.config.state_timeout:
            self._skip(now, f"no state for {self.state.age(now):.3f} s (state_timeout {self.config.state_timeout} s)")
            return
        if self._grasp_pending is not None:
            self._apply_grasp(now)
        if self.force_motion is not None and self.force_motion.active:
            self._control_force_motion(now)
            return
        try:
            if self.cartesian_active:
                out = self.cartesian_output = self.cartesian.update(now, self.state.q, self.state.v)
                arm, wheels = out.arm_torque[self._cartesian_arm], out.wheel_torque[self._cartesian_wheels]
            else:
                self.output = self.controller.update(now, self.state.q, self.state.v)
                arm, wheels = self.output.arm_torque, self.output.wheel_torque
        except CommandError as exc:        # a state the controller cannot use: publish nothing, report it
            self._state_error(str(exc))
            self._skip(now, f"state refused: {exc}")
            return
        self.updates += 1
        self.publish(self.config.arm_command, self._arm_command.build(arm))
        if self.has_wheels:
            self.publish(self.config.wheel_command, self._wheel_command.build(wheels))
        if self.station_keeping is not None and not (self._grasp_holding and
                                                     self.station_keeping.config.after_grasp == "release"):
            out = self.station_keeping_output = self.station_keeping.update(now, self.state.q, self.state.v)
            self.publish(self.config.base_thrusters_command,
                         cv.wrench_stamped(self.types, now, self._thrust_frame, out.force_base, out.torque_base))
        self.commands_published += 1
        if self._pending_trajectory is not None:
            msg, self._pending_trajectory = self._pending_trajectory, None
            self._apply_trajectory(msg)
        if self.trajectory_action.active:      # a FollowJointTrajectory goal: feedback, tolerances, result
            self.trajectory_action.on_control(now, self.state.q, self.state.v)
        mode = self.controller.capture_mode
        if mode is not None and self._grasp_wrench is not None:
            mode.note_wrench(now, *self._grasp_wrench)
        if mode is not None and mode.release_requested_at is not None and self.overload_release is None:
            self._release_on_overload(now, mode)

    def _control_force_motion(self, now: float) -> None:
        """One update of the hybrid force/motion mode: arm torques, the thrusters' wrench (wheels idle)."""
        try:
            sample = self.state.sample_time
            out = self.force_motion_output = self.force_motion.update(
                now, self.state.q, self.state.v, self._measured_force, math.nan if sample is None else sample)
        except CommandError as exc:
            self._state_error(str(exc))
            self._skip(now, f"state refused: {exc}")
            return
        self.updates += 1
        self.publish(self.config.arm_command, self._arm_command.build(out.arm_torque[self._force_motion_arm]))
        if self.has_wheels:
            self.publish(self.config.wheel_command, self._wheel_command.build(self._idle_wheels))
        self.publish(self.config.base_thrusters_command,
                     cv.wrench_stamped(self.types, now, self._thrust_frame, out.thruster_force, out.thruster_torque))
        self.commands_published += 1

    def _overloaded_joints(self, mode) -> list[str]:
        """The arm joints at their effort limits in the last update (CaptureMode.overloaded_joints, by name)."""
        return [n for n, c in zip(self.controller.arm_joints, mode.overloaded_joints) if c]

    def _release_on_overload(self, now: float, mode) -> None:
        """The overload watch asked for a release (CaptureMode: at an effort limit for overload_release_time, or
        with the grasp wrench beyond overload_wrench_factor x its limits meanwhile): the arm no longer holds the
        stack, which would swing it about. Open the gripper (the dynamics node releases; grasp/state then switches
        this controller back to the free servicer) and say so as an ERROR."""
        joints = self._overloaded_joints(mode)
        self.overload_release = (now, joints)
        self.publish(self.config.gripper_output, cv.boolean(self.types, False))
        self._goal_event(cv.ERROR, f"released the target at {now:.3f} s: the arm could not hold it ({joints} "
                                   f"{mode.release_reason})")

    def _apply_grasp(self, now: float) -> None:
        """The grasp closed or opened: the controller computes with the joined system or the free one from now on
        (an active FollowJointTrajectory goal ends: the arm is held where it is)."""
        holding, self._grasp_pending = self._grasp_pending, None
        try:
            self.controller.set_grasp(holding, now, self.state.q, self.state.v)
        except CommandError as exc:
            self._goal_event(cv.ERROR, f"grasp state not applied: {exc}")
            return
        if self.trajectory_action.active:
            self.trajectory_action.preempt("the grasp " + ("closed" if holding else "opened"))
        self.cartesian_active = False          # the joined system's controller holds the arm
        if self.station_keeping is not None:   # the thrusters move the stack while the grasp holds, or let go
            sk = self.station_keeping
            sk.set_mass(sk.bus_mass + (self._target_mass() if holding else 0.0))
            if holding and sk.config.after_grasp == "release":     # off now, not at the dynamics' timeout
                self.station_keeping_output = None
                self.publish(self.config.base_thrusters_command,
                             cv.wrench_stamped(self.types, now, self._thrust_frame, np.zeros(3), np.zeros(3)))
        if self.force_motion is not None:
            if holding:
                self.force_motion.start(self.state.q, self.state.v)
            else:
                self.force_motion.stop()
                # thrusters off at once (the dynamics node would otherwise hold the last wrench to its timeout)
                self.publish(self.config.base_thrusters_command,
                             cv.wrench_stamped(self.types, now, self._thrust_frame, np.zeros(3), np.zeros(3)))
            self._goal_event(cv.OK, "grasp closed: hybrid force/motion control (arm and base thrusters)" if holding
                             else "grasp opened: controlling the free servicer, thrusters off")
            return
        self._goal_event(cv.OK, "grasp closed: controlling the joined system (arm held, wrench limited, stack "
                                "rate damped)" if holding else "grasp opened: controlling the free servicer")

    def _skip(self, now: float, reason: str) -> None:
        """A control period without a usable state: no command goes out, and an active FollowJointTrajectory goal
        ends (its path can no longer be checked) instead of waiting for the state to come back."""
        self.skipped += 1
        if self.trajectory_action.active:
            self.trajectory_action.state_lost(now, reason)

    # ---- diagnostics -----------------------------------------------------------------------------
    def publish_diagnostics(self, now: float) -> None:
        statuses = []
        age = self.state.age(now)
        state_values = [("ready", self.state.ready), ("age_s", age if np.isfinite(age) else -1.0),
                        ("state_timeout_s", self.config.state_timeout), ("updates", self.updates),
                        ("missed_periods", self.missed_periods), ("skipped_periods", self.skipped),
                        ("state_errors", self.state_errors),
                        ("last_state_error", self.last_state_error)]
        if self._state_errors_since_report:
            level, message = cv.ERROR, f"rejected {self._state_errors_since_report} state message(s): " \
                                       f"{self.last_state_error}"
        elif not self.state.ready:
            level, message = cv.WARN, "waiting for joint_states and odometry: no command published"
        elif age > self.config.state_timeout:
            level, message = cv.ERROR, f"state is {age:.3f} s old (timeout {self.config.state_timeout} s): " \
                                       "no command published"
        else:
            level, message = cv.OK, "controlling"
        self._state_errors_since_report = 0
        statuses.append(cv.diagnostic_status(self.types, level, f"{self.name}: state", message, self.name,
                                             state_values))

        events, self._goal_events = self._goal_events, []
        goal_level = max((lvl for lvl, _ in events), default=cv.OK)
        # every goal event since the last report, so none is lost between two 10 Hz reports
        goal_message = " | ".join(m for _, m in events) or self.last_goal_message or \
            "no goal received: holding the first measured pose"
        out = self.output
        goal_values = [("goals_accepted", self.goals_accepted), ("goals_rejected", self.goals_rejected),
                       ("trajectories_late", self.trajectories_late)]
        if out is not None:
            goal_values += [("trajectory_active", out.trajectory_active),
                            ("tracking_error_max_rad", out.tracking_error_max),
                            ("attitude_error_rad", out.attitude_error_angle)]
        statuses.append(cv.diagnostic_status(self.types, goal_level, f"{self.name}: goals", goal_message,
                                             self.name, goal_values))

        if out is not None and not self.cartesian_active:     # (the Cartesian mode reports in its own status)
            saturated = [n for n, s in zip(self.controller.arm_joints, out.arm_saturated) if s]
            speed = [n for n, s in zip(self.controller.wheel_joints, out.wheel_speed_saturated) if s]
            parts = ([f"arm torque clipped on {saturated}"] if saturated else []) + \
                    (["wheel torque scaled down"] if out.wheel_torque_saturated else []) + \
                    ([f"wheel speed limit on {speed}"] if speed else [])
            values = [(f"arm_torque.{n}", x) for n, x in zip(self.controller.arm_joints, out.arm_torque)] + \
                     [(f"wheel_torque.{n}", x) for n, x in zip(self.controller.wheel_joints, out.wheel_torque)]
            statuses.append(cv.diagnostic_status(self.types, cv.WARN if parts else cv.OK,
                                                 f"{self.name}: actuators", "; ".join(parts) or "within limits",
                                                 self.name, values))
        if self.has_gripper:
            statuses.append(self._capture_status())
        statuses.append(self._cartesian_status())
        if self.force_motion is not None:
            statuses.append(self._force_motion_status())
            out = self.force_motion_output
            if out is not None and out.estimates is not None and self.force_motion.active:
                mode = self.force_motion
                self.publish(self.config.force_estimates, self._estimates.build(
                    [*out.estimates.tolist(), out.lyapunov, mode.lyapunov_at_grasp, mode.largest_lyapunov_increase]))
        statuses.append(self.contact_goals.status(self.types))
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, now, statuses))

    def _capture_status(self):
        """`controller: capture`: free or holding; while holding the wrench limiter's scale and prediction and the
        rate damping."""
        mode = self.controller.capture_mode
        values = [("holding", mode is not None), ("gripper_commands", self.gripper_commands)]
        if self.overload_release is not None:
            values += [("released_on_overload_s", self.overload_release[0])]
        if mode is None:
            if self.overload_release is not None:
                when, joints = self.overload_release
                return cv.diagnostic_status(self.types, cv.ERROR, f"{self.name}: capture",
                                            f"free: released the target at {when:.3f} s, the arm could not hold "
                                            f"it ({joints} at their effort limits)", self.name, values)
            return cv.diagnostic_status(self.types, cv.OK, f"{self.name}: capture", "free (no grasp)", self.name,
                                        values)
        values += [("grasp_time_s", mode.grasp_time), ("rate_damping", mode.rate_damping),
                   ("rate_damping_ended_s", -1.0 if mode.rate_damping_ended is None else mode.rate_damping_ended)]
        if mode.limiter is not None:
            predicted = mode.limiter.predicted
            values += [("acceleration_scale", mode.limiter.scale_applied),
                       ("predicted_grasp_force_n", float(np.linalg.norm(predicted[:3]))),
                       ("predicted_grasp_torque_nm", float(np.linalg.norm(predicted[3:])))]
        message = "holding the target: " + ("damping the stack's rotation" if mode.rate_damping else
                                            "holding the stack's attitude")
        level = cv.OK
        if mode.overload_since is not None:
            level, message = cv.ERROR, message + f"; the arm cannot hold it: {self._overloaded_joints(mode)} at " \
                                                 f"their effort limits since {mode.overload_since:.3f} s"
        elif mode.limiter is not None and mode.limiter.beyond_limits:
            level, message = cv.WARN, message + "; the stack's motion alone loads the fixture beyond the grasp " \
                                                "wrench limit (arm accelerations scaled to 0)"
        return cv.diagnostic_status(self.types, level, f"{self.name}: capture", message, self.name, values)

    def _force_motion_status(self):
        """`controller: force_motion`: waiting for the grasp, or the errors of eqs. 6.6-6.7 and what the limits cut
        (WARN: torques clipped or thrust scaled down; the law then no longer holds exactly)."""
        out, mode = self.force_motion_output, self.force_motion
        if not mode.active or out is None:
            return cv.diagnostic_status(self.types, cv.OK, f"{self.name}: force_motion",
                                        "waiting for the grasp (the mode runs while it holds)", self.name,
                                        [("active", False)])
        force_error = float(np.max(np.abs(out.force_error)))
        values = [("active", True), ("joint_error_max", float(np.max(np.abs(out.joint_error)))),
                  ("attitude_error_rad", float(np.linalg.norm(out.attitude_error))),
                  ("force_error_n", force_error if np.isfinite(force_error) else -1.0),
                  ("force_setpoint_n", float(np.linalg.norm(mode.force_setpoint))),
                  ("thrust_scale", out.thrust_scale),
                  ("thruster_force_n", float(np.linalg.norm(out.thruster_force))),
                  ("thruster_torque_nm", float(np.linalg.norm(out.thruster_torque)))]
        if out.lyapunov is not None:          # the adaptive law (ch. 7)
            values += [("lyapunov", out.lyapunov),
                       ("max_lyapunov_increase", mode.largest_lyapunov_increase), ("held_steps", mode.held_steps)]
        clipped = [n for n, c in zip(self.system.arm_joints, out.arm_saturated) if c]
        held = mode.held_steps
        parts = ([f"arm torque clipped on {clipped}"] if clipped else []) + \
                ([f"thrust scaled down to {out.thrust_scale:.3g} of the law's"] if out.thrust_scale < 1.0 else []) + \
                (["no grasp wrench measured yet (force loop open)"] if not np.isfinite(force_error) else []) + \
                ([f"{held} adaptation step(s) held: they would have left the physically consistent parameters"]
                 if held else [])
        message = f"force/motion: joints {values[1][1]:.4g}, attitude {values[2][1]:.4g} rad, force " + \
                  (f"{force_error:.4g} N" if np.isfinite(force_error) else "unmeasured")
        return cv.diagnostic_status(self.types, cv.WARN if parts else cv.OK, f"{self.name}: force_motion",
                                    message + ("; " + "; ".join(parts) if parts else ""), self.name, values)

    def _cartesian_status(self):
        """`controller: cartesian`: the mode, and while it runs the pose error and the dynamic-singularity measure
        (sigma_min of the length-scaled generalized Jacobian; WARN while damped least squares is damping)."""
        if self.cartesian is None:
            return cv.diagnostic_status(self.types, cv.OK, f"{self.name}: cartesian",
                                        "no Cartesian mode (configuration, or a model without wheels, its end "
                                        "effector or a rigid arm)", self.name, [])
        out = self.cartesian_output
        if not self.cartesian_active or out is None:
            return cv.diagnostic_status(self.types, cv.OK, f"{self.name}: cartesian", "inactive (joint space)",
                                        self.name, [("active", False)])
        values = [("active", True), ("position_error_m", out.position_error),
                  ("orientation_error_rad", out.orientation_error), ("sigma_min", out.sigma_min),
                  ("damping", out.damping), ("wheel_torque_scaled_down", bool(out.wheel_saturated))] + \
            [(f"arm_torque.{n}", x) for n, x in zip(self.controller.arm_joints, out.arm_torque[self._cartesian_arm])]
        damped = out.damping > 0.0
        message = (f"tracking: {out.position_error:.4f} m, {out.orientation_error:.4f} rad"
                   + (f"; near a dynamic singularity (sigma_min {out.sigma_min:.3g}, damped)" if damped else ""))
        return cv.diagnostic_status(self.types, cv.WARN if damped else cv.OK, f"{self.name}: cartesian", message,
                                    self.name, values)
