"""Dynamics node core: steps the simulation and publishes what a robot driver would.

Publishes (relative names from config/nodes.yaml):
- joint_states (sensor_msgs/JointState): arm then wheel joints; position (rad, wheels wrapped to
  (-pi, pi]), velocity (rad/s; wheels relative to the bus), effort (N m actually applied over the last step,
  after the actuator limits).
- <subtree> odometry (nav_msgs/Odometry), one per floating base: pose of the base link in the world frame,
  twist of the base link in the base-link frame.
- tf (tf2_msgs/TFMessage): world -> base link of every floating base (the target's frames carry its prefix).
- momentum/linear, momentum/angular (geometry_msgs/Vector3Stamped, frame world): total linear momentum
  (kg m/s) and angular momentum about the system centre of mass (kg m^2/s), seed 004 eqs. 2.9-2.12.
- clock (rosgraph_msgs/Clock): simulated time, for nodes running with use_sim_time.
- diagnostics (diagnostic_msgs/DiagnosticArray): the two command inputs and the simulation.
Subscribes to the ros2_control forward-command topics arm_effort_controller/commands and
reaction_wheel_effort_controller/commands (std_msgs/Float64MultiArray in the model's arm_joints /
reaction_wheels.joints order).
"""
from __future__ import annotations

import numpy as np

from space_robot_dynamics.errors import ConfigError, SimulationDivergedError
from space_robot_dynamics.simulation.simulator import Simulator
from space_robot_dynamics.simulation.system_momentum import momentum_state

from . import conversions as cv
from .command_input import CommandInput
from .message_types import MessageTypes
from .node_config import DynamicsNodeConfig
from .node_core import ACTUATE, MONITOR, SENSE, NodeCore
from .robot_state import BaseKinematics, check_odometry_topics, floating_subtrees


def applied_torques(simulator: Simulator) -> tuple[np.ndarray, np.ndarray]:
    """Arm and wheel torques (N m) the simulator applied over its last step, after its limits.

    Read from the simulator's latched command: Simulator.observe() also returns them but computes momentum
    and kinematics too, which is too slow for a 1 kHz joint_states stream.
    """
    return simulator.applied_torques


