"""Scenario player core: publishes a scenario's goals at their times, as a user or a planner would, and its
open-loop torque profile, if it has one, in place of a controller.

- arm_controller/joint_trajectory (trajectory_msgs/JointTrajectory), stamped to start START_DELAY after its
  publish_at time (header.stamp, as the joint_trajectory_controller reads it): the motion then starts at the
  same simulated instant however long the message takes to arrive (under ROS 2 a few ms; at once in the
  lockstep runtime), as a planner stamps a trajectory slightly ahead of its delivery;
- attitude_controller/setpoint (geometry_msgs/QuaternionStamped, frame world);
- gripper_controller/command (std_msgs/Bool: true close, false open) at each gripper goal's time (a capture's
  closing among them, capture_plan.py);
- cartesian_controller/goal (geometry_msgs/PoseStamped) at each Cartesian goal's time (a capture's Cartesian
  approach, capture_plan.py);
- arm_effort_controller/commands (std_msgs/Float64MultiArray, the model's arm_joints order) at the profile's
  rate: each command is the profile's torque at the middle of its period (scenario.TorqueProfile), zero
  outside [start, stop).
Each goal is published once, at the first timer tick at or after its publish_at time at which its topic has a
subscriber (`wanted`): under ROS 2 a controller that connects after a goal's time gets the goal late instead of
never (in the lockstep runtime the controller is always there).
"""
from __future__ import annotations

import math

from space_robot_scenario.goals import START_DELAY, AttitudeGoal, TrajectoryGoal
from space_robot_scenario.node_config import ControllerNodeConfig
from space_robot_scenario.torque_profile import TorqueProfile

from . import conversions as cv
from . import message_builders as mb
from .message_types import MessageTypes
from .node_core import COMMAND, NodeCore

# Slack (s) when comparing a tick time with a goal time: tick times are sums of the physics step.
_TIME_SLACK = 1e-9


def trajectory_message(types: MessageTypes, goal: TrajectoryGoal):
    """The JointTrajectory the player publishes for `goal` (starting START_DELAY after goal.publish_at)."""
    return cv.joint_trajectory(types, goal.publish_at + START_DELAY, goal.joint_names, goal.points)


class ScenarioPlayerCore(NodeCore):
    name = "scenario_player"

    def __init__(self, types: MessageTypes, trajectory: TrajectoryGoal | None, attitude: AttitudeGoal | None,
                 topics: ControllerNodeConfig, period: float, torque_profile: TorqueProfile | None = None,
                 arm_joints: tuple = (), gripper_goals: tuple = (), cartesian_goals: tuple = ()):
        super().__init__(types)
        self.trajectory, self.attitude, self.topics = trajectory, attitude, topics
        self.gripper_goals = tuple(gripper_goals)
        self.cartesian_goals = tuple(cartesian_goals)
        self.sent: set[str] = set()
        self._next_at = self._next_goal_time()
        if trajectory is not None:
            self.add_publication(topics.trajectory, cv.JOINT_TRAJECTORY)
        if attitude is not None:
            self.add_publication(topics.attitude_setpoint, cv.QUATERNION_STAMPED)
        if self.gripper_goals:
            self.add_publication(topics.gripper_command, cv.BOOL)
        if self.cartesian_goals:
            self.add_publication(topics.cartesian_goal, cv.POSE_STAMPED)
        if trajectory is not None or attitude is not None or self.gripper_goals or self.cartesian_goals:
            self.add_timer("goals", period, self.play, COMMAND, ("scenario", "simulation.dt"))
        self.torque_profile = torque_profile
        if torque_profile is not None:
            # (row in the command, amplitude, angular frequency, phase, offset) per joint with a sinusoid
            self._sinusoids = [(list(arm_joints).index(name), s.amplitude, 2.0 * math.pi / s.period, s.phase,
                                s.offset) for name, s in torque_profile.sinusoids.items()]
            self._command = mb.Float64MultiArrayBuilder(types, len(arm_joints), "effort")
            self._zeros = [0.0] * len(arm_joints)
            self.add_publication(topics.arm_command, cv.FLOAT64_MULTI_ARRAY)
            self.add_timer("torque_profile", 1.0 / torque_profile.rate, self.play_torques, COMMAND,
                           ("scenario", "torque_profile.rate"))

    def torques(self, now: float) -> list[float]:
        """The profile's command at the timer tick `now` (N m, arm_joints order): its value at mid-period."""
        profile = self.torque_profile
        t = now + 0.5 / profile.rate
        command = list(self._zeros)
        if t >= profile.start and (profile.stop is None or t < profile.stop):
            for row, amplitude, omega, phase, offset in self._sinusoids:
                command[row] = amplitude * math.sin(omega * t + phase) + offset
        return command

    def play_torques(self, now: float) -> None:
        self.publish(self.topics.arm_command, self._command.build(self.torques(now)))

    def play(self, now: float) -> None:
        if now < self._next_at:              # nothing due: the common case, every tick
            return
        if self.attitude is not None and "attitude" not in self.sent and now >= self.attitude.publish_at - _TIME_SLACK \
                and self.wanted(self.topics.attitude_setpoint):
            self.publish(self.topics.attitude_setpoint, cv.quaternion_stamped(
                self.types, now, self.topics.world_frame, self.attitude.orientation_xyzw))
            self.sent.add("attitude")
        goal = self.trajectory
        if goal is not None and "trajectory" not in self.sent and now >= goal.publish_at - _TIME_SLACK \
                and self.wanted(self.topics.trajectory):
            self.publish(self.topics.trajectory, trajectory_message(self.types, goal))
            self.sent.add("trajectory")
        for k, gripper in enumerate(self.gripper_goals):
            key = f"gripper{k}"
            if key not in self.sent and now >= gripper.at - _TIME_SLACK and self.wanted(self.topics.gripper_command):
                self.publish(self.topics.gripper_command, cv.boolean(self.types, gripper.close))
                self.sent.add(key)
        for k, cartesian in enumerate(self.cartesian_goals):
            key = f"cartesian{k}"
            if key not in self.sent and now >= cartesian.at - _TIME_SLACK and self.wanted(self.topics.cartesian_goal):
                self.publish(self.topics.cartesian_goal, cv.pose_stamped(
                    self.types, now, cartesian.frame, cartesian.position, cartesian.orientation_xyzw))
                self.sent.add(key)
        self._next_at = self._next_goal_time()

    def _next_goal_time(self) -> float:
        """Earliest publish_at (less the slack) of the goals not sent yet; inf when all are out."""
        times = [goal.publish_at - _TIME_SLACK for key, goal in (("attitude", self.attitude),
                                                                 ("trajectory", self.trajectory))
                 if goal is not None and key not in self.sent]
        times += [g.at - _TIME_SLACK for k, g in enumerate(self.gripper_goals) if f"gripper{k}" not in self.sent]
        times += [g.at - _TIME_SLACK for k, g in enumerate(self.cartesian_goals) if f"cartesian{k}" not in self.sent]
        return min(times, default=float("inf"))

    @property
    def done(self) -> bool:
        return len(self.sent) == (self.trajectory is not None) + (self.attitude is not None) + len(self.gripper_goals) \
            + len(self.cartesian_goals)
