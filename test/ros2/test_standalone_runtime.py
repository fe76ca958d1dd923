"""The standalone runtime under ROS 2: `ros2 run space_robot space-robot-sim --no-plots` where matplotlib cannot
be imported, and the bag it writes opened by `ros2 bag info`, replayed by `ros2 bag play` and read by rosbag2_py."""
from __future__ import annotations

import re
import subprocess
import time

import pytest
from ros2_available import require_ros2

require_ros2()

from ros2_processes import RosCommand  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from space_robot_scenario.node_config import THROTTLED_SUFFIX  # noqa: E402

DURATION = 1.0          # s simulated


@pytest.fixture(scope="module")
def standalone_bag(tmp_path_factory, ros_env):
    """A run without plots, with an importable-nowhere matplotlib (a package on PYTHONPATH that refuses)."""
    directory = tmp_path_factory.mktemp("standalone")
    hidden = directory / "no_matplotlib" / "matplotlib"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('matplotlib is hidden by the test')\n")
    env = {**ros_env, "PYTHONPATH": f"{hidden.parent}:{ros_env.get('PYTHONPATH', '')}"}
    out = directory / "run"
    result = subprocess.run(["ros2", "run", "space_robot", "space-robot-sim", "--no-plots", "--duration",
                             str(DURATION), "--out", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert not list(out.glob("*.png")) and (out / "summary.json").is_file()
    return out / "bag"


def test_a_run_without_plots_needs_no_plotting_library(standalone_bag):
    assert (standalone_bag / "metadata.yaml").is_file()


def test_ros2_bag_info_lists_the_runs_topics(standalone_bag, ros_env):
    info = subprocess.run(["ros2", "bag", "info", "-s", "mcap", str(standalone_bag)], capture_output=True, text=True,
                          timeout=60, env=ros_env)
    assert info.returncode == 0, info.stderr
    # the runtime records its topics under their relative names (it has no namespace); play resolves them
    counts = {m["topic"].lstrip("/"): int(m["count"]) for m in re.finditer(
        r"Topic: (?P<topic>\S+) \| Type: \S+ \| Count: (?P<count>\d+)", info.stdout)}
    assert counts["joint_states"] == round(DURATION * 100) + 1         # recorded at 100 Hz, plus the final state
    assert counts["robot_description"] == 1 and counts["joint_states" + THROTTLED_SUFFIX] == round(DURATION * 50)


def test_rosbag2_py_reads_every_message(standalone_bag):
    import rosbag2_py
    from rclpy.serialization import deserialize_message
    from rosidl_runtime_py.utilities import get_message

    reader = rosbag2_py.SequentialReader()
    reader.open(rosbag2_py.StorageOptions(uri=str(standalone_bag), storage_id="mcap"),
                rosbag2_py.ConverterOptions(input_serialization_format="cdr", output_serialization_format="cdr"))
    types = {topic.name: topic.type for topic in reader.get_all_topics_and_types()}
    count = 0
    while reader.has_next():
        topic, data, _t = reader.read_next()
        deserialize_message(data, get_message(types[topic]))      # every message parses as its ROS 2 type
        count += 1
    assert count > 500 and types["joint_states"] == "sensor_msgs/msg/JointState"


def test_ros2_bag_play_replays_it(standalone_bag, probe, ros_env, tmp_path):
    probe.listen("/joint_states", JointState, 200)
    start = time.monotonic()
    play = RosCommand(["ros2", "bag", "play", "-s", "mcap", str(standalone_bag)], tmp_path / "play.log", ros_env)
    try:
        assert play.wait(60) == 0, play.output()[-2000:]
    finally:
        play.kill()
    replayed = probe.messages("/joint_states", since=start)
    probe.forget("/joint_states")
    assert len(replayed) >= 0.9 * (round(DURATION * 100) + 1)
    assert replayed[0].name[0] == "right_j0"
