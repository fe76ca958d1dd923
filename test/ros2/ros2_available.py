"""Whether the real ROS 2 tests can run here: rclpy, and this package built by colcon and sourced."""
from __future__ import annotations

import pytest


def require_ros2():
    """Skip the calling module (with the reason) unless rclpy and the colcon-built space_robot are there."""
    pytest.importorskip("rclpy", reason="ROS 2 (rclpy) is not installed: the real ROS 2 tests run with "
                                        "`make test-ros2` under a ROS 2 Humble")
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        get_package_share_directory("space_robot")
    except PackageNotFoundError:
        pytest.skip("space_robot is not built with colcon and sourced (make test-ros2 does both)",
                    allow_module_level=True)
