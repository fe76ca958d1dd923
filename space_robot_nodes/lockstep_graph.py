"""In-process topic graph with lockstep simulated time (the standalone runtime's core, and the pacing of the
dynamics node under ROS 2).

Time advances in ticks of one physics step (`tick` s). Every node timer has a period that is a whole number
of ticks; at each tick the due timers run in (phase, node order, declaration order) order - sensors, goals,
controllers, monitors, then the physics step to the next tick - and every message is delivered to its
subscribers synchronously, in subscription order. Nothing depends on wall time or thread scheduling, so
a run is bit-for-bit repeatable.

Topic names are the nodes' relative names (the runtime has no namespace: relative == absolute). A topic
has one message type; publishing an undeclared topic or declaring two types for one topic is an error.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from space_robot_dynamics.errors import ConfigError

from .node_core import NodeCore

# Largest schedule table precomputed (ticks); beyond it the due timers are found by modulo every tick.
_MAX_CYCLE = 100_000
# Relative slack when checking that a period is a whole number of ticks.
_PERIOD_SLACK = 1e-9


@dataclass(frozen=True)
class TopicInfo:
    name: str
    msgtype: str
    transient_local: bool
    publishers: tuple
    subscribers: tuple


class Graph:
    """Nodes, topics and the lockstep clock."""

    def __init__(self, tick: float):
        if not tick > 0:
            raise ConfigError("tick", f"must be > 0 s, got {tick}")
        self.tick = float(tick)
        self.tick_ns = round(tick * 1e9)
        if abs(self.tick_ns - tick * 1e9) > 1e-6 * tick * 1e9 or self.tick_ns == 0:
            raise ConfigError("simulation.dt", f"must be a whole number of nanoseconds, got {tick}")
        self.nodes: list[NodeCore] = []
        self.ticks = 0
        self._types: dict[str, str] = {}
        self._latched: dict[str, bool] = {}
        self._publishers: dict[str, list[str]] = {}
        self._subscribers: dict[str, list[Callable[[Any], None]]] = {}
        self._subscriber_nodes: dict[str, list[str]] = {}
        self._taps: list[Callable[[str, Any, int, str], None]] = []
        self._schedule: list[tuple[int, Callable[[float], None]]] = []
        self._cycle: list[list[Callable[[float], None]]] | None = None
        self._started = False

    # ---- building ------------------------------------------------------------------------------
    def add(self, node: NodeCore) -> NodeCore:
        if self._started:
            raise RuntimeError("nodes must be added before the graph starts")
        if any(n.name == node.name for n in self.nodes):
            raise ConfigError("nodes", f"two nodes named {node.name!r}")
        self.nodes.append(node)
        for pub in node.publications:
            self._declare(pub.topic, pub.msgtype, node.name)
            self._latched[pub.topic] = self._latched.get(pub.topic, False) or pub.transient_local
            self._publishers.setdefault(pub.topic, []).append(node.name)
        for sub in node.subscriptions:
            self._declare(sub.topic, sub.msgtype, node.name)
            self._subscribers.setdefault(sub.topic, []).append(sub.callback)
            self._subscriber_nodes.setdefault(sub.topic, []).append(node.name)
        node.attach(self._make_publish(node), self.now)
        return node

    def _declare(self, topic: str, msgtype: str, node: str) -> None:
        known = self._types.setdefault(topic, msgtype)
        if known != msgtype:
            raise ConfigError(f"{node}.topics", f"topic {topic!r} is {known} elsewhere, {node} uses {msgtype}")

    def _make_publish(self, node: NodeCore):
        allowed = {p.topic for p in node.publications}

        def publish(topic: str, msg: Any) -> None:
            if topic not in allowed:
                raise RuntimeError(f"node {node.name!r} publishes on undeclared topic {topic!r}")
            self.deliver(topic, msg, node.name)
        return publish

    def tap(self, callback: Callable[[str, Any, int, str], None]) -> None:
        """Observe every message: callback(topic, msg, time_ns, publisher node name) (the recorder)."""
        self._taps.append(callback)

    def topics(self) -> dict[str, TopicInfo]:
        return {name: TopicInfo(name, msgtype, self._latched.get(name, False),
                                tuple(self._publishers.get(name, ())), tuple(self._subscriber_nodes.get(name, ())))
                for name, msgtype in sorted(self._types.items())}

    # ---- running -------------------------------------------------------------------------------
    def now(self) -> float:
        return self.ticks * self.tick

    def now_ns(self) -> int:
        return self.ticks * self.tick_ns

    def deliver(self, topic: str, msg: Any, publisher: str = "") -> None:
        for callback in self._subscribers.get(topic, ()):
            callback(msg)
        if self._taps:
            stamp = self.now_ns()
            for tap in self._taps:
                tap(topic, msg, stamp, publisher)

    def start(self) -> None:
        """Fix the schedule, then let each node publish its latched topics."""
        if self._started:
            return
        entries = []
        for n_index, node in enumerate(self.nodes):
            for t_index, timer in enumerate(node.timers):
                ratio = timer.period / self.tick
                every = round(ratio)
                if every < 1 or abs(ratio - every) > _PERIOD_SLACK * max(1.0, ratio):
                    raise ConfigError(f"{node.name}.{timer.name}", f"period {timer.period} s is not a whole number "
                                      f"of simulation steps ({self.tick} s)")
                entries.append(((timer.phase, n_index, t_index), every, timer.callback))
        entries.sort(key=lambda e: e[0])
        self._schedule = [(every, callback) for _key, every, callback in entries]
        cycle = math.lcm(*(every for every, _ in self._schedule)) if self._schedule else 1
        if cycle <= _MAX_CYCLE:
            self._cycle = [[cb for every, cb in self._schedule if k % every == 0] for k in range(cycle)]
        self._started = True
        for node in self.nodes:
            node.start()

    def run_ticks(self, count: int) -> None:
        """Run `count` ticks (each: every due timer at the current time, then time advances one tick)."""
        self.start()
        cycle, schedule = self._cycle, self._schedule
        for _ in range(count):
            k = self.ticks
            t = k * self.tick
            if cycle is not None:
                for callback in cycle[k % len(cycle)]:
                    callback(t)
            else:
                for every, callback in schedule:
                    if k % every == 0:
                        callback(t)
            self.ticks = k + 1
