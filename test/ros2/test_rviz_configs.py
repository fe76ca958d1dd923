"""Every shipped RViz configuration against the graph that uses it, under a real ROS 2 Humble and headless (README,
RViz: RViz shows what the graph serves, so every display must find its topic and frames there):
for each shipped scenario, its launch (the simulation, and for the bench arm also the real-arm launch with its
viewers) runs without RViz while these checks read the scenario's configuration:
- the Fixed Frame and every frame the TF display names are in tf (tf2, transformable to the fixed frame);
- every enabled display's topic is published with a message type that display accepts, latched exactly where the
  display asks for transient-local, and a message arrives with the display's QoS;
- every text marker has a non-zero letter height (scale.z) and space width (scale.x).
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from xml.etree import ElementTree

import pytest
import yaml
from ros2_available import require_ros2

require_ros2()

import rclpy  # noqa: E402
from rclpy.duration import Duration  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.time import Time  # noqa: E402
from rosidl_runtime_py.utilities import get_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_ros import Buffer, TransformListener  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from space_robot_scenario import load_scenario, shipped_scenarios  # noqa: E402
from space_robot_scenario.robot_descriptions import robot_descriptions  # noqa: E402

MESSAGE_TIMEOUT = 30.0    # s for the first message of a display's topic
# displays of what a goal brings (the planned path, the goal pose), when the scenario's goal comes later than
# MESSAGE_TIMEOUT of simulated time (envisat_capture's at 45 s, after its approach): publisher and type checked, not a
# message
GOAL_TOPICS = ("/visualization/planned_end_effector_path", "/visualization/goal_pose")
# display class -> message types it subscribes to (rviz_default_plugins, Humble)
ACCEPTS = {
    "RobotModel": {"std_msgs/msg/String"}, "Odometry": {"nav_msgs/msg/Odometry"},
    "Marker": {"visualization_msgs/msg/Marker"}, "MarkerArray": {"visualization_msgs/msg/MarkerArray"},
    "Path": {"nav_msgs/msg/Path"}, "Pose": {"geometry_msgs/msg/PoseStamped"},
    "Effort": {"sensor_msgs/msg/JointState"}, "Wrench": {"geometry_msgs/msg/WrenchStamped"},
}
NO_TOPIC = {"Grid", "TF", "Axes"}
TEXT_VIEW_FACING, ADD = 9, 0
ARM = [f"right_j{i}" for i in range(7)]


def display_qos(qos: dict) -> QoSProfile:
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=int(qos.get("Depth", 5)),
                      reliability=ReliabilityPolicy.BEST_EFFORT if qos.get("Reliability Policy") == "Best Effort"
                      else ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if qos.get("Durability Policy") == "Transient Local"
                      else DurabilityPolicy.VOLATILE)


@contextmanager
def tf_buffer(probe):
    """A tf2 Buffer filled by the probe's node (spun by the probe's thread: the listener gets none of its own); the
    listener's subscriptions are destroyed afterwards, between two spins (Probe.destroy)."""
    buffer = Buffer()
    listener = TransformListener(buffer, probe.node, spin_thread=False)
    try:
        yield buffer
    finally:
        probe.destroy(listener.tf_sub, listener.tf_static_sub)


def wait_for_transforms(probe, buffer: Buffer, target: str, frames, tag: str) -> None:
    """Until each of `frames` is transformable to `target` (the latest transform, as RViz draws it)."""
    for frame in frames:
        probe.wait_for(lambda f=frame: buffer.can_transform(target, f, Time(), Duration(seconds=0.0)),
                       MESSAGE_TIMEOUT, f"{tag}: tf {target} -> {frame}")


