"""The shipped RViz configs against what the standalone runtime publishes (the same node cores as under ROS 2):
every enabled display's topic is published with a type that display accepts and the durability it asks for,
and every frame it names exists in tf. The real-ROS 2 stage checks the same against a launched graph."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario, shipped_scenarios

ROOT = Path(__file__).resolve().parents[1]
# display class -> message types it subscribes to (rviz_default_plugins, Humble)
ACCEPTS = {
    "RobotModel": {"std_msgs/msg/String"}, "Odometry": {"nav_msgs/msg/Odometry"},
    "Marker": {"visualization_msgs/msg/Marker"}, "MarkerArray": {"visualization_msgs/msg/MarkerArray"},
    "Path": {"nav_msgs/msg/Path"}, "Pose": {"geometry_msgs/msg/PoseStamped"},
    "Effort": {"sensor_msgs/msg/JointState"}, "PoseArray": {"geometry_msgs/msg/PoseArray"},
    "Wrench": {"geometry_msgs/msg/WrenchStamped"},
}
NO_TOPIC = {"Grid", "TF", "Axes"}


def frames_published(published) -> set:
    frames = set()
    for topic, msg in published:
        if topic in ("tf", "tf_static"):
            for t in msg.transforms:
                frames |= {t.header.frame_id, t.child_frame_id}
    return frames


def test_every_rviz_config_is_some_scenarios():
    used = {load_scenario(name).rviz.name for name in shipped_scenarios()}
    assert set(SLOW_GRAPHS) <= set(shipped_scenarios())
    assert used == {p.name for p in (ROOT / "rviz").glob("*.rviz")}


# the two longest checks (~2.5 s each, the others 0.7-1.5 s; setup.cfg's `slow`): `make test-fast` leaves them out
SLOW_GRAPHS = ("hubble_adaptive_graph", "servicer_flexible")
# displays of what a goal brings (the planned path, the goal pose): checked where the goal comes within GOAL_WAIT s
GOAL_TOPICS = ("visualization/planned_end_effector_path", "visualization/goal_pose")
GOAL_WAIT = 5.0          # s of simulation the check may take to see them


@pytest.mark.parametrize("scenario_name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_GRAPHS else name
                                           for name in shipped_scenarios()])
def test_every_display_has_its_topic_type_durability_and_frames(scenario_name):
    scenario = load_scenario(scenario_name)
    config = yaml.safe_load(scenario.rviz.read_text())
    manager = config["Visualization Manager"]
    run = SimulationRun(scenario)
    published = []
    run.graph.tap(lambda topic, msg, _t, _p: published.append((topic, msg)))
    goal = scenario.trajectory_goal or scenario.capture_goal     # past its arrival: the planned path is out
    goal_time = goal.publish_at + 0.2 if goal else 0.0
    late = goal_time > GOAL_WAIT      # envisat_capture's comes at 45 s (its approach): those displays not checked
    run.run(duration=min(scenario.duration, max(1.0, 0.0 if late else goal_time)), plots=False, progress=False)
    topics = run.graph.topics()
    frames = frames_published(published)
    assert manager["Global Options"]["Fixed Frame"] in frames
    checked = 0
    for display in manager["Displays"]:
        kind = display["Class"].split("/")[-1]
        if not display.get("Enabled", True) or kind in NO_TOPIC:
            continue
        qos = display.get("Topic") or display.get("Description Topic")
        name = qos["Value"].lstrip("/")
        if late and name in GOAL_TOPICS:
            continue
        assert name in topics, f"{display['Name']}: nobody publishes {name}"
        assert topics[name].msgtype in ACCEPTS[kind], (display["Name"], topics[name].msgtype)
        assert (qos["Durability Policy"] == "Transient Local") == topics[name].transient_local, display["Name"]
        assert any(topic == name for topic, _ in published), f"{display['Name']}: {name} never published"
        checked += 1
    tf_display = next(d for d in manager["Displays"] if d["Class"].endswith("/TF"))
    enabled = [f for f, v in tf_display["Frames"].items() if isinstance(v, dict) and v.get("Value")]
    assert set(enabled) <= frames, set(enabled) - frames
    assert checked >= 6
