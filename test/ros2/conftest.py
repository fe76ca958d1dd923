"""Real ROS 2 tests (issue 16): the nodes as ROS users run them, under a ROS 2 Humble with this package built
by colcon. `make test-ros2` (test/ros2/run_tests.sh) builds the workspace and runs them; under plain `make test`
every module here is skipped with the reason (no rclpy, or the package not built and sourced).

Each module calls ros2_available.require_ros2() before importing rclpy. The session has one rclpy context and one probe
node (ros2_probe.Probe); every process a test starts runs in its own group and is stopped by the test.
"""
from __future__ import annotations

import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def ros_context():
    import rclpy

    rclpy.init()
    yield
    rclpy.try_shutdown()
    subprocess.run(["ros2", "daemon", "stop"], capture_output=True, timeout=30)


@pytest.fixture(scope="session")
def probe(ros_context):
    from ros2_probe import Probe

    node = Probe()
    yield node
    node.close()


@pytest.fixture(scope="session")
def share_dir():
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory("space_robot"))


@pytest.fixture(scope="session")
def ros_env():
    """The environment for ros2 commands: this one (ROS_DOMAIN_ID set by run_tests.sh), unbuffered output."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
