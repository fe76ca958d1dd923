"""The parts of the rclpy glue that run without ROS: the QoS each publisher and subscription gets (against a
small stand-in of rclpy.qos) and the stop signals (real signals, no rclpy).

The stand-in models QoSProfile's fields only: not rclpy's executor, wait sets, raw take and publish, the
middleware's delivery, nor signal handling and shutdown. Everything the host does with rclpy itself (the loop,
pacing, topics, QoS on the wire, Ctrl-C under launch) is tested against a real ROS 2 Humble in test/ros2/.
"""
from __future__ import annotations

import enum
import os
import signal
import sys
import types as pytypes

import pytest

from space_robot_nodes.ros import node_host
from space_robot_nodes.ros.stop_signals import StopSignals


@pytest.fixture
def qos_stand_in(monkeypatch):
    qos = pytypes.ModuleType("rclpy.qos")
    qos.DurabilityPolicy = enum.Enum("DurabilityPolicy", "TRANSIENT_LOCAL VOLATILE")
    qos.HistoryPolicy = enum.Enum("HistoryPolicy", "KEEP_LAST")
    qos.ReliabilityPolicy = enum.Enum("ReliabilityPolicy", "RELIABLE BEST_EFFORT")
    qos.QoSProfile = lambda **kw: pytypes.SimpleNamespace(**kw)
    monkeypatch.setitem(sys.modules, "rclpy", pytypes.ModuleType("rclpy"))
    monkeypatch.setitem(sys.modules, "rclpy.qos", qos)


def test_latched_topics_are_transient_local_depth_one(qos_stand_in):
    latched, plain = node_host.qos_profile(True), node_host.qos_profile(False)
    assert (latched.durability.name, latched.depth) == ("TRANSIENT_LOCAL", node_host.LATCHED_DEPTH)
    assert (plain.durability.name, plain.depth) == ("VOLATILE", node_host.QUEUE_DEPTH)
    assert latched.reliability.name == plain.reliability.name == "RELIABLE"


def test_state_subscriptions_keep_one_and_the_clock_is_best_effort(qos_stand_in):
    state = node_host.qos_profile(False, depth=1)
    clock = node_host.qos_profile(False, depth=1, best_effort=True)
    assert (state.depth, state.reliability.name) == (1, "RELIABLE")
    assert clock.reliability.name == "BEST_EFFORT"      # as rclpy's own /clock subscription


def test_stop_signals_note_the_first_signal_and_never_raise():
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    stop = StopSignals().install()
    try:
        assert not stop.stop_requested
        os.kill(os.getpid(), signal.SIGINT)        # a terminal's Ctrl-C ...
        os.kill(os.getpid(), signal.SIGINT)        # ... and launch's: no KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGTERM)       # launch's escalation: the process lives on
        assert stop.stop_requested and stop.received == "SIGINT" and stop.count == 3
    finally:
        stop.restore()
    assert {s: signal.getsignal(s) for s in previous} == previous


def test_a_node_without_rclpy_says_so_and_leaves_the_signal_handlers_alone(monkeypatch, capsys):
    from space_robot_nodes.ros import dynamics_node

    monkeypatch.setitem(sys.modules, "rclpy", None)        # import rclpy -> ImportError
    before = signal.getsignal(signal.SIGINT)
    assert dynamics_node.main([]) == 1
    assert "rclpy is not available" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before