class DynamicsCore(NodeCore):
    name = "dynamics"

    def __init__(self, types: MessageTypes, simulator: Simulator, config: DynamicsNodeConfig):
        super().__init__(types)
        self.sim = simulator
        self.system = simulator.system
        self.config = config
        check_odometry_topics(self.system, config.odometry, "dynamics.topics.odometry")
        unknown = sorted(set(config.odometry_rates) - set(config.odometry))
        if unknown:
            raise ConfigError("dynamics.rates.odometry", f"no odometry topic for subtree(s) {unknown}")
        self.arm_input = CommandInput("arm_command", self.system.arm_joints, config.command_timeout)
        self.wheel_input = CommandInput("wheel_command", self.system.wheel_joints, config.command_timeout)
        self.joint_names = list(self.system.arm_joints + self.system.wheel_joints)
        slices = [self.system.q_slice(n) for n in self.joint_names]
        self._cos_q = np.array([s.start if s.stop - s.start == 2 else -1 for s in slices], dtype=int)
        self._angle_q = np.array([s.start for s in slices], dtype=int)
        self._continuous = self._cos_q >= 0
        self._joint_v = np.array([self.system.v_index(n) for n in self.joint_names], dtype=int)
        self._bases = BaseKinematics(self.system)
        self._momentum_data = self.system.model.createData()
        self.diverged: SimulationDivergedError | None = None
        self.steps = 0

        self.add_publication(config.joint_states, cv.JOINT_STATE)
        for name in sorted(config.odometry):
            self.add_publication(config.odometry[name], cv.ODOMETRY)
        self.add_publication(config.tf, cv.TF_MESSAGE)
        self.add_publication(config.clock, cv.CLOCK)
        self.add_publication(config.momentum_linear, cv.VECTOR3_STAMPED)
        self.add_publication(config.momentum_angular, cv.VECTOR3_STAMPED)
        self.add_publication(config.diagnostics, cv.DIAGNOSTIC_ARRAY)
        self.add_subscription(config.arm_command, cv.FLOAT64_MULTI_ARRAY,
                              lambda msg: self.arm_input.offer(msg, self.now()))
        if self.system.wheel_joints:
            self.add_subscription(config.wheel_command, cv.FLOAT64_MULTI_ARRAY,
                                  lambda msg: self.wheel_input.offer(msg, self.now()))
        self.add_timer("joint_states", 1.0 / config.state_rate, self.publish_joint_state, SENSE)
        for subtree in floating_subtrees(self.system):
            self.add_timer(f"odometry.{subtree.name}",
                           1.0 / config.odometry_rates.get(subtree.name, config.state_rate),
                           lambda _now, subtree=subtree: self.publish_odometry(subtree), SENSE)
        self.add_timer("tf", 1.0 / config.tf_rate, self.publish_tf, SENSE)
        self.add_timer("clock", 1.0 / config.clock_rate, self.publish_clock, SENSE)
        self.add_timer("momentum", 1.0 / config.momentum_rate, self.publish_momentum, SENSE)
        self.add_timer("diagnostics", 1.0 / config.diagnostics_rate, self.publish_diagnostics, MONITOR)
        self.add_timer("step", simulator.settings.dt, self.step, ACTUATE)

    def now(self) -> float:
        """Simulated time (s): the dynamics node is the clock of the simulation."""
        return self.sim.state.t

    # ---- physics -------------------------------------------------------------------------------
    def step(self, _now: float | None = None) -> None:
        """Advance one physics step with the active commands (zero after a command timeout)."""
        if self.diverged is not None:
            return
        t = self.now()
        try:
            self.sim.step(self.arm_input.active(t), self.wheel_input.active(t) if self.system.wheel_joints else None)
        except SimulationDivergedError as exc:
            self.diverged = exc       # keep the last finite state, report it, never die
            return
        self.steps += 1

    # ---- outputs -------------------------------------------------------------------------------
    def joint_state_message(self):
        s, system = self.sim.state, self.system
        position = s.q[self._angle_q]                 # revolute joints: the angle itself
        if self._continuous.any():                     # continuous joints: stored as (cos, sin)
            cos_q = self._cos_q[self._continuous]
            position[self._continuous] = np.arctan2(s.q[cos_q + 1], s.q[cos_q])
        arm, wheel = applied_torques(self.sim)
        effort = np.concatenate([arm, wheel]) if len(system.wheel_joints) else np.asarray(arm)
        return cv.joint_state(self.types, s.t, self.joint_names, position, s.v[self._joint_v], effort)

    def publish_joint_state(self, _now: float | None = None) -> None:
        self.publish(self.config.joint_states, self.joint_state_message())

    def publish_odometry(self, subtree) -> None:
        s = self.sim.state
        base = self._bases.compute_one(subtree, s.q, s.v)
        self.publish(self.config.odometry[subtree.name],
                     cv.odometry(self.types, s.t, self.config.world_frame, subtree.base_link, base.position,
                                 base.orientation_xyzw, base.linear_velocity, base.angular_velocity))

    def publish_state(self) -> None:
        """joint_states and every odometry now (the runtime's final sample)."""
        self.publish_joint_state()
        for subtree in floating_subtrees(self.system):
            self.publish_odometry(subtree)

    def publish_tf(self, _now: float | None = None) -> None:
        s = self.sim.state
        bases = self._bases.compute(s.q, s.v)
        transforms = [cv.transform_stamped(self.types, s.t, self.config.world_frame, subtree.base_link,
                                           bases[subtree.name].position, bases[subtree.name].orientation_xyzw)
                      for subtree in floating_subtrees(self.system)]
        self.publish(self.config.tf, cv.tf_message(self.types, transforms))

    def publish_clock(self, _now: float | None = None) -> None:
        self.publish(self.config.clock, cv.clock(self.types, self.sim.state.t))

    def publish_momentum(self, _now: float | None = None) -> None:
        s = self.sim.state
        h = momentum_state(self.system.model, self._momentum_data, s.q, s.v)
        self.publish(self.config.momentum_linear, cv.vector3_stamped(self.types, s.t, self.config.world_frame,
                                                                     h.linear))
        self.publish(self.config.momentum_angular, cv.vector3_stamped(self.types, s.t, self.config.world_frame,
                                                                      h.angular))

    def publish_diagnostics(self, _now: float | None = None) -> None:
        t = self.now()
        statuses = []
        inputs = [self.arm_input] + ([self.wheel_input] if self.system.wheel_joints else [])
        for command in inputs:
            level, message, values = command.status(t)
            statuses.append(cv.diagnostic_status(self.types, level, f"{self.name}: {command.name}", message,
                                                 self.name, values))
        if self.diverged is None:
            sim_status = (cv.OK, "stepping", [("time_s", t), ("steps", self.steps)])
        else:
            sim_status = (cv.ERROR, str(self.diverged), [("time_s", t), ("steps", self.steps)])
        statuses.append(cv.diagnostic_status(self.types, sim_status[0], f"{self.name}: simulation", sim_status[1],
                                             self.name, sim_status[2]))
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, t, statuses))
