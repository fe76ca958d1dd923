"""The standalone runtime's rosbag2 output: MCAP, metadata version 8, topics/types/counts, QoS, contents,
bit-for-bit determinism, and the plot tool reading it back."""
from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader
from scipy.spatial.transform import Rotation

from space_robot_nodes import conversions as cv
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_runtime.run_trace import read_bag
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario

DURATION = 0.5
TRANSIENT_LOCAL = 1           # rmw / rosbags QosDurability value


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("config/scenarios/servicer_pregrasp.yaml")


@pytest.fixture(scope="module")
def runs(scenario, servicer_target, tmp_path_factory):
    out = []
    for i in range(2):
        directory = tmp_path_factory.mktemp(f"run{i}")
        result = SimulationRun(scenario, servicer_target).run(DURATION, directory, plots=False, progress=False)
        out.append((directory, result))
    return out


def expected_counts(scenario) -> dict:
    """Messages in a DURATION run, from the configured rates: a timer fires at t = 0, 1/r, ... < DURATION; the
    recorder keeps one message per publisher per 1/100 s; the runtime adds a final state sample at DURATION."""
    nodes, record = scenario.nodes, scenario.recording.rate

    def n(rate):
        return math.ceil(DURATION * min(rate, record) - 1e-9)

    dyn, ctl = nodes.dynamics, scenario.controller
    counts = {dyn.joint_states: n(dyn.state_rate) + 1, dyn.tf: n(dyn.tf_rate) + n(dyn.tf_rate),  # dynamics + RSP
              dyn.clock: n(dyn.clock_rate), dyn.momentum_linear: n(dyn.momentum_rate) + 1,
              dyn.momentum_angular: n(dyn.momentum_rate) + 1,
              dyn.momentum_balance: n(dyn.momentum_balance_rate) + 1,
              dyn.arm_command: n(ctl.rate), dyn.wheel_command: n(ctl.rate),
              dyn.diagnostics: n(dyn.diagnostics_rate) + n(nodes.controller.diagnostics_rate)
              + n(nodes.monitor.diagnostics_rate),
              nodes.monitor.status: n(nodes.monitor.rate), nodes.monitor.marker: n(nodes.monitor.diagnostics_rate),
              "robot_description": 1, "target/robot_description": 1, "tf_static": 1,
              nodes.controller.attitude_setpoint: 1, nodes.controller.trajectory: 0}
    for name, topic in dyn.odometry.items():
        counts[topic] = n(dyn.odometry_rates.get(name, dyn.state_rate)) + 1
    # the throttled copy of the state (monitor, robot_state_publisher under ROS 2)
    for topic in (dyn.throttled_joint_states, *dyn.throttled_odometry.values()):
        counts[topic] = n(dyn.throttled_rate)
    # the visualization node: markers and the setpoint pose at its rate (the setpoint is there from t = 0), the
    # path at its own, the wheel discs once (latched; again every 2 s); no goal before DURATION (it is published at
    # 0.5 s)
    vis = nodes.visualization
    counts.update({vis.markers: n(vis.rate), vis.attitude_setpoint_pose: n(vis.rate), vis.goal_pose: 0,
                   vis.end_effector_path: n(vis.path_rate), vis.planned_end_effector_path: 0, vis.static_markers: 1,
                   vis.display_joint_states: n(vis.rate), vis.commanded_efforts: n(vis.rate)})
    # the model has a grasp (docs/contact.md sec. 10): its wrench and state at their rates; no contact event and no
    # gripper command in this scenario
    counts.update({dyn.grasp_wrench: n(dyn.grasp_wrench_rate), dyn.grasp_state: n(dyn.grasp_state_rate),
                   dyn.grasp_events: 0, dyn.gripper_command: 0, nodes.controller.gripper_command: 0})
    # the controller's Cartesian goal and force setpoint inputs (docs/controllers.md sec. 1): nobody sends one in
    # this scenario
    counts.update({nodes.controller.cartesian_goal: 0, nodes.controller.force_setpoint: 0})
    return counts


