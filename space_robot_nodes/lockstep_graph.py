"""In-process topic graph with lockstep simulated time (the standalone runtime's core, and the pacing of the
dynamics node under ROS 2).

Time advances in ticks of one physics step (`tick` s). Every node timer has a period that is a whole number
of ticks; at each tick the due timers run in (phase, node order, declaration order) order - sensors, goals,
controllers, monitors, then the physics step to the next tick - and every message is delivered to its
subscribers synchronously, in subscription order. Nothing depends on wall time or thread scheduling, so
a run is bit-for-bit repeatable.

Topic names are the nodes' relative names (the runtime has no namespace: relative == absolute). A topic
has one message type; publishing an undeclared topic or declaring two types for one topic is an error.

Taps (the bag recorder) observe the published messages. A tap may take each publisher's stream of a topic
through a `TapRoute` of its own (`route(topic, publisher)`): an object whose `due_ns` says from which
simulated time on it takes the next message, and whose `record(msg, time_ns)` takes it. The graph calls
`record` only when a message is due, and answers a node's `wanted(topic)` with "a subscriber takes it, or a
tap route is due", so a message nobody takes is never built; a plain callable tap takes every message.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from space_robot_dynamics.errors import ConfigError

from .node_core import NodeCore

# Largest schedule table precomputed (ticks); beyond it the due timers are found by modulo every tick.
_MAX_CYCLE = 100_000
# Relative slack when checking that a period is a whole number of ticks.
_PERIOD_SLACK = 1e-9


# Periods are rates' inverses (1 / 30 Hz): read back as fractions with denominators up to this many (ns).
_PERIOD_DENOMINATOR = 10**9


def largest_common_step(periods: Iterable[float], limit: float) -> str:
    """The largest step (s, as text) no larger than `limit` in which each of `periods` (s) is a whole number of
    steps: G / k for G the periods' greatest common divisor (as fractions: gcd of numerators over lcm of
    denominators) and k the smallest whole number with G / k <= limit that keeps the step a finite decimal
    when G is one (k = 2^a 5^b), so that it can be written in a YAML file exactly."""
    fractions = [Fraction(p).limit_denominator(_PERIOD_DENOMINATOR) for p in periods]
    if not fractions:
        return f"{limit:.6g}"
    common = Fraction(math.gcd(*(f.numerator for f in fractions)), math.lcm(*(f.denominator for f in fractions)))
    k = max(1, math.ceil(common / Fraction(limit)))
    if _finite_decimal(common):
        while not _finite_decimal(Fraction(1, k)):
            k += 1
    step = common / k
    if _finite_decimal(step):
        digits = 0
        while (step * 10**digits).denominator != 1:
            digits += 1
        return f"{float(step):.{digits}f}"
    return repr(float(step))


def _finite_decimal(value: Fraction) -> bool:
    """Whether `value` has a finite decimal expansion (its denominator is 2^a 5^b)."""
    d = value.denominator
    for prime in (2, 5):
        while d % prime == 0:
            d //= prime
    return d == 1


class TapRoute(Protocol):
    """One publisher's stream of one topic as a tap takes it: `record(msg, time_ns)` is called for each message
    published at or after `due_ns` (simulated ns); the tap moves due_ns on to skip messages."""

    due_ns: int

    def record(self, msg: Any, time_ns: int) -> None: ...


class _CallbackRoute:
    """A plain callable tap: every message, as callback(topic, msg, time_ns, publisher)."""

    __slots__ = ("due_ns", "callback", "topic", "publisher")

    def __init__(self, callback, topic: str, publisher: str):
        self.due_ns = 0
        self.callback, self.topic, self.publisher = callback, topic, publisher

    def record(self, msg: Any, time_ns: int) -> None:
        self.callback(self.topic, msg, time_ns, self.publisher)


def _tap_route(tap, topic: str, publisher: str) -> TapRoute | None:
    route = getattr(tap, "route", None)
    return route(topic, publisher) if route is not None else _CallbackRoute(tap, topic, publisher)


class _Route:
    """Where one node's messages on one topic go: the topic's subscribers, then the taps' routes."""

    __slots__ = ("subscribers", "taps")

    def __init__(self, subscribers: list):
        self.subscribers = subscribers
        self.taps: list[TapRoute] = []


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
        self._taps: list = []
        self._routes: dict[str, dict[str, _Route]] = {}     # node name -> topic -> route of its messages
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
        node.attach(self._make_publish(node), self.now, self._make_wanted(node))
        return node

    def _declare(self, topic: str, msgtype: str, node: str) -> None:
        known = self._types.setdefault(topic, msgtype)
        if known != msgtype:
            raise ConfigError(f"{node}.topics", f"topic {topic!r} is {known} elsewhere, {node} uses {msgtype}")

    def _make_publish(self, node: NodeCore):
        routes, name, tick_ns = self._routes_of(node), node.name, self.tick_ns

        def publish(topic: str, msg: Any) -> None:
            route = routes.get(topic)
            if route is None:
                raise RuntimeError(f"node {name!r} publishes on undeclared topic {topic!r}")
            for callback in route.subscribers:
                callback(msg)
            if route.taps:
                stamp = self.ticks * tick_ns
                for tap in route.taps:
                    if stamp >= tap.due_ns:
                        tap.record(msg, stamp)
        return publish

    def _make_wanted(self, node: NodeCore):
        routes, tick_ns = self._routes_of(node), self.tick_ns

        def wanted(topic: str) -> bool:
            route = routes.get(topic)
            if route is None or route.subscribers:
                return True                    # (an undeclared topic: let publish() say so)
            stamp = self.ticks * tick_ns
            for tap in route.taps:
                if stamp >= tap.due_ns:
                    return True
            return False
        return wanted

    def _routes_of(self, node: NodeCore) -> dict[str, _Route]:
        routes = self._routes.get(node.name)
        if routes is None:
            routes = self._routes[node.name] = {}
            for pub in node.publications:
                # the topic's subscriber list itself: subscribers of nodes added later are seen
                route = routes[pub.topic] = _Route(self._subscribers.setdefault(pub.topic, []))
                route.taps = [r for tap in self._taps if (r := _tap_route(tap, pub.topic, node.name)) is not None]
        return routes

    def tap(self, tap: Callable[[str, Any, int, str], None]) -> None:
        """Observe messages: a callable tap(topic, msg, time_ns, publisher node name) sees every message; an
        object with `route(topic, publisher) -> TapRoute | None` chooses per stream (the bag recorder)."""
        self._taps.append(tap)
        for name, routes in self._routes.items():
            for topic, route in routes.items():
                tap_route = _tap_route(tap, topic, name)
                if tap_route is not None:
                    route.taps.append(tap_route)

    def topics(self) -> dict[str, TopicInfo]:
        return {name: TopicInfo(name, msgtype, self._latched.get(name, False),
                                tuple(self._publishers.get(name, ())), tuple(self._subscriber_nodes.get(name, ())))
                for name, msgtype in sorted(self._types.items())}

    # ---- running -------------------------------------------------------------------------------
    def now(self) -> float:
        return self.ticks * self.tick

    def now_ns(self) -> int:
        return self.ticks * self.tick_ns

    def check(self, sources: dict | None = None) -> list:
        """Every timer's period in ticks, checked: ConfigError naming the setting (and its file, from
        `sources`: file role -> path) and the fix when a period is not a whole number of ticks."""
        entries = []
        for n_index, node in enumerate(self.nodes):
            for t_index, timer in enumerate(node.timers):
                ratio = timer.period / self.tick
                if not math.isfinite(ratio):          # a period too long to count in ticks
                    raise self._period_error(node, timer, sources or {})
                every = round(ratio)
                if every < 1 or abs(ratio - every) > _PERIOD_SLACK * max(1.0, ratio):
                    raise self._period_error(node, timer, sources or {})
                entries.append(((timer.phase, n_index, t_index), every, timer.callback))
        return entries

    def _period_error(self, node: NodeCore, timer, sources: dict) -> ConfigError:
        ratio = timer.period / self.tick
        steps = max(1, round(ratio)) if math.isfinite(ratio) else 1
        problem = (f"{1.0 / timer.period:g} Hz (period {timer.period:g} s, timer {node.name}.{timer.name}) "
                   f"is not a whole number of simulation steps of {self.tick:g} s (simulation.dt): choose a rate "
                   f"that divides {1.0 / self.tick:g} Hz, e.g. {1.0 / (steps * self.tick):g} Hz, or a simulation.dt "
                   f"that divides {timer.period:g} s")
        if timer.setting is None:
            return ConfigError(f"{node.name}.{timer.name}", problem)
        role, field = timer.setting
        return ConfigError(field, problem, str(sources.get(role, f"the {role} file")))

    def start(self) -> None:
        """Fix the schedule, then let each node publish its latched topics."""
        if self._started:
            return
        entries = self.check()
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
