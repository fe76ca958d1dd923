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
        # held around each spin_once and each destroy: destroying a subscription from a test while the executor
        # builds its wait set raised InvalidHandle in the spin thread (its QoS event handler), which then died and
        # every later test heard nothing (CI run 7)
        self._entities = threading.Lock()
        self.spin_errors: list[str] = []
        self._running = True
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self._running:
            with self._entities:
                try:
                    self.executor.spin_once(timeout_sec=0.05)
                except Exception as exc:  # noqa: BLE001 - kept and raised by close(): one bad spin must not deafen
                    self.spin_errors.append(repr(exc))            # every later test
            time.sleep(0)                  # let a waiting destroy take the lock

    def listen(self, topic: str, msg_class, qos=10):
        """Keep every message on `topic` (from now on; idempotent)."""
        if topic not in self._subscriptions:
            def keep(msg, topic=topic):
                with self.lock:
                    self.heard[topic].append((time.monotonic(), msg))
            self._subscriptions[topic] = self.node.create_subscription(msg_class, topic, keep, qos)
        return self

    def destroy(self, *entities) -> None:
        """Destroy subscriptions, publishers, timers, clients and action clients of the probe's node between two spins
        (see _entities: an action client destroyed during a spin failed Humble's wait set with "action client pointer
        is invalid")."""
        with self._entities:
            for entity in entities:
                kind = type(entity).__name__.lower()      # Subscription, Publisher, Timer, Client
                destroy = getattr(self.node, f"destroy_{kind}", None)
                if destroy is not None:
                    destroy(entity)
                else:                                     # an ActionClient destroys itself
                    entity.destroy()

    def forget(self, topic: str) -> None:
        subscription = self._subscriptions.pop(topic, None)
        if subscription is not None:
            with self._entities:
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
        return [status for _stamp, status in self.stamped_statuses(name, since)]

    def stamped_statuses(self, name: str, since: float = 0.0) -> list:
        """(header stamp in s, DiagnosticStatus) of the entries named `name`: the stamp is the publishing node's
        time of the report, so two reports of one node give its own rates without the skew of arrival times."""
        return [(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, status)
                for msg in self.messages("/diagnostics", since) for status in msg.status if status.name == name]

    def close(self) -> None:
        self._running = False
        self._thread.join(5)
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        assert not self.spin_errors, f"the probe's executor raised: {self.spin_errors[:3]}"


def values(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}
