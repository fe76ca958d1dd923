"""The simulation as a ROS user runs it: `ros2 launch space_robot simulation.launch.py rviz:=false` (default
scenario) with `ros2 bag record -s mcap` beside it, checked with rclpy, tf2 and the ros2 CLI.

One launch for the module (startup costs ~10 s of two cores). The graph first runs the scenario's 8 s
undisturbed while the bag records it (the trajectory comparison with the standalone runtime reads that bag);
the tests then probe it in file order, the FollowJointTrajectory goals and bad commands last but one, and the
last tests stop it with a terminal's Ctrl-C and read the recorded bag back.
"""
from __future__ import annotations

import math
import os
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from ros2_available import require_ros2

require_ros2()

from action_msgs.msg import GoalStatus  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import PoseStamped, Vector3, Wrench, WrenchStamped  # noqa: E402
from rclpy.action import ActionClient, get_action_names_and_types  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from ros2_probe import values  # noqa: E402
from ros2_processes import RosCommand, launch_exits, tracebacks, wait_until  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, Header  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

from space_robot_nodes.monitor_core import STATUS_FIELDS, STATUS_LABEL  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_TIME = 8.0          # s: the default scenario's duration, run undisturbed while the bag records
START_TIMEOUT = 90.0         # s of wall time for launch, model building and discovery on a loaded machine
OUR_NODES = {"dynamics": "dynamics", "controller": "controller", "monitor": "holonomy_monitor"}
ARM = [f"right_j{i}" for i in range(7)]
RECORDED = ["/joint_states", "/base/odom", "/clock", "/tf", "/tf_static", "/robot_description", "/diagnostics",
            "/holonomy/status"]
# The joint trajectory of the graph against the lockstep runtime: when the controller answers every state within
# one step, and when it missed some (missed_periods: each holds a command one step longer). Measured with misses:
# 6e-6 rad quiet (22 % of the samples missed: the graph's 8 processes share 2 cores), 1.3e-4 rad at load 5.6.
# A trajectory started a few ms off costs ~1e-2 rad (3.6e-2 seen): both bounds catch it.
AGREEMENT = 1e-4             # rad
AGREEMENT_WITH_MISSES = 1e-3  # rad


class Graph:
    def __init__(self, launch: RosCommand, bag: Path, recorder: RosCommand):
        self.launch, self.bag, self.recorder = launch, bag, recorder
        self.stopped_at: float | None = None


def sim_time(probe) -> float:
    statuses = probe.statuses("dynamics: simulation")
    return float(values(statuses[-1])["time_s"]) if statuses else -1.0


@pytest.fixture(scope="module")
def graph(probe, tmp_path_factory, ros_env):
    probe.listen("/diagnostics", DiagnosticArray)
    directory = tmp_path_factory.mktemp("graph")
    bag = directory / "live_bag"
    launch = RosCommand(["ros2", "launch", "space_robot", "simulation.launch.py", "rviz:=false"],
                        directory / "launch.log", ros_env)
    recorder = RosCommand(["ros2", "bag", "record", "-s", "mcap", "-o", str(bag), *RECORDED],
                          directory / "record.log", ros_env)
    graph = Graph(launch, bag, recorder)
    try:
        wait_until(lambda: sim_time(probe) > 0 or not launch.alive(), START_TIMEOUT, "the simulation to start")
        assert launch.alive(), launch.output()[-3000:]
        wait_until(lambda: sim_time(probe) >= SCENARIO_TIME + 0.3, 3 * SCENARIO_TIME + 30, "the scenario's 8 s")
        recorder.signal_group(signal.SIGINT)
        assert recorder.wait(30) == 0, recorder.output()[-2000:]
        yield graph
    finally:
        for command in (recorder, launch):
            command.kill()


