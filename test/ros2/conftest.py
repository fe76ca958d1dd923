"""Real ROS 2 tests: the nodes as ROS users run them, under a ROS 2 Humble with this package built by colcon (README,
"Tests and benchmark under real ROS 2"). `make test-ros2` (test/ros2/ros2_workspace.sh) builds the workspace and runs
them; under plain `make test` every module here is skipped with the reason (no rclpy, or the package not built and
sourced).

Each module calls ros2_available.require_ros2() before importing rclpy. The session has one rclpy context and one probe
node (ros2_probe.Probe); every process a test starts runs in its own group and is stopped by the test
(ros2_processes: the fixtures ros2_launch and simulation_launch below start launches).
"""
from __future__ import annotations

import os
import subprocess

import pytest

# the shared checks of ros2_processes (RosLaunch.assert_ended_cleanly, ...) report their operands on failure as the
# same asserts written in a test module do
pytest.register_assert_rewrite("ros2_processes")


@pytest.fixture(scope="session")
def ros_context():
    """One rclpy context for the session, and the ros2 CLI daemon stopped at its end.

    test_launch_simulation.py (launch_testing) calls rclpy.init() and rclpy.try_shutdown() itself, so it must run
    before any module has used this context, and its name sorts before every other module's on purpose: run later,
    its rclpy.init() would find the context taken and its try_shutdown() would end the session's.
    The first ros2 CLI call of the run (a launch, `ros2 bag info`) started the CLI daemon, which would otherwise
    outlive the run in the run's ROS_DOMAIN_ID (../shared/ros2/README.md, pitfalls); ros2_workspace.sh stops it
    again on exit, for a run that did not get here."""
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
    """The environment for ros2 commands: this one (ROS_DOMAIN_ID set by ros2_workspace.sh), unbuffered output."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


@pytest.fixture
def listen_for_test(probe):
    """listen_for_test({topic: (message class, qos)}): the probe keeps what each topic carries from now on, and
    forgets the topic after the test, so that a later test reads (e.g. /diagnostics) from its own graph only."""
    topics = []

    def listen(listened: dict) -> None:
        for topic, (kind, qos) in listened.items():
            probe.listen(topic, kind, qos)
            topics.append(topic)
    yield listen
    for topic in topics:
        probe.forget(topic)


@pytest.fixture
def ros2_launch(ros_env, tmp_path):
    """ros2_launch(launch file, *arguments) starts `ros2 launch space_robot <launch file> <arguments>`
    (ros2_processes.RosLaunch, its output in the test's tmp_path). The test stops it with a Ctrl-C (`with launch:`)
    and checks how it ended; one still running after the test (stopped nowhere) is killed with its process group."""
    from ros2_processes import RosLaunch

    launches = []

    def start(launch_file: str, *arguments: str) -> RosLaunch:
        launches.append(RosLaunch(launch_file, arguments, tmp_path / f"launch-{len(launches) + 1}.log", ros_env))
        return launches[-1]
    yield start
    for launch in launches:
        launch.kill()


@pytest.fixture
def simulation_launch(ros2_launch, share_dir):
    """simulation_launch(scenario, *arguments) starts `ros2 launch space_robot simulation.launch.py
    scenario:=<share>/config/scenarios/<scenario>.yaml rviz:=false <arguments>`: a shipped scenario's graph without
    RViz (the tests read what RViz would show headless)."""
    def start(scenario: str, *arguments: str):
        path = share_dir / "config" / "scenarios" / f"{scenario}.yaml"
        return ros2_launch("simulation.launch.py", f"scenario:={path}", "rviz:=false", *arguments)
    return start
