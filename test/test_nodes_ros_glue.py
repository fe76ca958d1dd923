"""The rclpy glue's own logic, run against a minimal stand-in of the rclpy API (no ROS here): publishers with
the right QoS, subscriptions that survive bad input, timers on the node clock, and the paced lockstep of the
dynamics node (simulated time follows the steady clock times real_time_factor, without a backlog spiral).
Whether the calls match rclpy itself is for the launch test (test_launch_simulation.py) on a ROS machine."""
from __future__ import annotations

import enum
import sys
import types as pytypes

import numpy as np
import pytest

from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.node_config import load_nodes_config
from space_robot_nodes.ros import node_host
from space_robot_nodes.sawyer_adapter_core import SawyerAdapterCore

TYPES = RosbagsMessageTypes()
NODES = load_nodes_config("config/nodes.yaml")


class FakeTime:
    def __init__(self, ns):
        self.nanoseconds = ns


class FakeClock:
    def __init__(self, clock_type=None):
        self.clock_type = clock_type
        self.ns = 0

    def now(self):
        return FakeTime(self.ns)


class FakeNode:
    def __init__(self):
        self.publishers, self.subscriptions, self.timers, self.errors = {}, {}, [], []
        self.clock = FakeClock()
        self.parameters = {}

    def create_publisher(self, cls, topic, qos):
        sent = []
        self.publishers[topic] = (cls, qos, sent)
        return pytypes.SimpleNamespace(publish=sent.append)

    def create_subscription(self, cls, topic, callback, depth):
        self.subscriptions[topic] = callback

    def create_timer(self, period, callback, clock=None):
        self.timers.append((period, callback, clock))

    def get_clock(self):
        return self.clock

    def declare_parameter(self, name, value):
        return pytypes.SimpleNamespace(value=self.parameters.get(name, value))

    def get_logger(self):
        return pytypes.SimpleNamespace(error=self.errors.append, warn=lambda *a, **k: self.errors.append(a[0]),
                                       info=lambda *a: None)


@pytest.fixture
def fake_rclpy(monkeypatch):
    qos = pytypes.ModuleType("rclpy.qos")
    qos.DurabilityPolicy = enum.Enum("DurabilityPolicy", "TRANSIENT_LOCAL VOLATILE")
    qos.HistoryPolicy = enum.Enum("HistoryPolicy", "KEEP_LAST")
    qos.ReliabilityPolicy = enum.Enum("ReliabilityPolicy", "RELIABLE")
    qos.QoSProfile = lambda **kw: pytypes.SimpleNamespace(**kw)
    clock = pytypes.ModuleType("rclpy.clock")
    clock.Clock = FakeClock
    clock.ClockType = enum.Enum("ClockType", "STEADY_TIME")
    monkeypatch.setitem(sys.modules, "rclpy", pytypes.ModuleType("rclpy"))
    monkeypatch.setitem(sys.modules, "rclpy.qos", qos)
    monkeypatch.setitem(sys.modules, "rclpy.clock", clock)


def test_ros_timers_publishers_and_guarded_subscriptions(fake_rclpy):
    node = FakeNode()
    core = SawyerAdapterCore(TYPES, NODES.sawyer_adapter)
    node_host.RclpyHost(node, core)
    cfg = NODES.sawyer_adapter
    _cls, qos, sent = node.publishers[cfg.joint_command]
    assert qos.durability.name == "VOLATILE" and qos.depth == node_host.QUEUE_DEPTH
    assert sorted(p for p, _, _ in node.timers) == sorted(t.period for t in core.timers)
    node.subscriptions[cfg.arm_command](cv.float64_multi_array(TYPES, np.ones(7)))
    node.subscriptions[cfg.arm_command](None)              # garbage: logged, not raised
    assert node.errors and "message rejected" in node.errors[0]
    node.clock.ns = 5_000_000
    forward = next(cb for period, cb, _ in node.timers if period == pytest.approx(1e-3))
    forward()
    assert sent and cv.seconds(sent[-1].header.stamp) == pytest.approx(0.005)


def test_latched_topics_are_transient_local(fake_rclpy):
    assert node_host.qos_profile(True).durability.name == "TRANSIENT_LOCAL"
    assert node_host.qos_profile(True).depth == node_host.LATCHED_DEPTH


def test_paced_dynamics_follows_the_steady_clock(fake_rclpy, servicer_target):
    node = FakeNode()
    node.parameters["real_time_factor"] = 2.0
    sim = Simulator(servicer_target, SimulationSettings(dt=1e-3), servicer_target.neutral())
    host = node_host.RclpyHost(node, DynamicsCore(TYPES, sim, NODES.dynamics), mode="paced", tick=1e-3)
    (period, pace, clock), = node.timers
    assert period == node_host.PACING_PERIOD and clock.clock_type.name == "STEADY_TIME"
    pace()                                                 # starts the wall reference
    clock.ns = 50_000_000                                  # 50 ms of wall time at 2x -> 100 ms simulated
    pace()
    assert host.graph.ticks == 100 and sim.state.t == pytest.approx(0.1)
    _cls, _qos, clock_msgs = node.publishers[NODES.dynamics.clock]
    assert len(clock_msgs) == 100 and cv.seconds(clock_msgs[-1].clock) == pytest.approx(0.099)
    clock.ns = 10_050_000_000                              # 10 s stall: catch up at most MAX_CATCH_UP
    pace()
    assert host.graph.ticks == 100 + round(node_host.MAX_CATCH_UP / 1e-3)
    assert any("behind" in str(e) for e in node.errors)
    clock.ns += 5_000_000                                  # and then keep pace again from there
    pace()
    assert host.graph.ticks == 200 + 10
