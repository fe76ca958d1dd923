"""A test node for the lockstep graph: records what it hears and publishes scripted messages.

    probe = TopicProbe(types, listen={"joint_states": JOINT_STATE}, publish={"arm_cmd": FLOAT64_MULTI_ARRAY})
    probe.script(at=0.1, topic="arm_cmd", message=lambda t: ...)   # published at the first tick >= 0.1 s
"""
from __future__ import annotations

from space_robot_nodes.node_core import COMMAND, SENSE, NodeCore


class TopicProbe(NodeCore):
    name = "probe"

    def __init__(self, types, listen: dict | None = None, publish: dict | None = None, period: float = 1e-3,
                 phase: int = COMMAND, name: str = "probe"):
        super().__init__(types)
        self.name = name
        self.heard: dict[str, list] = {topic: [] for topic in (listen or {})}
        self.times: dict[str, list] = {topic: [] for topic in (listen or {})}
        for topic, msgtype in (listen or {}).items():
            self.add_subscription(topic, msgtype, lambda msg, topic=topic: self._hear(topic, msg))
        for topic, msgtype in (publish or {}).items():
            self.add_publication(topic, msgtype)
        self._script: list[tuple[float, float | None, str, object]] = []
        if publish:
            self.add_timer("script", period, self._play, phase)

    def _hear(self, topic: str, msg) -> None:
        self.heard[topic].append(msg)
        self.times[topic].append(self.now())

    def script(self, at: float, topic: str, message, until: float | None = None) -> None:
        """Publish message(t) once at `at` (s), or at every tick from `at` to `until` when until is given."""
        self._script.append((at, until, topic, message))

    def _play(self, now: float) -> None:
        for entry in list(self._script):
            at, until, topic, message = entry
            if now >= at - 1e-9:
                if until is None or now > until + 1e-9:
                    self._script.remove(entry)
                if until is None or now <= until + 1e-9:
                    self.publish(topic, message(now) if callable(message) else message)

    def last(self, topic: str):
        return self.heard[topic][-1] if self.heard[topic] else None


__all__ = ["TopicProbe", "SENSE", "COMMAND"]