def check_config(probe, config_path, tag: str, late_topics=()) -> int:
    """The checks of the module docstring; returns how many displays were checked. `late_topics`: topics whose first
    message is not waited for (GOAL_TOPICS of a goal that comes late)."""
    manager = yaml.safe_load(config_path.read_text())["Visualization Manager"]
    node = probe.node
    fixed = manager["Global Options"]["Fixed Frame"]
    heard: dict[str, list] = {}
    subscriptions = []
    displays = [d for d in manager["Displays"]
                if d.get("Enabled", True) and d["Class"].split("/")[-1] not in NO_TOPIC]
    try:
        for display in displays:
            kind = display["Class"].split("/")[-1]
            qos = display.get("Topic") or display.get("Description Topic")
            topic = qos["Value"]
            publishers = probe.wait_for(lambda t=topic: node.get_publishers_info_by_topic(t), MESSAGE_TIMEOUT,
                                        f"{tag}: a publisher of {topic} ({display['Name']})")
            types = {info.topic_type for info in publishers}
            assert types & ACCEPTS[kind], (display["Name"], types)
            latched = {info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for info in publishers}
            assert latched == {qos["Durability Policy"] == "Transient Local"}, (display["Name"], latched)
            msgtype = next(t for t in types if t in ACCEPTS[kind])
            heard.setdefault(topic, [])
            subscriptions.append(node.create_subscription(get_message(msgtype), topic,
                                                          lambda msg, t=topic: heard[t].append(msg),
                                                          display_qos(qos)))
        for display in displays:
            topic = (display.get("Topic") or display.get("Description Topic"))["Value"]
            if topic in late_topics:
                continue
            probe.wait_for(lambda t=topic: heard[t], MESSAGE_TIMEOUT, f"{tag}: a message on {topic}")
    finally:
        probe.destroy(*subscriptions)
    texts = [m for messages in heard.values() for msg in messages
             for m in getattr(msg, "markers", [msg] if hasattr(msg, "text") else [])
             if m.type == TEXT_VIEW_FACING and m.action == ADD]
    assert all(m.scale.x > 0 and m.scale.z > 0 for m in texts), [(m.ns, m.scale) for m in texts]
    # frames: the fixed frame and every frame the TF display names, transformable to the fixed frame
    tf_display = next(d for d in manager["Displays"] if d["Class"].endswith("/TF"))
    frames = [fixed] + [f for f, v in tf_display["Frames"].items() if isinstance(v, dict) and v.get("Value")]
    with tf_buffer(probe) as buffer:
        wait_for_transforms(probe, buffer, fixed, frames, tag)
    return len(displays)


@pytest.mark.parametrize("name", shipped_scenarios())
def test_the_scenarios_rviz_config_is_served_by_its_simulation(name, probe, share_dir, simulation_launch):
    scenario = load_scenario(name)
    goal = scenario.trajectory_goal or scenario.capture_goal
    late = GOAL_TOPICS if goal is not None and goal.publish_at > MESSAGE_TIMEOUT else ()
    with simulation_launch(name) as launch:
        launch.wait_for_nodes_running(1, "the launch")
        assert check_config(probe, share_dir / "rviz" / scenario.rviz.name, name, late) >= 6


@contextmanager
def intera_joint_states(probe):
    """Intera's /robot/joint_states (head_pan and the arm, at 100 Hz) faked by the probe's node, as the real robot
    publishes them for sawyer.launch.py; the timer and the publisher are destroyed afterwards."""
    states = probe.node.create_publisher(JointState, "/robot/joint_states", 10)

    def publish_state():
        msg = JointState(name=["head_pan"] + ARM, position=[0.0, 0.0, -1.0, 0.0, 1.5, 0.0, 0.5, 0.0],
                         velocity=[0.0] * 8, effort=[0.0] * 8)
        msg.header.stamp = probe.node.get_clock().now().to_msg()
        states.publish(msg)
    timer = probe.node.create_timer(0.01, publish_state)
    try:
        yield
    finally:
        probe.destroy(timer, states)


def test_the_real_arm_viewers_serve_the_sawyer_config(probe, share_dir, ros2_launch):
    """sawyer.launch.py viewers:=true with Intera's joint states faked: what rviz/sawyer.rviz shows is there."""
    with ros2_launch("sawyer.launch.py", "viewers:=true") as launch, intera_joint_states(probe):
        launch.wait_for_nodes_running(3, "the controller, the adapter and the visualization node")
        time.sleep(1.0)
        # a planner's goal, as MoveIt would send one: the planned path and the goal pose follow it
        goals = probe.node.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", 10)
        probe.wait_for(lambda: goals.get_subscription_count() >= 2, 30, "the controller and the visualization node")
        goal = JointTrajectory(joint_names=ARM, points=[JointTrajectoryPoint(
            positions=[0.1, -0.9, 0.1, 1.4, 0.1, 0.4, 0.1], time_from_start=Duration(seconds=2.0).to_msg())])
        goals.publish(goal)
        assert check_config(probe, share_dir / "rviz" / "sawyer.rviz", "sawyer.launch.py") >= 6
    assert rclpy.ok()


def test_while_start_delay_holds_the_robots_are_in_tf(probe, simulation_launch):
    """Under RViz the launch holds simulated time at 0 for start_delay s; RViz draws every link of every robot from
    tf, so each must be transformable to world while it holds (robot_state_publisher ignores a state at t = 0
    unless told to ignore timestamps). The flexible servicer also has the beams' tip joints."""
    name = "servicer_flexible"
    links = [description.frame_prefix + link.get("name")
             for description in robot_descriptions(load_scenario(name).model)
             for link in ElementTree.fromstring(description.urdf).iter("link")]
    with simulation_launch(name, "start_delay:=120") as launch, tf_buffer(probe) as buffer:
        launch.wait_for_nodes_running(1, "the launch")
        wait_for_transforms(probe, buffer, "world", links, "while simulated time is held")
        assert len(links) > 10
