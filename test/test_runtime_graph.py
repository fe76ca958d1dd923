"""The lockstep graph: callback order within a tick, whole-step periods, topic typing, determinism."""
from __future__ import annotations

import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_nodes import conversions as cv
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.node_core import ACTUATE, CONTROL, MONITOR, SENSE, NodeCore

TYPES = RosbagsMessageTypes()


class Recorder(NodeCore):
    def __init__(self, name, log, timers=(), publishes=(), subscribes=()):
        super().__init__(TYPES)
        self.name = name
        for timer_name, period, phase in timers:
            self.add_timer(timer_name, period, lambda t, n=timer_name: log.append((round(t, 9), self.name, n)), phase)
        for topic, msgtype in publishes:
            self.add_publication(topic, msgtype)
        for topic, msgtype in subscribes:
            self.add_subscription(topic, msgtype, lambda msg, topic=topic: log.append(("heard", self.name, topic)))


def test_phases_order_callbacks_within_a_tick():
    log = []
    graph = Graph(1e-3)
    # declared in the "wrong" order on purpose: phase, not node order, decides
    graph.add(Recorder("physics", log, [("step", 1e-3, ACTUATE), ("sense", 1e-3, SENSE)]))
    graph.add(Recorder("controller", log, [("control", 2e-3, CONTROL)]))
    graph.add(Recorder("monitor", log, [("monitor", 2e-3, MONITOR)]))
    graph.run_ticks(3)
    assert log == [(0.0, "physics", "sense"), (0.0, "controller", "control"), (0.0, "monitor", "monitor"),
                   (0.0, "physics", "step"),
                   (0.001, "physics", "sense"), (0.001, "physics", "step"),
                   (0.002, "physics", "sense"), (0.002, "controller", "control"), (0.002, "monitor", "monitor"),
                   (0.002, "physics", "step")]


def test_periods_must_be_whole_steps():
    graph = Graph(1e-3)
    graph.add(Recorder("n", [], [("odd", 1.5e-3, CONTROL)]))
    with pytest.raises(ConfigError, match=r"n\.odd: 666\.667 Hz \(period 0\.0015 s.*is not a whole number"
                                          r".*e\.g\. 500 Hz"):
        graph.start()


def test_one_type_per_topic_and_declared_publications_only():
    graph = Graph(1e-3)
    graph.add(Recorder("a", [], publishes=[("x", cv.FLOAT64)]))
    with pytest.raises(ConfigError, match="topic 'x' is std_msgs/msg/Float64 elsewhere"):
        graph.add(Recorder("b", [], subscribes=[("x", cv.STRING)]))
    with pytest.raises(ConfigError, match="two nodes named 'a'"):
        graph.add(Recorder("a", []))
    node = graph.nodes[0]
    with pytest.raises(RuntimeError, match="undeclared topic 'y'"):
        node.publish("y", cv.float64(TYPES, 1.0))


def test_messages_reach_subscribers_and_taps_in_order():
    log, tapped = [], []
    graph = Graph(1e-3)
    sender = graph.add(Recorder("sender", log, publishes=[("x", cv.FLOAT64)]))
    graph.add(Recorder("r1", log, subscribes=[("x", cv.FLOAT64)]))
    graph.add(Recorder("r2", log, subscribes=[("x", cv.FLOAT64)]))
    graph.tap(lambda topic, msg, ns, publisher: tapped.append((topic, msg.data, ns, publisher)))
    graph.run_ticks(7)
    sender.publish("x", cv.float64(TYPES, 2.5))
    assert log == [("heard", "r1", "x"), ("heard", "r2", "x")]
    assert tapped == [("x", 2.5, 7_000_000, "sender")]


def test_tick_must_be_whole_nanoseconds():
    with pytest.raises(ConfigError, match="simulation.dt"):
        Graph(1.5e-10)


class LazyPublisher(NodeCore):
    """Builds its message only when the graph says somebody takes it; counts the builds."""

    def __init__(self, name="lazy"):
        super().__init__(TYPES)
        self.name = name
        self.built = 0
        self.add_publication("x", cv.FLOAT64)
        self.add_timer("x", 1e-3, self._tick, SENSE)

    def _tick(self, now):
        if self.wanted("x"):
            self.built += 1
            self.publish("x", cv.float64(TYPES, now))


class EveryTenth:
    """A tap taking one message in ten ticks from each stream, as the bag recorder at 100 Hz does."""

    def __init__(self):
        self.taken = []

    def route(self, topic, publisher):
        tap = self

        class Stream:
            due_ns = 0

            def record(self, msg, time_ns):
                self.due_ns = time_ns + 10_000_000
                tap.taken.append((topic, publisher, time_ns))
        return Stream()


def test_a_message_nobody_takes_is_not_built():
    graph = Graph(1e-3)
    alone = graph.add(LazyPublisher())
    graph.run_ticks(30)
    assert alone.built == 0                              # no subscriber, no tap

    graph = Graph(1e-3)
    sampled = graph.add(LazyPublisher())
    tap = EveryTenth()
    graph.tap(tap)                                       # a tap added after the node: its routes are made then
    graph.run_ticks(30)
    assert sampled.built == 3 and [ns for *_, ns in tap.taken] == [0, 10_000_000, 20_000_000]

    graph = Graph(1e-3)
    heard = []
    sampled = graph.add(LazyPublisher())
    graph.add(Recorder("listener", heard, subscribes=[("x", cv.FLOAT64)]))
    graph.tap(tap := EveryTenth())
    graph.run_ticks(30)
    assert sampled.built == 30 and len(heard) == 30 and len(tap.taken) == 3   # the subscriber wants them all

    graph = Graph(1e-3)
    everything = []
    graph.tap(lambda topic, msg, ns, publisher: everything.append(ns))   # a plain callable takes every message
    sampled = graph.add(LazyPublisher())                                  # (a node added after the tap)
    graph.run_ticks(5)
    assert sampled.built == 5 and everything == [k * 1_000_000 for k in range(5)]