def test_bag_metadata_topics_types_counts_and_qos(runs, scenario):
    directory, result = runs[0]
    meta = yaml.safe_load((directory / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["version"] == 8 and meta["storage_identifier"] == "mcap"
    assert meta["relative_file_paths"] == ["bag.mcap"]
    topics = {t["topic_metadata"]["name"]: t for t in meta["topics_with_message_count"]}
    assert {name: t["message_count"] for name, t in topics.items()} == expected_counts(scenario)
    for name, t in topics.items():
        qos = yaml.safe_load(t["topic_metadata"]["offered_qos_profiles"])
        latched = name in ("robot_description", "target/robot_description", "tf_static",
                           "visualization/static_markers", "visualization/planned_end_effector_path", "grasp/events")
        assert (qos[0]["durability"] == TRANSIENT_LOCAL) == latched, name
        assert t["topic_metadata"]["type"] == result.summary["topics"][name]["type"]
    assert topics["joint_states"]["topic_metadata"]["type"] == "sensor_msgs/msg/JointState"
    assert topics["holonomy/status"]["topic_metadata"]["type"] == "std_msgs/msg/Float64MultiArray"


def test_bag_reads_back_with_the_rosbags_reader(runs, servicer_target):
    directory, _result = runs[0]
    store = RosbagsMessageTypes().typestore
    messages = {}
    with Reader(directory / "bag") as reader:
        for connection, timestamp, raw in reader.messages():
            messages.setdefault(connection.topic, []).append((timestamp, store.deserialize_cdr(raw,
                                                                                               connection.msgtype)))
    urdf = messages["robot_description"][0][1].data
    assert '<robot name="servicer"' in urdf and "rw_x_joint" in urdf
    assert '<robot name="target"' in messages["target/robot_description"][0][1].data
    static = {(t.header.frame_id, t.child_frame_id): t for t in messages["tf_static"][0][1].transforms}
    grapple = static[("target/base_link", "target/grapple_frame")].transform
    # urdf/target.urdf.xacro: grapple_joint origin xyz = (-side/2 - 0.1, 0, 0), side 1.1 m; rpy (0, 0, pi)
    assert cv.xyz_of(grapple.translation) == pytest.approx([-0.65, 0.0, 0.0], abs=1e-12)
    assert Rotation.from_quat(cv.xyzw_of(grapple.rotation)).as_euler("xyz")[2] == pytest.approx(np.pi, abs=1e-9)
    assert ("base_link", "right_arm_base_link") in static
    # joint transforms from the stand-in robot_state_publisher: right_j0 turns right_l0 about z by its angle
    stamp, joints = messages["joint_states"][-2]
    angle = dict(zip(joints.name, joints.position))["right_j0"]
    moving = [(ts, m) for ts, m in messages["tf"] if any(t.child_frame_id == "right_l0" for t in m.transforms)]
    ts, tf = next((ts, m) for ts, m in moving if ts == stamp)
    j0 = next(t for t in tf.transforms if t.child_frame_id == "right_l0").transform
    assert cv.xyz_of(j0.translation) == pytest.approx([0.0, 0.0, 0.08], abs=1e-12)    # Sawyer right_j0 origin
    assert Rotation.from_quat(cv.xyzw_of(j0.rotation)).as_rotvec() == pytest.approx([0, 0, angle], abs=1e-12)
    timestamps = [ts for ts, _ in messages["joint_states"]]
    assert timestamps[0] == 0 and timestamps[-1] == round(DURATION * 1e9)
    assert all(b - a == 10_000_000 for a, b in zip(timestamps, timestamps[1:]))


def test_two_runs_write_identical_bags(runs):
    (first, a), (second, b) = runs
    for name in ("bag.mcap", "metadata.yaml"):
        assert (first / "bag" / name).read_bytes() == (second / "bag" / name).read_bytes(), name
    timing = ("real_time_factor", "wall_time_s")
    assert {k: v for k, v in a.summary.items() if k not in timing} == \
        {k: v for k, v in b.summary.items() if k not in timing}


def test_the_bag_gives_the_same_trace_as_the_live_run(runs):
    directory, result = runs[0]
    trace, info = read_bag(directory / "bag")
    assert info["scenario"] == "servicer_pregrasp" and tuple(info["arm_joints"]) == trace.arm_joints
    for name in ("arm_positions", "wheel_speeds", "bus_orientation", "momentum_angular"):
        live_t, live = getattr(result.trace, name).arrays()
        bag_t, bag = getattr(trace, name).arrays()
        assert np.array_equal(live_t, bag_t) and np.array_equal(live, bag), name
    assert np.array_equal(trace.setpoint, result.trace.setpoint)
