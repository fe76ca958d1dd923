"""Message providers, conversions and command inputs of the node cores (space_robot_nodes).

The builders are checked against the ROS 2 Humble message definitions by serialising every message with
the rosbags CDR serialiser (which refuses a wrong field type or a missing field) and reading it back.
"""
from __future__ import annotations

import array
import sys
import types as pytypes

import numpy as np
import pytest

from space_robot_dynamics.command_checks import all_finite, require_finite
from space_robot_dynamics.errors import CommandError
from space_robot_nodes import conversions as cv
from space_robot_nodes.command_input import CommandInput
from space_robot_nodes.message_types import (
    INTERA_JOINT_COMMAND,
    RosbagsMessageTypes,
    RosMessageTypes,
    typename_of,
)

TYPES = RosbagsMessageTypes()


def roundtrip(msg):
    typename = typename_of(msg)
    raw = TYPES.typestore.serialize_cdr(msg, typename)
    return TYPES.typestore.deserialize_cdr(raw, typename)


def test_new_fills_the_ros2_defaults():
    odom = TYPES.new(cv.ODOMETRY)
    assert odom.pose.pose.orientation.w == 1.0       # geometry_msgs/Quaternion: w defaults to 1
    assert odom.pose.covariance.shape == (36,) and not odom.pose.covariance.any()
    assert odom.header.frame_id == "" and odom.header.stamp.sec == 0
    marker = TYPES.new("visualization_msgs/msg/Marker", text="x")
    assert marker.text == "x" and marker.points == []
    with pytest.raises(TypeError, match="no field"):
        TYPES.new(cv.JOINT_STATE, nmae=["typo"])


@pytest.mark.parametrize("build", [
    lambda: cv.joint_state(TYPES, 1.25, ["a", "b"], [0.1, 0.2], [1.0, 2.0], [3.0, 4.0]),
    lambda: cv.odometry(TYPES, 2.0, "world", "base_link", [1, 2, 3], [0, 0, 0.6, 0.8], [0.1, 0, 0], [0, 0, 0.2]),
    lambda: cv.tf_message(TYPES, [cv.transform_stamped(TYPES, 0.5, "world", "base_link", [1, 0, 0], [0, 0, 0, 1])]),
    lambda: cv.float64_multi_array(TYPES, [1.0, -2.0, 3.5], "effort"),
    lambda: cv.diagnostic_array(TYPES, 0.1, [cv.diagnostic_status(TYPES, cv.ERROR, "n", "m", "hw", [("k", 1.5)])]),
    lambda: cv.clock(TYPES, 12.345),
    lambda: cv.quaternion_stamped(TYPES, 0.0, "world", [0, 0, 0, 1]),
    lambda: cv.vector3_stamped(TYPES, 0.0, "world", [1e-3, 2e-3, 3e-3]),
    lambda: cv.joint_trajectory(TYPES, 0.0, ["j1", "j2"], [(1.5, [0.1, 0.2]), (3.0, [0.3, 0.4])]),
    lambda: cv.float64(TYPES, 0.05),
    lambda: cv.empty(TYPES),
    lambda: cv.string(TYPES, "<robot/>"),
    lambda: TYPES.new(INTERA_JOINT_COMMAND, mode=3, names=["right_j0"], effort=TYPES.float64_sequence([1.0])),
])
def test_every_builder_matches_the_humble_definitions(build):
    msg = build()
    back = roundtrip(msg)
    assert repr(back) == repr(msg)


def test_stamps_are_rounded_to_whole_nanoseconds():
    assert (cv.time_msg(TYPES, 2.9999999996).sec, cv.time_msg(TYPES, 2.9999999996).nanosec) == (3, 0)
    assert (cv.time_msg(TYPES, 1.25).sec, cv.time_msg(TYPES, 1.25).nanosec) == (1, 250_000_000)
    assert cv.seconds(cv.time_msg(TYPES, 7.001)) == pytest.approx(7.001, abs=1e-9)


def test_joint_state_is_read_by_name():
    msg = cv.joint_state(TYPES, 0.0, ["b", "head_pan", "a"], [2.0, 9.0, 1.0], [20.0, 90.0, 10.0], [0, 0, 0])
    position, velocity = cv.read_joint_state(msg, ["a", "b"])
    assert position.tolist() == [1.0, 2.0] and velocity.tolist() == [10.0, 20.0]
    with pytest.raises(CommandError, match="missing joints"):
        cv.read_joint_state(msg, ["a", "c"])
    bad = cv.joint_state(TYPES, 0.0, ["a", "b"], [1.0, float("nan")], [0, 0], [0, 0])
    with pytest.raises(CommandError, match="non-finite.*'b'"):
        cv.read_joint_state(bad, ["a", "b"])
    short = cv.joint_state(TYPES, 0.0, ["a", "b"], [1.0, 2.0], [0.0], [0, 0])
    with pytest.raises(CommandError, match="2 names but 2 positions and 1 velocities"):
        cv.read_joint_state(short, ["a", "b"])


