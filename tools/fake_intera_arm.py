"""A stand-in for Intera on the bench, for `make rviz-shots`: /robot/joint_states at 100 Hz (with head_pan, stamped
now, efforts as a gravity-loaded arm would show them), moving from the neutral pose to GOAL over MOVE s once START
s have passed, and that goal sent to the controller as a planner would (arm_controller/joint_trajectory)."""
from __future__ import annotations

import math
import time

import rclpy
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

ARM = [f"right_j{i}" for i in range(7)]
NEUTRAL = [0.0, -1.18, 0.0, 2.18, 0.0, 0.57, 3.3]      # rad, Intera's neutral pose (config/scenarios/sawyer_lab.yaml)
GOAL = [0.3, -1.0, 0.1, 2.0, 0.1, 0.7, 3.2]            # rad, the scenario's goal
EFFORT = [0.0, 12.0, -4.0, 6.0, 0.5, 1.0, 0.2]         # N m
START, MOVE = 12.0, 3.0                                # s


def main() -> None:
    rclpy.init()
    node = rclpy.create_node("fake_intera")
    states = node.create_publisher(JointState, "/robot/joint_states", 10)
    goals = node.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", 10)
    began = time.monotonic()
    sent = False
    try:
        while rclpy.ok():
            elapsed = time.monotonic() - began
            s = min(1.0, max(0.0, (elapsed - START) / MOVE))
            blend = 0.5 - 0.5 * math.cos(math.pi * s)
            arm = [a + blend * (b - a) for a, b in zip(NEUTRAL, GOAL)]
            msg = JointState(name=["head_pan"] + ARM, position=[0.0] + arm, velocity=[0.0] * 8, effort=[0.0] + EFFORT)
            msg.header.stamp = node.get_clock().now().to_msg()
            states.publish(msg)
            if not sent and elapsed >= START:
                goals.publish(JointTrajectory(joint_names=ARM, points=[JointTrajectoryPoint(
                    positions=GOAL, time_from_start=Duration(sec=int(MOVE)))]))
                sent = True
            time.sleep(0.01)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