# ---- the README's topics table ----------------------------------------------------------------------
def readme_topics() -> list[dict]:
    """Rows of the README's topics table: topics (absolute), types (ROS 2 names), publishers, subscribers."""
    text = (ROOT / "README.md").read_text()
    table = text.split("## Topics", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines()[2:]:
        topic_cell, type_cell, flow = (cell.strip() for cell in line.strip("|").split("|"))
        topics = ["/" + name for name in re.findall(r"`([^`]+)`", topic_cell)]
        kinds = re.findall(r"\b([a-z0-9_]+)/(action/)?([A-Z][A-Za-z0-9]+)\b", re.sub(r"`[^`]*`", "", type_cell))
        types = [f"{pkg}/{'action' if action else 'msg'}/{name}" for pkg, action, name in kinds]
        if len(types) == 1:
            types = types * len(topics)
        assert len(types) == len(topics), f"README topics row {line!r}: one type per topic or one for all"
        source, _, sinks = flow.partition("->")
        rows.append({"topics": topics, "types": types, "latched": "transient-local" in type_cell,
                     "from": _nodes_named(source), "to": _nodes_named(sinks),
                     # a row marked "(flexible models)", "(flexible links)", "(models with `base_thrusters`)",
                     # "(models with `sensors`..." or "(in orbit)": not in the default graph (a rigid servicer in
                     # free space, no thrusters, no sensors)
                     "not_in_default": "(flexible" in flow or "(models with `base_thrusters`)" in flow
                     or "(models with `sensors`" in flow or "(in orbit)" in flow})
    return rows


def _nodes_named(cell: str) -> set[str]:
    return {node for word, node in OUR_NODES.items() if re.search(rf"\b{word}\b", cell)}


def test_every_topic_of_the_readme_table_is_there_with_its_type(graph, probe):
    node = probe.node
    live = dict(node.get_topic_names_and_types())
    actions = dict(get_action_names_and_types(node))
    for row in readme_topics():
        if row["not_in_default"]:
            assert not any(topic in live for topic in row["topics"]), row["topics"]     # nor there for nothing
            continue
        for topic, msgtype in zip(row["topics"], row["types"]):
            if "/action/" in msgtype:
                assert actions.get(topic) == [msgtype], (topic, actions.get(topic))
                continue
            assert live.get(topic) == [msgtype], (topic, live.get(topic))
            publishers = {info.node_name for info in node.get_publishers_info_by_topic(topic)}
            subscribers = {info.node_name for info in node.get_subscriptions_info_by_topic(topic)}
            assert row["from"] <= publishers, (topic, row["from"], publishers)
            assert row["to"] <= subscribers, (topic, row["to"], subscribers)


def test_no_topic_of_our_nodes_is_missing_from_the_readme(graph, probe):
    documented = {topic for row in readme_topics() for topic in row["topics"]}
    internal = {"/rosout", "/parameter_events"}
    for name in OUR_NODES.values():
        used = probe.node.get_publisher_names_and_types_by_node(name, "/") + \
            probe.node.get_subscriber_names_and_types_by_node(name, "/")
        undocumented = {topic for topic, _ in used if topic not in internal and "/_action/" not in topic} - documented
        assert not undocumented, (name, undocumented)


def test_latched_topics_are_transient_local_and_the_rest_volatile(graph, probe):
    for row in readme_topics():
        for topic, msgtype in zip(row["topics"], row["types"]):
            if "/action/" in msgtype:
                continue
            for info in probe.node.get_publishers_info_by_topic(topic):
                if info.node_name.startswith("space_robot_test") or info.node_name.startswith("_"):
                    continue
                expected = DurabilityPolicy.TRANSIENT_LOCAL if row["latched"] else DurabilityPolicy.VOLATILE
                assert info.qos_profile.durability == expected, (topic, info.node_name)
                assert info.qos_profile.reliability == ReliabilityPolicy.RELIABLE, (topic, info.node_name)


# ---- tf, clock, rates ------------------------------------------------------------------------------
def test_tf_has_the_bases_the_arm_and_the_target_frames(graph, probe):
    from rclpy.duration import Duration as RclpyDuration
    from rclpy.time import Time
    from tf2_ros import Buffer, TransformListener

    buffer = Buffer()
    listener = TransformListener(buffer, probe.node)
    try:
        for parent, child in (("world", "base_link"), ("world", "target/base_link"), ("base_link", "right_hand"),
                              ("world", "target/grapple_frame"), ("world", "right_hand")):
            assert buffer.can_transform(parent, child, Time(), RclpyDuration(seconds=15.0)), (parent, child)
        # the scenario's target sits 1.7 m ahead of the bus, level with the arm's shoulder (0.8 m up)
        target = buffer.lookup_transform("world", "target/base_link", Time()).transform.translation
        assert [target.x, target.y, target.z] == pytest.approx([1.7, 0.0, 0.8], abs=0.05)
    finally:
        listener.unregister()


def test_clock_follows_real_time_at_its_configured_rate(graph, probe):
    probe.listen("/clock", Clock, 10)
    start = time.monotonic()
    time.sleep(3.0)
    ticks = probe.messages("/clock", since=start)
    probe.forget("/clock")
    wall = time.monotonic() - start
    stamps = [t.clock.sec + t.clock.nanosec * 1e-9 for t in ticks]
    assert len(ticks) / wall == pytest.approx(100.0, rel=0.2)          # dynamics.rates.clock
    assert (stamps[-1] - stamps[0]) / wall == pytest.approx(1.0, abs=0.1)   # paced at real time


def controller_counts(probe, until: float = math.inf) -> tuple[float, dict[str, float]]:
    """The controller's last "controller: state" report stamped at or before `until` (s): its stamp and its
    update counters."""
    stamp, status = [(t, s) for t, s in probe.stamped_statuses("controller: state") if t <= until][-1]
    found = values(status)
    return stamp, {key: float(found[key]) for key in ("updates", "missed_periods", "skipped_periods")}


def test_the_controller_updates_on_every_state_sample(graph, probe, share_dir):
    """One update per 1 kHz joint_states sample, never more; a sample the controller was too busy to take before
    the next one superseded it is counted in missed_periods, so every period is accounted for. Counted between two
    of the controller's own reports (their stamps: no skew between two nodes' reports)."""
    from space_robot_control.controller_config import load_controller_config

    control_rate = load_controller_config(share_dir / "config" / "controller.yaml").rate      # Hz
    first_stamp, first = controller_counts(probe)
    time.sleep(3.0)
    last_stamp, last = controller_counts(probe)
    periods = (last_stamp - first_stamp) * control_rate
    delta = {key: last[key] - first[key] for key in first}
    load = os.getloadavg()[0]
    print(f"\ncontroller over {periods:.0f} periods: {delta['updates']:.0f} updates, {delta['missed_periods']:.0f} "
          f"missed, {delta['skipped_periods']:.0f} without a state (load average {load:.2f})")
    assert periods > 500                                                    # simulated time ran meanwhile
    assert sum(delta.values()) == pytest.approx(periods, abs=0.5)           # each period: one update or counted
    assert delta["skipped_periods"] == 0                                    # the state never went stale
    # How many samples the controller takes is the machine's capacity: ~0.76-0.93 of them on the quiet 2-core
    # development VM, where the graph's own 8 processes keep both cores busy. On a machine loaded beyond twice
    # its cores by other work the figure says nothing about this code (it is printed above).
    if load < 2 * (os.cpu_count() or 1):
        assert delta["updates"] >= 0.5 * periods, (delta, load)


# ---- parameters --------------------------------------------------------------------------------------
def parameters(probe, node: str) -> dict:
    from rcl_interfaces.srv import GetParameters, ListParameters

    listing = probe.node.create_client(ListParameters, f"/{node}/list_parameters")
    getter = probe.node.create_client(GetParameters, f"/{node}/get_parameters")
    try:
        assert listing.wait_for_service(timeout_sec=10) and getter.wait_for_service(timeout_sec=10)
        names = list(call(listing, ListParameters.Request()).result.names)
        got = call(getter, GetParameters.Request(names=names)).values
        return {name: _parameter_value(value) for name, value in zip(names, got)}
    finally:
        probe.destroy(listing, getter)


def _parameter_value(value):
    from rcl_interfaces.msg import ParameterType as T

    return {T.PARAMETER_BOOL: value.bool_value, T.PARAMETER_DOUBLE: value.double_value,
            T.PARAMETER_STRING: value.string_value, T.PARAMETER_STRING_ARRAY: list(value.string_array_value),
            T.PARAMETER_INTEGER: value.integer_value,
            # an empty list declared with dynamic typing reads back as an empty byte array (rclpy#912)
            T.PARAMETER_BYTE_ARRAY: list(value.byte_array_value)}.get(value.type, f"type {value.type}")


def call(client, request, timeout: float = 10.0):
    future = client.call_async(request)
    wait_until(future.done, timeout, f"{client.srv_name}")
    return future.result()


def test_parameters_are_listed_with_the_launch_values(graph, probe, share_dir):
    scenario = str(share_dir / "config" / "scenarios" / "servicer_pregrasp.yaml")
    dynamics = parameters(probe, "dynamics")
    assert {"scenario", "overrides", "real_time_factor", "wait_for_commands", "use_sim_time"} <= set(dynamics)
    assert dynamics["real_time_factor"] == 1.0 and dynamics["wait_for_commands"] == 30.0
    assert dynamics["use_sim_time"] is False and dynamics["scenario"] == scenario
    for node in ("controller", "holonomy_monitor", "scenario_player"):
        found = parameters(probe, node)
        assert found["use_sim_time"] is True and found["scenario"] == scenario and found["overrides"] == [], node


# ---- the holonomy monitor --------------------------------------------------------------------------
def test_holonomy_monitor_status_marker_and_diagnostics(graph, probe):
    probe.listen("/holonomy/status", Float64MultiArray).listen("/holonomy/marker", Marker)
    start = time.monotonic()
    time.sleep(2.0)
    statuses = probe.messages("/holonomy/status", since=start)
    markers = probe.messages("/holonomy/marker", since=start)
    assert len(statuses) / 2.0 == pytest.approx(50.0, rel=0.25)      # one per monitor cycle
    latest = statuses[-1]
    assert latest.layout.dim[0].label == STATUS_LABEL and len(latest.data) == len(STATUS_FIELDS)
    row = dict(zip(STATUS_FIELDS, latest.data))
    assert row["level"] == 0.0 and row["constraint_rank"] == 6.0     # OK; the momentum map has full rank
    assert markers and markers[-1].header.frame_id == "base_link" and markers[-1].type == Marker.TEXT_VIEW_FACING
    report = probe.statuses("holonomy_monitor: holonomy", since=start)[-1]
    assert report.level == DiagnosticStatus.OK and int(values(report)["cycles_since_last_report"]) >= 3


# ---- FollowJointTrajectory ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def action(graph, probe):
    client = ActionClient(probe.node, FollowJointTrajectory, "/arm_controller/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=15)
    probe.listen("/joint_states_throttle", JointState)
    yield client
    probe.destroy(client)


def arm_positions(probe) -> np.ndarray:
    msg = probe.wait_for(lambda: probe.messages("/joint_states_throttle")[-1:], 5, "joint_states_throttle")[0]
    order = [list(msg.name).index(name) for name in ARM]
    return np.array(msg.position)[order]


def goal_to(target, seconds: float, names=ARM) -> FollowJointTrajectory.Goal:
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = JointTrajectory(joint_names=list(names), points=[JointTrajectoryPoint(
        positions=[float(x) for x in target], velocities=[0.0] * len(names),
        time_from_start=Duration(sec=int(seconds), nanosec=int(round(seconds % 1 * 1e9))))])
    return goal


def send(client, goal):
    accepted = client.send_goal_async(goal)
    wait_until(accepted.done, 10, "the goal response")
    handle = accepted.result()
    assert handle.accepted            # validated when it starts: a rejection comes back as a result
    return handle, handle.get_result_async()


def result_of(future, timeout: float = 15.0):
    wait_until(future.done, timeout, "the goal's result")
    return future.result()


def test_a_goal_succeeds(action, probe):
    start = arm_positions(probe)
    target = start + np.array([0.1, -0.05, 0.0, 0.05, 0.0, 0.0, 0.1])
    _handle, result = send(action, goal_to(target, 1.0))
    done = result_of(result)
    assert done.status == GoalStatus.STATUS_SUCCEEDED and done.result.error_code == 0
    assert np.abs(arm_positions(probe) - target).max() < 0.01       # the default goal tolerance


def test_a_new_goal_preempts_the_running_one(action, probe):
    start = arm_positions(probe)
    _first, first_result = send(action, goal_to(start + 0.2, 3.0))
    time.sleep(0.5)
    _second, second_result = send(action, goal_to(start, 1.0))
    first = result_of(first_result)
    assert first.status == GoalStatus.STATUS_ABORTED
    assert first.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert "preempted" in first.result.error_string
    assert result_of(second_result).status == GoalStatus.STATUS_SUCCEEDED


def test_a_canceled_goal_ends_canceled_and_holds(action, probe):
    start = arm_positions(probe)
    target = start - 0.15
    handle, result = send(action, goal_to(target, 3.0))
    time.sleep(0.5)
    canceling = handle.cancel_goal_async()
    wait_until(canceling.done, 10, "the cancel response")
    done = result_of(result)
    assert done.status == GoalStatus.STATUS_CANCELED and done.result.error_code == 0
    time.sleep(1.0)                                                  # settled on the held position
    held = arm_positions(probe)
    time.sleep(0.3)
    assert np.abs(arm_positions(probe) - held).max() < 1e-3          # at rest ...
    assert np.abs(held - target).max() > 0.05                        # ... short of the canceled goal


def test_a_goal_with_an_unknown_joint_is_aborted_with_its_reason(action, probe):
    names = ARM[:6] + ["left_j6"]
    _handle, result = send(action, goal_to(arm_positions(probe), 1.0, names))
    done = result_of(result)
    assert done.status == GoalStatus.STATUS_ABORTED
    assert done.result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert "left_j6" in done.result.error_string


# ---- bad input ---------------------------------------------------------------------------------------
def test_malformed_commands_are_reported_and_survived(graph, probe):
    arm = probe.node.create_publisher(Float64MultiArray, "/arm_effort_controller/commands", 10)
    goals = probe.node.create_publisher(JointTrajectory, "/arm_controller/joint_trajectory", 10)
    cartesian = probe.node.create_publisher(PoseStamped, "/cartesian_controller/goal", 10)
    force = probe.node.create_publisher(WrenchStamped, "/force_controller/setpoint", 10)
    try:
        wait_until(lambda: all(p.get_subscription_count() > 0 for p in (arm, goals, cartesian, force)), 10,
                   "the command subscriptions")
        start = time.monotonic()
        arm.publish(Float64MultiArray(data=[0.0, 0.0, 0.0]))                       # wrong length
        rejected_length = probe.wait_for(lambda: [s for s in probe.statuses("dynamics: arm_command", start)
                                                  if s.level == DiagnosticStatus.ERROR], 5, "the wrong length reported")
        assert "rejected" in rejected_length[0].message
        start = time.monotonic()
        arm.publish(Float64MultiArray(data=[math.nan] * 7))                          # NaN
        rejected_nan = probe.wait_for(lambda: [s for s in probe.statuses("dynamics: arm_command", start)
                                               if s.level == DiagnosticStatus.ERROR], 5, "the NaN reported")
        assert "rejected" in rejected_nan[0].message
        start = time.monotonic()
        goals.publish(JointTrajectory(joint_names=ARM[:6] + ["head_pan"], points=[JointTrajectoryPoint(
            positions=[0.0] * 7, time_from_start=Duration(sec=1))]))                  # unknown joint
        report = probe.wait_for(lambda: [s for s in probe.statuses("controller: goals", start)
                                         if s.level == DiagnosticStatus.ERROR], 5, "the unknown joint reported")
        assert "head_pan" in report[0].message
        # a Cartesian goal in a frame the model lacks and a NaN force setpoint: ERROR, nothing changes
        start = time.monotonic()
        cartesian.publish(PoseStamped(header=Header(frame_id="target/no_such_frame")))
        force.publish(WrenchStamped(wrench=Wrench(force=Vector3(x=math.nan))))
        def errors():
            return " | ".join(s.message for s in probe.statuses("controller: contact goals", start)
                              if s.level == DiagnosticStatus.ERROR)
        probe.wait_for(lambda: "force_controller/setpoint.wrench.force" in errors()
                       and "cartesian_controller/goal.header.frame_id" in errors(), 5,
                       "the bad Cartesian goal and force setpoint reported")
        assert "no_such_frame" in errors()
        assert probe.statuses("controller: cartesian")[-1].message.startswith("inactive")
        # and both nodes carry on: simulated time advances and the controller still controls
        before = sim_time(probe)
        time.sleep(1.0)
        assert sim_time(probe) > before + 0.5
        assert probe.statuses("controller: state")[-1].message == "controlling"
    finally:
        probe.destroy(arm, goals, cartesian, force)


# ---- the trajectory against the standalone runtime ------------------------------------------------------
def bag_joint_positions(bag: Path) -> dict[int, np.ndarray]:
    """Stamp (ns) -> arm positions of every joint_states message of a bag, read with rosbag2_py."""
    import rosbag2_py
    from rclpy.serialization import deserialize_message

    reader = rosbag2_py.SequentialReader()
    reader.open(rosbag2_py.StorageOptions(uri=str(bag), storage_id="mcap"),
                rosbag2_py.ConverterOptions(input_serialization_format="cdr", output_serialization_format="cdr"))
    reader.set_filter(rosbag2_py.StorageFilter(topics=["/joint_states"]))
    positions = {}
    while reader.has_next():
        _topic, data, _t = reader.read_next()
        msg = deserialize_message(data, JointState)
        order = [list(msg.name).index(name) for name in ARM]
        positions[msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec] = np.array(msg.position)[order]
    return positions


def test_the_trajectory_agrees_with_the_standalone_runtime(graph, probe, record_property):
    from space_robot_runtime.simulation_run import SimulationRun
    from space_robot_scenario import DEFAULT_SCENARIO, load_scenario

    live = bag_joint_positions(graph.bag)
    run = SimulationRun(load_scenario(DEFAULT_SCENARIO))
    reference = {}

    def tap(topic, msg, time_ns, _publisher):
        if topic == "joint_states":
            reference[time_ns] = np.array(msg.position[:7])
    run.graph.tap(tap)
    run.run(duration=SCENARIO_TIME, plots=False)
    common = sorted(set(live) & set(reference))
    assert len(common) > 0.8 * SCENARIO_TIME * 1000, len(common)    # the bag holds the 1 kHz joint_states
    errors = np.array([np.abs(live[k] - reference[k]).max() for k in common])
    worst = float(errors.max())
    record_property("trajectory_agreement_rad", worst)
    print(f"\njoint trajectory, ROS 2 graph vs standalone runtime: max |dq| = {worst:.3g} rad over "
          f"{len(common)} common samples ({common[0] / 1e9:.3f}-{common[-1] / 1e9:.3f} s)")
    moving = [k for k in common if 1.0e9 <= k <= 6.0e9]
    assert moving and np.abs(reference[moving[-1]] - reference[moving[0]]).max() > 0.5    # the arm did move
    # The loop closes as in the runtime only if the trajectory reached the controller before its start time
    # (header.stamp, 50 ms after publication). One that arrives later keeps its stamped times but starts from the
    # state at arrival, ~1e-3 rad off the runtime's per few ms. Seen on a quiet machine under Jazzy (53 ms: the
    # player and the controller each generated the JointTrajectory CDR code at its first message, ~25 ms each;
    # node_host now does that before simulated time starts) and on a machine loaded by other work (load 6-8 on 2
    # cores, both distributions): the controller's diagnostics say so, and that is the failure then.
    accepted = [s.message for s in probe.statuses("controller: goals") if "before its start time" in s.message]
    print("the scenario's trajectory:", accepted[:1])
    goals = values(probe.statuses("controller: goals")[-1])
    warnings = [s.message for s in probe.statuses("controller: goals") if s.level == DiagnosticStatus.WARN]
    assert goals["trajectories_late"] == "0", (warnings, goals, os.getloadavg(), worst)
    # A state sample the controller missed (too busy: missed_periods) holds its previous command one step longer
    # than the runtime does: the graph is then a slightly different closed loop (see AGREEMENT_WITH_MISSES).
    _stamp, counts = controller_counts(probe, until=SCENARIO_TIME)
    print(f"control periods the controller missed in the scenario's {SCENARIO_TIME:.0f} s: "
          f"{counts['missed_periods']:.0f} (load average {os.getloadavg()[0]:.2f})")
    assert worst < (AGREEMENT if counts["missed_periods"] == 0 else AGREEMENT_WITH_MISSES)


def settle_until_steady(count, timeout: float, quiet: float = 1.0) -> None:
    """Until count() has not changed for `quiet` s (or `timeout` s pass)."""
    deadline = time.monotonic() + timeout
    last, since = count(), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet:
        time.sleep(0.1)
        now = count()
        if now != last:
            last, since = now, time.monotonic()


# ---- Ctrl-C, then the recorded bag -------------------------------------------------------------------
def test_ctrl_c_ends_every_node_cleanly(graph, probe):
    """A terminal's Ctrl-C: SIGINT to the launch's process group, so every node gets it from the terminal and
    again from launch; each ends with status 0, no traceback, its last report sent."""
    start = time.monotonic()
    graph.launch.signal_group(signal.SIGINT)
    assert graph.launch.wait(60) == 0
    output = graph.launch.output()
    exits = launch_exits(output)
    expected = {"dynamics_node", "controller_node", "holonomy_monitor_node", "scenario_player", "robot_state_publisher"}
    assert expected <= set(exits) and all(code == 0 for code in exits.values()), exits
    assert not tracebacks(output), tracebacks(output)
    for core in ("dynamics", "controller", "holonomy_monitor"):
        final = probe.wait_for(lambda core=core: probe.statuses(f"{core}: node", start), 5, f"{core}'s last report")
        assert final[-1].message == "stopped on SIGINT"


def test_the_live_bag_reads_back_with_the_ros2_cli_and_rosbag2_py(graph, probe, ros_env, tmp_path):
    import subprocess

    info = subprocess.run(["ros2", "bag", "info", "-s", "mcap", str(graph.bag)], capture_output=True, text=True,
                          timeout=60, env=ros_env)
    assert info.returncode == 0, info.stderr
    counts = {m["topic"]: int(m["count"]) for m in re.finditer(
        r"Topic: (?P<topic>\S+) \| Type: \S+ \| Count: (?P<count>\d+)", info.stdout)}
    assert set(RECORDED) <= set(counts), info.stdout
    assert counts["/joint_states"] > 0.8 * SCENARIO_TIME * 1000
    recorded = bag_joint_positions(graph.bag)
    assert len(recorded) == counts["/joint_states"]          # rosbag2_py reads them all
    # A history as deep as the bag: the middleware queues what the probe's Python callbacks have not yet taken
    # (with depth 100 a loaded machine's probe kept only 1277 of the 7520 replayed at 4 kHz)
    probe.listen("/joint_states", JointState, QoSProfile(depth=len(recorded) + 100,
                                                         reliability=ReliabilityPolicy.RELIABLE))
    start = time.monotonic()
    play = RosCommand(["ros2", "bag", "play", "-s", "mcap", "-r", "4.0", str(graph.bag)], tmp_path / "play.log",
                      ros_env)
    try:
        assert play.wait(90) == 0, play.output()[-2000:]
    finally:
        play.kill()
    settle_until_steady(lambda: len(probe.messages("/joint_states", since=start)), 30.0)
    replayed = {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec: m for m in
                probe.messages("/joint_states", since=start)}
    probe.forget("/joint_states")
    print(f"\nreplayed {len(replayed)} of the bag's {len(recorded)} joint_states (load average "
          f"{os.getloadavg()[0]:.2f})")
    # the recorded messages come back, over the whole bag (the player publishes reliably; a few may still be
    # lost to a machine too busy to serve the middleware)
    assert len(replayed) > 0.9 * len(recorded) and set(replayed) <= set(recorded)
    assert (max(replayed) - min(replayed)) > 0.9 * (max(recorded) - min(recorded))
    some = min(replayed)
    assert list(replayed[some].position[:7]) == pytest.approx(list(recorded[some]), abs=0.0)
