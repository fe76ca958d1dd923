"""launch_testing: start launch/simulation.launch.py (without RViz) and check the nodes talk to each other.

Needs ROS 2 (rclpy, launch_testing, robot_state_publisher, xacro and this package installed with colcon): part
of `make test-ros2`, or on its own
    colcon build && source install/setup.bash && launch_test test/ros2/test_launch_simulation.py
Elsewhere the whole file is skipped at collection with the reason below. After the test, launch_testing stops
the launch with SIGINT: every process must end with status 0.
"""
import time
import unittest

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS 2 (rclpy) is not installed: the launch test needs a ROS 2 "
                                            "environment; the standalone runtime tests cover the node cores")
launch_testing = pytest.importorskip("launch_testing", reason="launch_testing (ROS 2) is not installed")

from ament_index_python.packages import get_package_share_directory  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402

WAIT = 30.0        # s: xacro expansion, model building and DDS discovery on a slow CI machine
EXPECTED = {       # topic -> (package.msg module, class)
    "/joint_states": ("sensor_msgs.msg", "JointState"),
    "/base/odom": ("nav_msgs.msg", "Odometry"),
    "/target/odom": ("nav_msgs.msg", "Odometry"),
    "/clock": ("rosgraph_msgs.msg", "Clock"),
    "/arm_effort_controller/commands": ("std_msgs.msg", "Float64MultiArray"),
    "/reaction_wheel_effort_controller/commands": ("std_msgs.msg", "Float64MultiArray"),
    "/diagnostics": ("diagnostic_msgs.msg", "DiagnosticArray"),
    "/holonomy/status": ("std_msgs.msg", "Float64MultiArray"),
    "/tf": ("tf2_msgs.msg", "TFMessage"),
}


@pytest.mark.launch_test
def generate_test_description():
    share = get_package_share_directory("space_robot")
    simulation = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(f"{share}/launch/simulation.launch.py"),
        launch_arguments={"rviz": "false"}.items())
    return LaunchDescription([simulation, launch_testing.actions.ReadyToTest()])


class TestTopicsFlow(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node("space_robot_launch_probe")

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.try_shutdown()

    def test_every_topic_carries_its_type(self):
        import importlib

        received = {}
        subscriptions = []
        for topic, (module, name) in EXPECTED.items():
            cls = getattr(importlib.import_module(module), name)
            subscriptions.append(self.node.create_subscription(
                cls, topic, lambda msg, topic=topic: received.setdefault(topic, msg), 10))
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and len(received) < len(EXPECTED):
            rclpy.spin_once(self.node, timeout_sec=0.1)
        self.assertEqual(sorted(EXPECTED), sorted(received))
        joints = received["/joint_states"]
        self.assertEqual(list(joints.name[:7]), [f"right_j{i}" for i in range(7)])
        self.assertEqual(received["/base/odom"].child_frame_id, "base_link")
        self.assertEqual(len(received["/arm_effort_controller/commands"].data), 7)
        for subscription in subscriptions:
            self.node.destroy_subscription(subscription)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_nodes_exit_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[launch_testing.asserts.EXIT_OK])
