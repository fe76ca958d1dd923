"""Dynamics node core: steps the simulation and publishes what a robot driver would.

Publishes (relative names from config/nodes.yaml):
- joint_states (sensor_msgs/JointState): arm then wheel joints; position (rad, wheels wrapped to
  (-pi, pi]), velocity (rad/s; wheels relative to the bus), effort (N m actually applied over the last step,
  after the actuator limits).
- <subtree> odometry (nav_msgs/Odometry), one per floating base: pose of the base link in the world frame,
  twist of the base link in the base-link frame.
- tf (tf2_msgs/TFMessage): world -> base link of every floating base (the target's frames carry its prefix).
- momentum/linear, momentum/angular (geometry_msgs/Vector3Stamped, frame world): total linear momentum
  (kg m/s) and angular momentum about the system centre of mass (kg m^2/s), seed 004 eqs. 2.9-2.12; in orbit those
  relative to the free-falling frame of the reference orbit (docs/orbit.md sec. 3), in LVLH axes.
- momentum/balance (std_msgs/Float64MultiArray, labelled): the momentum change since the start less the integrated
  external impulse, inertial (linear N s, angular N m s about a fixed inertial point; 3 each), and the largest
  momentum of a body (N s, N m s): Simulator.momentum_balance, docs/orbit.md sec. 5. Free-floating models only.
- orbit/reference (nav_msgs/Odometry, in orbit only): the reference orbit's point and the LVLH axes (child frame:
  the world frame) in the inertial frame (ECI), the twist in LVLH axes (docs/orbit.md sec. 6).
In orbit the world frame is the LVLH frame: odometry, tf and markers give poses and twists relative to it.
- clock (rosgraph_msgs/Clock): simulated time, for nodes running with use_sim_time.
- diagnostics (diagnostic_msgs/DiagnosticArray): the two command inputs and the simulation.
Flexible models (docs/flexibility.md sec. 7):
- joint_states also carries the tip-chain joints of each flexible link (`<link>/tip_y` ..., position and rate;
  effort zero), which the robot description has: robot_state_publisher then draws every link beyond a flexible
  one at its deformed place; an elastic joint's entry is its link-side angle;
- flexible_modes (sensor_msgs/JointState): the modal coordinates `<link>/bending_y_<i>` ... (m or rad, eq. 2;
  effort: the elastic and damping generalized force), and per elastic joint `<joint>/motor` (motor angle on
  the output side, rate, actuator torque applied) and `<joint>/deflection` (q - theta_m, rate, spring and
  damper torque on the link);
- flexible_links/marker (visualization_msgs/Marker, LINE_LIST in the world frame): the deformed beam axes with
  the deflection magnified (deformation_marker.py).
Models with a grasp or contact surfaces (docs/contact.md sec. 10):
- grasp/wrench (geometry_msgs/WrenchStamped): while the grasp holds, the wrench the target exerts on the hand in the
  end-effector frame about its origin (a surface contact: the normal force on the robot's point, in its frame);
  zero when free (as a wrist force-torque sensor reads nothing);
- grasp/state (std_msgs/Float64MultiArray, grasp_state_message.py), at its rate and at once after every event;
- grasp/events (std_msgs/String, transient-local): one readable line per contact event (grasp, failed grasp with
  the figures out of tolerance, release, touchdown, separation), as they happen.
Subscribes to the ros2_control forward-command topics arm_effort_controller/commands and
reaction_wheel_effort_controller/commands (std_msgs/Float64MultiArray in the model's arm_joints /
reaction_wheels.joints order), and with a grasp gripper/command (std_msgs/Bool: true close, false open; the
controller's output). A model with base thrusters (model/base_thrusters.py) takes base_thrusters/command
(geometry_msgs/WrenchStamped in the thruster base's link frame: force through its origin, N, and couple, N m,
within the model's limits), held and timed out like the efforts (thrusters off without a command: OK).
With thrusters it publishes base_thrusters/applied (the same WrenchStamped, as applied over the last step) with the
throttled state: the holonomy monitor's known external wrench.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import pinocchio as pin

from space_robot_dynamics.contact.constraint_wrench import GraspWrenchDecomposition
from space_robot_dynamics.errors import CommandError, ConfigError, SimulationDivergedError
from space_robot_dynamics.simulation.momentum_balance import balance_applies
from space_robot_dynamics.simulation.simulator import Simulator
from space_robot_scenario.node_config import DynamicsNodeConfig

from . import conversions as cv
from . import message_builders as mb
from .command_input import CommandInput
from .deformation_marker import MARKER, DeformationMarkerBuilder
from .grasp_state_message import grasp_state_message
from .message_types import MessageTypes
from .node_core import ACTUATE, MONITOR, SENSE, NodeCore, Timer
from .robot_state import BaseKinematics, check_odometry_topics, floating_subtrees

# the inertial frame of orbit/reference: Earth-centred, axes fixed in inertial space (docs/orbit.md sec. 2)
INERTIAL_FRAME = "eci"
# momentum/balance's entries (layout.dim[0].label, comma-separated)
BALANCE_LABEL = ",".join(["linear_residual_x", "linear_residual_y", "linear_residual_z", "angular_residual_x",
                          "angular_residual_y", "angular_residual_z", "body_linear_max", "body_angular_max"])
# the base_thrusters input's entries: force (N) and couple (N m) in the base link frame
THRUST_ENTRIES = ("force_x", "force_y", "force_z", "torque_x", "torque_y", "torque_z")


class DynamicsCore(NodeCore):
    name = "dynamics"

    def __init__(self, types: MessageTypes, simulator: Simulator, config: DynamicsNodeConfig, faults=()):
        """`faults`: the scenario's actuator faults (space_robot_scenario.faults.Fault, in time order), which this
        node strikes at their time: each fails its drive in the simulator (actuator_faults.py) before the step
        that starts at that time, and is reported on diagnostics at once, at WARN, then in every report."""
        super().__init__(types)
        self.sim = simulator
        self._pending_faults = list(faults)
        self._half_step = 0.5 * simulator.settings.dt      # a fault at t strikes the step that starts at t
        self.struck: list = []                       # the faults that happened
        self.system = simulator.system
        self.config = config
        check_odometry_topics(self.system, config.odometry, "dynamics.topics.odometry")
        unknown = sorted(set(config.odometry_rates) - set(config.odometry))
        if unknown:
            raise ConfigError("dynamics.rates.odometry", f"no odometry topic for subtree(s) {unknown}")
        self.arm_input = CommandInput("arm_command", self.system.arm_joints, config.command_timeout)
        self.wheel_input = CommandInput("wheel_command", self.system.wheel_joints, config.command_timeout)
        # base thrusters (model file `base_thrusters`): a wrench held like the efforts, off after the timeout
        self.thrusters = self.system.base_thrusters
        self.thruster_input = CommandInput("base_thrusters", THRUST_ENTRIES, config.command_timeout,
                                           idle="thrusters off", required=False) if self.thrusters else None
        self._thrust_applied = np.zeros(len(THRUST_ENTRIES))
        flexibility = self.system.flexibility
        # the tip chains of flexible links (their coordinates follow the modal ones; robot_state_publisher needs them)
        self._tip_joints = list(flexibility.coordinates.dependent_names) if flexibility is not None else []
        self.joint_names = list(self.system.arm_joints + self.system.wheel_joints) + self._tip_joints
        self._tip_effort = np.zeros(len(self._tip_joints))
        # where each joint's angle is in q: revolute joints store it, continuous ones (cos, sin)
        slices = [self.system.q_slice(n) for n in self.joint_names]
        self._angle_q = np.array([s.start for s in slices], dtype=int)
        self._continuous = [(row, s.start) for row, s in enumerate(slices) if s.stop - s.start == 2]
        self._joint_v = np.array([self.system.v_index(n) for n in self.joint_names], dtype=int)
        self._has_wheels = len(self.system.wheel_joints) > 0
        self._bases = BaseKinematics(self.system)
        self._floating = floating_subtrees(self.system)
        self._momentum_data = self.system.model.createData()
        self.orbit = simulator.orbit             # None in free space; else the world frame is LVLH
        self._lvlh_state = (None, None, None)    # (t, q, v) in LVLH, worked out once per instant
        self._balance = balance_applies(self.system)
        self.publishes_momentum_balance = self._balance     # momentum/balance: free-floating models only
        # message builders: classes, names, frames and layouts looked up once; one stamp per instant
        self._stamps = mb.Stamps(types)
        self._joint_state = mb.JointStateBuilder(types, self.joint_names, self._stamps)
        self._odometry = {subtree.name: mb.OdometryBuilder(types, config.world_frame, subtree.base_link, self._stamps)
                          for subtree in self._floating}
        self._transforms = mb.TransformBuilder(types, self._stamps)
        self._momentum = mb.Vector3StampedBuilder(types, config.world_frame, self._stamps)
        self._clock = types.cls(cv.CLOCK)
        self._flexible_modes = mb.JointStateBuilder(types, flexibility.names, self._stamps) \
            if flexibility is not None else None
        self._deformation = DeformationMarkerBuilder(
            types, self.system, config.world_frame, config.marker_magnification, config.marker_points_per_link,
            config.marker_line_width) if flexibility is not None and flexibility.links else None
        self.diverged: SimulationDivergedError | None = None
        # A ROS node keeps running and reports a diverged simulation in its diagnostics; the standalone runtime
        # sets this to end the run right there (SimulationDivergedError out of the step).
        self.raise_on_divergence = False
        self.steps = 0

        self.add_publication(config.joint_states, cv.JOINT_STATE)
        for name in sorted(config.odometry):
            self.add_publication(config.odometry[name], cv.ODOMETRY)
        self.add_publication(config.throttled_joint_states, cv.JOINT_STATE)
        for name in sorted(config.throttled_odometry):
            self.add_publication(config.throttled_odometry[name], cv.ODOMETRY)
        self.add_publication(config.tf, cv.TF_MESSAGE)
        self._mounted = [s for s in self.system.subtrees if s.root_joint_id == 0]
        if self._mounted:      # a fixed base's pose is the model's mount: one latched transform from the world
            self.add_publication(config.tf_static, cv.TF_MESSAGE, transient_local=True)
        self.add_publication(config.clock, cv.CLOCK)
        self.add_publication(config.momentum_linear, cv.VECTOR3_STAMPED)
        self.add_publication(config.momentum_angular, cv.VECTOR3_STAMPED)
        if self._balance:
            self.add_publication(config.momentum_balance, cv.FLOAT64_MULTI_ARRAY)
        if self.orbit is not None:
            self.add_publication(config.orbit_reference, cv.ODOMETRY)
            self._reference = mb.OdometryBuilder(types, INERTIAL_FRAME, config.world_frame, self._stamps)
        self.add_publication(config.diagnostics, cv.DIAGNOSTIC_ARRAY)
        if self._flexible_modes is not None:
            self.add_publication(config.flexible_modes, cv.JOINT_STATE)
            self.add_publication(config.throttled_flexible_modes, cv.JOINT_STATE)
        if self._deformation is not None:
            self.add_publication(config.deformation_marker, MARKER)
        # contacts (docs/contact.md sec. 10)
        self._contacts = simulator.contact_state() is not None
        self._decomposition = GraspWrenchDecomposition(self.system.grasp.config.approach_axis) \
            if self.system.grasp is not None else None
        self._events_published = 0
        self._gripper_errors = 0
        self._gripper_errors_reported = 0
        self._last_gripper_error = ""
        if self._contacts:
            self.add_publication(config.grasp_wrench, cv.WRENCH_STAMPED)
            self.add_publication(config.grasp_state, cv.FLOAT64_MULTI_ARRAY)
            self.add_publication(config.grasp_events, cv.STRING, transient_local=True)
            if self.system.grasp is not None:
                self.add_subscription(config.gripper_command, cv.BOOL, self.on_gripper_command)
        self.add_subscription(config.arm_command, cv.FLOAT64_MULTI_ARRAY,
                              lambda msg: self.arm_input.offer(msg, self.now()))
        if self.system.wheel_joints:
            self.add_subscription(config.wheel_command, cv.FLOAT64_MULTI_ARRAY,
                                  lambda msg: self.wheel_input.offer(msg, self.now()))
        if self.thrusters is not None:
            self.add_subscription(config.base_thrusters_command, cv.WRENCH_STAMPED, self.on_thruster_command)
            self.add_publication(config.base_thrusters_applied, cv.WRENCH_STAMPED)
        rates = "dynamics.rates"
        # Odometry before joint_states within an instant: a ROS 2 controller runs its update when joint_states
        # arrives (its time source, node_core), by which time the odometry of that instant is there too.
        for subtree in floating_subtrees(self.system):
            own = subtree.name in config.odometry_rates
            self.add_timer(f"odometry.{subtree.name}",
                           1.0 / config.odometry_rates.get(subtree.name, config.state_rate),
                           partial(self._odometry_timer, subtree, config.odometry[subtree.name],
                                   self._odometry[subtree.name]), SENSE,
                           ("nodes", f"{rates}.odometry.{subtree.name}" if own else f"{rates}.state"))
        # before joint_states, as the odometry: the state of an instant is complete when joint_states arrives
        if self._flexible_modes is not None:
            self.add_timer("flexible_modes", 1.0 / config.flexible_modes_rate, self.publish_flexible_modes, SENSE,
                           ("nodes", f"{rates}.flexible_modes"))
        self.add_timer("joint_states", 1.0 / config.state_rate, self.publish_joint_state, SENSE,
                       ("nodes", f"{rates}.state"))
        # The same state for what needs less (the monitor, robot_state_publisher, viewers): under ROS 2 each
        # subscriber of a 1 kHz topic costs a send per message here and a receive there.
        self.add_timer("throttled_state", 1.0 / config.throttled_rate, self.publish_throttled_state, SENSE,
                       ("nodes", f"{rates}.throttled_state"))
        self.add_timer("tf", 1.0 / config.tf_rate, self.publish_tf, SENSE, ("nodes", f"{rates}.tf"))
        self.add_timer("clock", 1.0 / config.clock_rate, self.publish_clock, SENSE, ("nodes", f"{rates}.clock"))
        self.add_timer("momentum", 1.0 / config.momentum_rate, self.publish_momentum, SENSE,
                       ("nodes", f"{rates}.momentum"))
        if self._balance:
            self.add_timer("momentum_balance", 1.0 / config.momentum_balance_rate, self.publish_momentum_balance,
                           SENSE, ("nodes", f"{rates}.momentum_balance"))
        if self.orbit is not None:
            self.add_timer("orbit_reference", 1.0 / config.orbit_reference_rate, self.publish_orbit_reference,
                           SENSE, ("nodes", f"{rates}.orbit_reference"))
        self.add_timer("diagnostics", 1.0 / config.diagnostics_rate, self.publish_diagnostics, MONITOR,
                       ("nodes", f"{rates}.diagnostics"))
        if self._deformation is not None:
            self.add_timer("deformation_marker", 1.0 / config.deformation_marker_rate, self.publish_deformation,
                           SENSE, ("nodes", f"{rates}.deformation_marker"))
        if self._contacts:
            self.add_timer("grasp_wrench", 1.0 / config.grasp_wrench_rate, self.publish_grasp_wrench, SENSE,
                           ("nodes", f"{rates}.grasp_wrench"))
            self.add_timer("grasp_state", 1.0 / config.grasp_state_rate, self.publish_grasp_state, SENSE,
                           ("nodes", f"{rates}.grasp_state"))
        if self._pending_faults:     # first: a fault at t fails its drive for the step from t on
            self.timers.insert(0, Timer("faults", simulator.settings.dt, self._strike_faults, SENSE,
                                        ("scenario", "simulation.dt")))
        self.add_timer("step", simulator.settings.dt, self.step, ACTUATE, ("scenario", "simulation.dt"))

    def start(self) -> None:
        """The mount of every fixed subtree on tf_static: world -> base link (a bench arm: the world frame exists
        and RViz shows the arm in it), or mount frame -> base link for a subtree mounted on another's frame (a
        target held by the hand). Floating bases go out on tf at their rate."""
        if not self._mounted:
            return
        model, data = self.system.model, self.system.model.createData()
        pin.framesForwardKinematics(model, data, self.system.neutral())
        t = self.now()
        transforms = []
        for subtree in self._mounted:
            parent = subtree.config.mount_frame or self.config.world_frame
            placement = data.oMf[subtree.base_frame_id]
            if subtree.config.mount_frame:     # fixed relative to the mount frame whatever the configuration
                placement = data.oMf[model.getFrameId(subtree.config.mount_frame)].actInv(placement)
            transforms.append(cv.transform_stamped(self.types, t, parent, subtree.base_link, placement.translation,
                                                   pin.Quaternion(placement.rotation).coeffs()))
        self.publish(self.config.tf_static, cv.tf_message(self.types, transforms))

    def now(self) -> float:
        """Simulated time (s): the dynamics node is the clock of the simulation."""
        return self.sim.state.t

    # ---- physics -------------------------------------------------------------------------------
    def step(self, _now: float | None = None) -> None:
        """Advance one physics step with the active commands (zero after a command timeout)."""
        if self.diverged is not None:
            return
        t = self.now()
        if self.thruster_input is not None:
            self._apply_thrust(self.thruster_input.active(t))
        try:
            self.sim.step(self.arm_input.active(t), self.wheel_input.active(t) if self.system.wheel_joints else None)
        except SimulationDivergedError as exc:
            self.diverged = exc       # keep the last finite state, report it, never die
            if self.raise_on_divergence:
                raise
            return
        self.steps += 1
        if self._contacts and self.sim.contact_event_count > self._events_published:
            self.publish_contact_events()

    def _strike_faults(self, _now: float | None = None) -> None:
        """(A timer at the physics rate, first in the tick: its report precedes the tick's other diagnostics.)"""
        from space_robot_scenario.faults import SIMULATOR_KINDS

        t = self.now()
        if not (self._pending_faults and self._pending_faults[0].time <= t + self._half_step):
            return
        statuses = []
        while self._pending_faults and self._pending_faults[0].time <= t + self._half_step:
            fault = self._pending_faults.pop(0)
            self.sim.fail_actuator(fault.component, SIMULATOR_KINDS[fault.kind], fault.torque)
            self.struck.append(fault)
            statuses.append(self._fault_status(fault))
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, t, statuses))

    def _fault_status(self, fault):
        return cv.diagnostic_status(self.types, cv.WARN, f"{self.name}: {fault.component}",
                                    f"fault: {fault.description}", self.name,
                                    [("fault", fault.kind), ("time_s", fault.time)])

    # ---- base thrusters -------------------------------------------------------------------------
    def on_thruster_command(self, msg) -> None:
        """base_thrusters/command: a WrenchStamped in the thruster base's link frame (empty frame_id: that frame),
        within the model's limits; a bad one is an ERROR diagnostic and the last valid command stays."""
        limits = self.thrusters.config
        try:
            force, torque = cv.read_wrench_stamped(msg, self.thrusters.base_link, self.config.base_thrusters_command,
                                                 limits.max_force, limits.max_torque)
        except CommandError as exc:
            self.thruster_input.reject(str(exc))
            return
        self.thruster_input.accept(np.concatenate((force, torque)), self.now())

    def _apply_thrust(self, command: np.ndarray) -> None:
        """The simulator's thruster wrench set only when the command changes (it is held over the steps)."""
        if command is self._thrust_applied or np.array_equal(command, self._thrust_applied):
            return
        self.sim.command_thrusters(command[:3], command[3:])
        self._thrust_applied = command

    # ---- contacts ------------------------------------------------------------------------------
    def on_gripper_command(self, msg) -> None:
        """gripper/command: close (true) or open (false) from the next step on; a bad message is an ERROR
        diagnostic and the last valid command stays."""
        try:
            self.sim.command_gripper(cv.read_boolean(msg, self.config.gripper_command))
        except CommandError as exc:
            self._gripper_errors += 1
            self._last_gripper_error = str(exc)

    def publish_contact_events(self) -> None:
        """Each event not yet published, on grasp/events, then the grasp state at once (the controller and the
        monitor switch on it)."""
        events = self.sim.contact_events
        for event in events[self._events_published:]:
            self.publish(self.config.grasp_events, cv.string(self.types, f"t={event.t:.3f} s {event.kind}: "
                                                                         f"{event.message}"))
        self._events_published = len(events)
        self.publish(self.config.grasp_state, self._grasp_state())

    def publish_grasp_state(self, _now: float | None = None) -> None:
        topic = self.config.grasp_state
        if self.wanted(topic):
            self.publish(topic, self._grasp_state())

    def _grasp_state(self):
        """grasp/state now: the simulator's contact state and events, the held grasp's wrench split into its normal
        and tangential parts (seed 004 sec. 5.3)."""
        state = self.sim.contact_state()
        parts = None
        if state.holding:
            _frame, force, torque = self.sim.contact_wrench()
            parts = self._decomposition(np.r_[force, torque])
        return grasp_state_message(self.types, state, self.sim.contact_events, parts)

    def publish_grasp_wrench(self, _now: float | None = None) -> None:
        topic = self.config.grasp_wrench
        if self.wanted(topic):
            frame, force, torque = self.sim.contact_wrench()
            self.publish(topic, cv.wrench_stamped(self.types, self.sim.state.t, frame, force, torque))

    # ---- outputs -------------------------------------------------------------------------------
    # Each timer first asks whether anybody takes its topic now (node_core.wanted): in the standalone graph
    # the 1 kHz clock is then built only for the 100 Hz recorder, and nothing is built for nobody.
    def joint_state_message(self):
        s = self.sim.state
        q = s.q
        position = q[self._angle_q]                    # revolute joints: the angle itself (a fresh array)
        if self._continuous:                           # continuous joints: (cos, sin) in q; a few wheels, so
            values = q.tolist()                        # plain floats beat numpy's per-call cost
            for row, cos_index in self._continuous:
                position[row] = math.atan2(values[cos_index + 1], values[cos_index])
        # effort: what the simulator applied over the last step, after its limits (Simulator.observe() has it
        # too, with momentum and kinematics nobody needs at 1 kHz); fresh arrays: the simulator keeps its own
        arm, wheel = self.sim.applied_torques
        effort = np.concatenate((arm, wheel)) if self._has_wheels else np.array(arm, dtype=float)
        if self._tip_joints:
            effort = np.concatenate((effort, self._tip_effort))
        return self._joint_state.build(s.t, position, s.v[self._joint_v], effort)

    def publish_joint_state(self, _now: float | None = None) -> None:
        topic = self.config.joint_states
        if self.wanted(topic):
            self.publish(topic, self.joint_state_message())

    def world_state(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(t, q, v) in the world frame: the simulator's state, or in orbit its LVLH view (Simulator.lvlh_state),
        worked out once per instant. The arrays are shared: read, never change them."""
        s = self.sim.state
        if self.orbit is None:
            return s.t, s.q, s.v
        if self._lvlh_state[0] != s.t:
            self._lvlh_state = (s.t, *self.sim.lvlh_state())
        return self._lvlh_state

    def odometry_message(self, subtree):
        t, q, v = self.world_state()
        return self._odometry[subtree.name].build(t, *self._bases.lists(subtree, q, v))

    def _odometry_timer(self, subtree, topic: str, builder: mb.OdometryBuilder, _now: float) -> None:
        if self.wanted(topic):
            t, q, v = self.world_state()
            self.publish(topic, builder.build(t, *self._bases.lists(subtree, q, v)))

    def publish_throttled_state(self, _now: float | None = None) -> None:
        """Every odometry, flexible_modes and joint_states on the throttled topics (those somebody takes now)."""
        for subtree in self._floating:
            topic = self.config.throttled_odometry[subtree.name]
            if self.wanted(topic):
                self.publish(topic, self.odometry_message(subtree))
        if self._flexible_modes is not None:
            topic = self.config.throttled_flexible_modes
            if self.wanted(topic):
                self.publish(topic, self.flexible_modes_message())
        topic = self.config.throttled_joint_states
        if self.wanted(topic):
            self.publish(topic, self.joint_state_message())
        if self.thrusters is not None and self.wanted(self.config.base_thrusters_applied):
            thrust = self._thrust_applied
            self.publish(self.config.base_thrusters_applied, cv.wrench_stamped(
                self.types, self.sim.state.t, self.thrusters.base_link, thrust[:3], thrust[3:]))

    def publish_state(self) -> None:
        """Every odometry, flexible_modes and joint_states now (the runtime's final sample), whoever listens; the
        joint state last (a ROS 2 controller runs its update when it arrives)."""
        for subtree in self._floating:
            self.publish(self.config.odometry[subtree.name], self.odometry_message(subtree))
        if self._flexible_modes is not None:
            self.publish(self.config.flexible_modes, self.flexible_modes_message())
        self.publish(self.config.joint_states, self.joint_state_message())

    def finish(self, now: float) -> None:
        """A stopping ROS node's last messages: the state it stops in, and its diagnostics."""
        self.publish_state()
        self.publish_diagnostics(now)

    def flexible_modes_message(self):
        readout = self.sim.flexible_state()
        return self._flexible_modes.build(self.sim.state.t, readout.position, readout.velocity, readout.effort)

    def publish_flexible_modes(self, _now: float | None = None) -> None:
        topic = self.config.flexible_modes
        if self.wanted(topic):
            self.publish(topic, self.flexible_modes_message())

    def publish_deformation(self, _now: float | None = None) -> None:
        topic = self.config.deformation_marker
        if self.wanted(topic):
            t, q, _v = self.world_state()
            self.publish(topic, self._deformation.build(t, q))

    def publish_tf(self, _now: float | None = None) -> None:
        topic = self.config.tf
        if not self.wanted(topic):
            return
        t, q, v = self.world_state()
        tf, world = self._transforms, self.config.world_frame
        transforms = []
        for subtree in self._floating:
            pose, _twist = self._bases.lists(subtree, q, v)
            transforms.append(tf.transform(t, world, subtree.base_link, pose[:3], pose[3:]))
        self.publish(topic, tf.message(transforms))

    def publish_clock(self, _now: float | None = None) -> None:
        topic = self.config.clock
        if self.wanted(topic):
            self.publish(topic, self._clock(clock=self._stamps.time(self.sim.state.t)))

    def publish_momentum(self, _now: float | None = None) -> None:
        linear, angular = self.config.momentum_linear, self.config.momentum_angular
        want_linear, want_angular = self.wanted(linear), self.wanted(angular)
        if not (want_linear or want_angular):
            return
        s = self.sim.state
        # centroidal momentum (p, L about the CoM), world frame: seed 004 eqs. 2.9-2.12 (Pinocchio, as
        # system_momentum.momentum_state, without the kinetic energy nobody publishes)
        h = pin.computeCentroidalMomentum(self.system.model, self._momentum_data, s.q, s.v)
        p, l_ = h.linear, h.angular
        if self.orbit is not None:                   # W's axes -> LVLH's
            axes = self.orbit.lvlh(s.aux("reference_orbit")).axes
            p, l_ = axes.T @ p, axes.T @ l_
        if want_linear:
            self.publish(linear, self._momentum.build(s.t, p.tolist()))
        if want_angular:
            self.publish(angular, self._momentum.build(s.t, l_.tolist()))

    def publish_momentum_balance(self, _now: float | None = None) -> None:
        topic = self.config.momentum_balance
        if self.wanted(topic):
            b = self.sim.momentum_balance()
            values = [*b.linear_residual, *b.angular_residual, b.body_linear, b.body_angular]
            self.publish(topic, cv.float64_multi_array(self.types, values, BALANCE_LABEL))

    def publish_orbit_reference(self, _now: float | None = None) -> None:
        """orbit/reference: LVLH's origin and axes in ECI (pose), v_O and LVLH's angular velocity in LVLH axes."""
        topic = self.config.orbit_reference
        if not self.wanted(topic):
            return
        orbit = self.sim.observe_orbit()
        eci_axes = self.orbit.eci_axes @ orbit.lvlh.axes          # LVLH -> ECI
        velocity = eci_axes.T @ orbit.reference_velocity
        rate = orbit.lvlh.axes.T @ orbit.lvlh.omega
        pose = [*orbit.reference_position, *pin.Quaternion(eci_axes).coeffs()]
        self.publish(topic, self._reference.build(self.sim.state.t, pose, [*velocity, *rate]))

    def publish_diagnostics(self, _now: float | None = None) -> None:
        t = self.now()
        statuses = []
        inputs = [self.arm_input] + ([self.wheel_input] if self.system.wheel_joints else []) + \
            ([self.thruster_input] if self.thruster_input is not None else [])
        for command in inputs:
            level, message, values = command.status(t)
            statuses.append(cv.diagnostic_status(self.types, level, f"{self.name}: {command.name}", message,
                                                 self.name, values))
        if self.diverged is None:
            sim_status = (cv.OK, "stepping", [("time_s", t), ("steps", self.steps)])
        else:
            sim_status = (cv.ERROR, str(self.diverged), [("time_s", t), ("steps", self.steps)])
        if self.system.flexibility is not None:      # which step integrates the flexible model, and why
            sim_status[2].append(("flexible_step", self.sim.step_backend))
            if self.sim.step_backend_reason:
                sim_status[2].append(("flexible_step_not_compiled_because", self.sim.step_backend_reason))
        statuses.append(cv.diagnostic_status(self.types, sim_status[0], f"{self.name}: simulation", sim_status[1],
                                             self.name, sim_status[2]))
        if self._contacts:
            statuses.append(self._contact_status())
        statuses += [self._fault_status(fault) for fault in self.struck]     # a failed drive stays failed
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, t, statuses))

    def _contact_status(self):
        """`dynamics: contact`: ERROR after a bad gripper command (since the last report), WARN while the last event
        is a failed grasp, else OK; the last event's sentence."""
        state, events = self.sim.contact_state(), self.sim.contact_events
        values = [("mode", state.mode), ("gripper_closed", state.gripper_closed), ("events", state.events),
                  ("drift_position_m", state.drift_position), ("drift_angle_rad", state.drift_angle),
                  ("peak_force_n", state.peak_force), ("peak_torque_nm", state.peak_torque),
                  ("gripper_command_errors", self._gripper_errors), ("last_gripper_command_error",
                                                                     self._last_gripper_error)]
        message = f"t={events[-1].t:.3f} s {events[-1].kind}: {events[-1].message}" if events else \
            "no contact event yet"
        level = cv.WARN if events and events[-1].kind == "grasp_failed" else cv.OK
        if self._gripper_errors_reported < self._gripper_errors:
            level, message = cv.ERROR, f"gripper command rejected, keeping the last one: {self._last_gripper_error}"
            self._gripper_errors_reported = self._gripper_errors
        return cv.diagnostic_status(self.types, level, f"{self.name}: contact", message, self.name, values)
