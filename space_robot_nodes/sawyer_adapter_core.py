"""Sawyer command adapter core: ros2_control-style arm effort commands -> Intera JointCommand in torque mode.

Subscribes arm_effort_controller/commands (std_msgs/Float64MultiArray, in the configured `joints` order,
right_j0..right_j6) and publishes, at the control rate, intera_core_msgs/JointCommand with mode TORQUE_MODE,
names = joints and effort = the last valid command, on robot/limb/right/joint_command. It also keeps
robot/limb/right/joint_command_timeout (std_msgs/Float64, s) fed, and, when configured, publishes
robot/limb/right/suppress_gravity_compensation (std_msgs/Empty) faster than Intera's 0.2 s timeout.
Figures and interfaces: ../shared/reference/sawyer_parameters.md (Intera SDK).

Safety: a malformed command is rejected with an ERROR diagnostic and the last valid one is kept. When no
valid command arrived within command_timeout: `hold_position` stops publishing, so Intera leaves torque
mode after its joint_command_timeout and holds the arm in position mode; `zero_torque` keeps publishing
zero effort (the arm then floats on Intera's gravity compensation). Nothing is published before the first
valid command.
"""
from __future__ import annotations

import numpy as np

from space_robot_scenario.node_config import SawyerAdapterConfig

from . import conversions as cv
from .command_input import CommandInput
from .message_types import INTERA_JOINT_COMMAND, MessageTypes
from .node_core import ACTUATE, MONITOR, NodeCore

TORQUE_MODE = 3   # intera_core_msgs/JointCommand.TORQUE_MODE (used if the class lacks the constant)


class SawyerAdapterCore(NodeCore):
    name = "sawyer_command_adapter"

    def __init__(self, types: MessageTypes, config: SawyerAdapterConfig):
        super().__init__(types)
        self.config = config
        self.command = CommandInput("arm_command", config.joints, config.command_timeout)
        self.torque_mode = int(getattr(types.cls(INTERA_JOINT_COMMAND), "TORQUE_MODE", TORQUE_MODE))
        self.published = 0
        self.add_subscription(config.arm_command, cv.FLOAT64_MULTI_ARRAY,
                              lambda msg: self.command.offer(msg, self.now()))
        self.add_publication(config.joint_command, INTERA_JOINT_COMMAND)
        self.add_publication(config.joint_command_timeout, cv.FLOAT64)
        if config.suppress_gravity_compensation:
            self.add_publication(config.suppress_gravity_topic, cv.EMPTY)
            self.add_timer("suppress_gravity", 1.0 / config.suppress_rate, self.publish_suppress, MONITOR,
                           ("nodes", "sawyer_adapter.suppress_rate"))
        self.add_publication(config.diagnostics, cv.DIAGNOSTIC_ARRAY)
        self.add_timer("command", 1.0 / config.rate, self.forward, ACTUATE, ("nodes", "sawyer_adapter.rate"))
        self.add_timer("timeout", 1.0 / config.intera_timeout_rate, self.publish_timeout, MONITOR,
                       ("nodes", "sawyer_adapter.intera_timeout_rate"))
        self.add_timer("diagnostics", 1.0 / config.diagnostics_rate, self.publish_diagnostics, MONITOR,
                       ("nodes", "sawyer_adapter.diagnostics_rate"))

    def joint_command(self, now: float, effort: np.ndarray):
        return self.types.new(INTERA_JOINT_COMMAND, header=cv.header(self.types, now), mode=self.torque_mode,
                              names=list(self.config.joints), effort=self.types.float64_sequence(effort))

    def forward(self, now: float) -> None:
        if self.command.received_at is None:
            return
        effort = self.command.active(now)
        if self.command.timed_out(now) and self.config.timeout_behaviour == "hold_position":
            return
        self.publish(self.config.joint_command, self.joint_command(now, effort))
        self.published += 1

    def publish_timeout(self, _now: float) -> None:
        self.publish(self.config.joint_command_timeout, cv.float64(self.types, self.config.intera_command_timeout))

    def publish_suppress(self, _now: float) -> None:
        self.publish(self.config.suppress_gravity_topic, cv.empty(self.types))

    def publish_diagnostics(self, now: float) -> None:
        level, message, values = self.command.status(now)
        if self.command.timed_out(now) and self.command.received_at is not None:
            message += ("; not publishing: Intera holds position" if self.config.timeout_behaviour == "hold_position"
                        else "; publishing zero effort")
        values = values + [("joint_commands_published", self.published),
                           ("gravity_compensation_suppressed", self.config.suppress_gravity_compensation)]
        status = cv.diagnostic_status(self.types, level, f"{self.name}: arm command", message, self.name, values)
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, now, [status]))