def test_odometry_frames_and_quaternion_are_checked():
    msg = cv.odometry(TYPES, 0.0, "world", "base_link", [1, 2, 3], [0, 0, 0.6, 0.8], [4, 5, 6], [7, 8, 9])
    position, xyzw, linear, angular = cv.read_odometry(msg, "world", "base_link", "base/odom")
    assert position.tolist() == [1, 2, 3] and xyzw.tolist() == [0, 0, 0.6, 0.8]
    assert linear.tolist() == [4, 5, 6] and angular.tolist() == [7, 8, 9]
    with pytest.raises(CommandError, match="base/odom.child_frame_id"):
        cv.read_odometry(msg, "world", "target/base_link", "base/odom")
    with pytest.raises(CommandError, match="header.frame_id"):
        cv.read_odometry(msg, "map", "base_link", "base/odom")
    skewed = cv.odometry(TYPES, 0.0, "world", "base_link", [0, 0, 0], [0, 0, 0, 2.0], [0, 0, 0], [0, 0, 0])
    with pytest.raises(CommandError, match="unit quaternion"):
        cv.read_odometry(skewed, "world", "base_link", "base/odom")


def test_attitude_setpoint_frame_and_norm():
    ok = cv.read_quaternion_stamped(cv.quaternion_stamped(TYPES, 0, "", [0, 0, 0, 1.0005]), "world", "sp", 1e-3)
    assert np.linalg.norm(ok) == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(CommandError, match="sp.header.frame_id"):
        cv.read_quaternion_stamped(cv.quaternion_stamped(TYPES, 0, "base_link", [0, 0, 0, 1]), "world", "sp", 1e-3)
    with pytest.raises(CommandError, match="not a unit quaternion"):
        cv.read_quaternion_stamped(cv.quaternion_stamped(TYPES, 0, "world", [0, 0, 0, 1.1]), "world", "sp", 1e-3)
    with pytest.raises(CommandError, match="non-finite"):
        cv.read_quaternion_stamped(cv.quaternion_stamped(TYPES, 0, "world", [0, 0, np.nan, 1]), "world", "sp", 1e-3)


def test_trajectory_points_keep_message_order_and_mark_empty_rates():
    msg = cv.joint_trajectory(TYPES, 0.0, ["j2", "j1"], [(1.0, [0.2, 0.1])])
    names, points, start = cv.read_joint_trajectory(msg)
    assert names == ["j2", "j1"] and start is None
    positions, velocities, accelerations, t = points[0]
    assert positions.tolist() == [0.2, 0.1] and velocities is None and accelerations is None and t == 1.0


def test_command_input_rejects_and_keeps_the_last_valid_command_then_times_out():
    command = CommandInput("arm_command", ["a", "b"], timeout=0.05)
    assert command.status(0.0)[0] == cv.WARN                       # nothing received yet
    assert command.offer(cv.float64_multi_array(TYPES, [1.0, 2.0]), now=0.0)
    assert not command.offer(cv.float64_multi_array(TYPES, [1.0, 2.0, 3.0]), now=0.01)
    assert not command.offer(cv.float64_multi_array(TYPES, [1.0, np.inf]), now=0.02)
    assert command.active(0.03).tolist() == [1.0, 2.0]
    level, message, values = command.status(0.03)
    assert level == cv.ERROR and "rejected 2 command(s)" in message and "arm_command: non-finite" in message
    assert dict(values)["rejected"] == 2 and dict(values)["accepted"] == 1
    assert command.status(0.04)[0] == cv.OK                         # errors are reported once
    assert command.active(0.0501).tolist() == [0.0, 0.0]            # timeout: zero torque
    level, message, _ = command.status(0.06)
    assert level == cv.ERROR and "zero torque" in message and command.timeouts == 1


def test_ros_provider_builds_rclpy_style_messages(monkeypatch):
    """RosMessageTypes with a stand-in for a generated rclpy message package (no ROS needed)."""
    module = pytypes.ModuleType("fake_msgs.msg")

    class Thing:                       # rclpy classes live in fake_msgs.msg._thing
        __module__ = "fake_msgs.msg._thing"
        OK = b"\x00"

        def __init__(self, **fields):
            self.__dict__.update(fields)

    module.Thing = Thing
    monkeypatch.setitem(sys.modules, "fake_msgs", pytypes.ModuleType("fake_msgs"))
    monkeypatch.setitem(sys.modules, "fake_msgs.msg", module)
    provider = RosMessageTypes()
    msg = provider.new("fake_msgs/msg/Thing", data=provider.float64_sequence(np.array([1.0, 2.5])))
    assert isinstance(msg.data, array.array) and msg.data.typecode == "d" and list(msg.data) == [1.0, 2.5]
    assert typename_of(msg) == "fake_msgs/msg/Thing"
    assert provider.has("fake_msgs/msg/Thing") and not provider.has("fake_msgs/msg/Missing")


