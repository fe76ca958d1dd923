"""The tests' own rclpy node: subscriptions that keep what they hear, spun in a background thread."""
from __future__ import annotations

import threading
import time
from collections import defaultdict

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy


def latched_qos() -> QoSProfile:
    return QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


class Probe:
    def __init__(self, name: str = "space_robot_test_probe"):
        self.node = rclpy.create_node(name)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.lock = threading.Lock()
        self.heard: dict[str, list] = defaultdict(list)      # topic -> [(wall time, message)]
        self._subscriptions = {}
        self._running = True
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self._running:
            self.executor.spin_once(timeout_sec=0.05)

    def listen(self, topic: str, msg_class, qos=10):
        """Keep every message on `topic` (from now on; idempotent)."""
        if topic not in self._subscriptions:
            def keep(msg, topic=topic):
                with self.lock:
                    self.heard[topic].append((time.monotonic(), msg))
            self._subscriptions[topic] = self.node.create_subscription(msg_class, topic, keep, qos)
        return self

    def forget(self, topic: str) -> None:
        subscription = self._subscriptions.pop(topic, None)
        if subscription is not None:
            self.node.destroy_subscription(subscription)
        with self.lock:
            self.heard.pop(topic, None)

    def messages(self, topic: str, since: float = 0.0) -> list:
        return [msg for _at, msg in self.timed_messages(topic, since)]

    def timed_messages(self, topic: str, since: float = 0.0) -> list:
        """(wall time of arrival, message) pairs."""
        with self.lock:
            return [(at, msg) for at, msg in self.heard.get(topic, []) if at >= since]

    def wait_for(self, condition, timeout: float, what: str):
        """condition() until truthy (returned) or AssertionError after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}")
            time.sleep(0.05)

    def statuses(self, name: str, since: float = 0.0) -> list:
        """DiagnosticStatus entries named `name` heard on /diagnostics (listen to it first)."""
        return [status for msg in self.messages("/diagnostics", since) for status in msg.status
                if status.name == name]

    def close(self) -> None:
        self._running = False
        self._thread.join(5)
        self.executor.remove_node(self.node)
        self.node.destroy_node()


def values(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}