def test_diagnostic_level_is_a_byte_under_rclpy():
    class BytesLevels(RosbagsMessageTypes):
        def cls(self, typename):
            if typename == cv.DIAGNOSTIC_STATUS:
                return type("Status", (), {"OK": b"\x00"})
            return super().cls(typename)

        def make(self, typename, **fields):
            return pytypes.SimpleNamespace(**fields)

    status = cv.diagnostic_status(BytesLevels(), cv.WARN, "n", "m")
    assert status.level == b"\x01" and cv.level_of(status) == cv.WARN
    assert cv.level_of(cv.diagnostic_status(TYPES, cv.ERROR, "n", "m")) == cv.ERROR


def test_the_fast_builders_build_what_the_conversions_build():
    """message_builders (constant parts made once, one stamp per instant) against the generic conversions,
    compared on the serialised bytes, at two instants so a stale shared stamp or header would show."""
    from space_robot_nodes import message_builders as mb

    stamps = mb.Stamps(TYPES)
    joints = mb.JointStateBuilder(TYPES, ["a", "b", "c"], stamps)
    odometry = mb.OdometryBuilder(TYPES, "world", "base_link", stamps)
    transforms = mb.TransformBuilder(TYPES, stamps)
    command = mb.Float64MultiArrayBuilder(TYPES, 3, "effort")
    momentum = mb.Vector3StampedBuilder(TYPES, "world", stamps)

    def same(a, b):
        typename = typename_of(a)
        assert typename == typename_of(b)
        assert bytes(TYPES.typestore.serialize_cdr(a, typename)) == bytes(TYPES.typestore.serialize_cdr(b, typename))

    for t in (0.25, 1.0000000004):
        p, v, e = np.array([0.1, -0.2, 3.0]), np.array([1.0, 2.0, -3.0]), np.array([0.5, 0.0, -0.5])
        same(joints.build(t, p.copy(), v.copy(), e.copy()), cv.joint_state(TYPES, t, ["a", "b", "c"], p, v, e))
        pose = ([1.0, 2.0, 3.0], [0.0, 0.0, 0.6, 0.8], [0.1, 0.2, 0.3], [-0.1, -0.2, -0.3])
        same(odometry.build(t, pose[0] + pose[1], pose[2] + pose[3]),
             cv.odometry(TYPES, t, "world", "base_link", *pose))
        same(transforms.message([transforms.transform(t, "world", "base_link", pose[0], pose[1])]),
             cv.tf_message(TYPES, [cv.transform_stamped(TYPES, t, "world", "base_link", pose[0], pose[1])]))
        same(command.build(e), cv.float64_multi_array(TYPES, e, "effort"))
        same(momentum.build(t, pose[0]), cv.vector3_stamped(TYPES, t, "world", pose[0]))
    with pytest.raises(ValueError, match="expected 3 values, got 2"):
        command.build([1.0, 2.0])
    data = np.array([1.0, 2.0])
    assert command.build(np.array([1.0, 2.0, 3.0])).data is not data          # commands are copied
    assert TYPES.float64_owned(data) is data                                    # handed-over arrays are not
    with pytest.raises(TypeError, match="fields are"):
        TYPES.constructor(cv.ODOMETRY, ("child_frame_id", "header", "pose", "twist"))


def test_finiteness_check_catches_every_non_finite_value():
    """all_finite's sum shortcut against numpy's element test, overflowing sums included (no RuntimeWarning: the
    suite turns them into errors); require_finite names the field and the indices."""
    cases = ([1.0, 2.0], [np.nan, 1.0], [1.0, -np.inf], [np.inf, -np.inf], [1e200, 1e200], [-1e300, 5.0],
             [1.7e308, 1.7e308], [-1.7e308, -1.7e308, np.nan], [])
    for values in cases:
        assert all_finite(np.array(values, dtype=float)) == bool(np.isfinite(values).all()), values
    require_finite((np.array([1.7e308, 1.7e308]), "a"))
    with pytest.raises(CommandError, match=r"b: non-finite values at indices \[1, 2\]"):
        require_finite((np.zeros(2), "a"), (np.array([0.0, np.inf, np.nan]), "b"))


def test_prepare_codecs_generates_each_types_cdr_code_before_its_first_message():
    """A node prepares its types' codecs before simulated time starts (node_host): the first message of a type then
    costs what every later one does, instead of rosbags' code generation (~20-30 ms, more on a loaded machine)."""
    fresh = RosbagsMessageTypes()
    names = [f"right_j{i}" for i in range(7)]
    assert cv.JOINT_TRAJECTORY not in fresh.typestore.cache
    fresh.prepare_codecs([cv.JOINT_TRAJECTORY, cv.CLOCK, cv.JOINT_TRAJECTORY])
    generated = set(fresh.typestore.cache)
    assert {cv.JOINT_TRAJECTORY, cv.CLOCK, "trajectory_msgs/msg/JointTrajectoryPoint"} <= generated
    msg = cv.joint_trajectory(fresh, 0.55, names, ((6.0, [0.1] * 7),))
    back = fresh.typestore.deserialize_cdr(fresh.typestore.serialize_cdr(msg, cv.JOINT_TRAJECTORY),
                                           cv.JOINT_TRAJECTORY)
    assert set(fresh.typestore.cache) == generated          # nothing left to generate at the first message
    assert list(back.joint_names) == names
