"""What a node core declares (publications, subscriptions, timers) and how a host drives it.

A host is either the rclpy glue (`space_robot_nodes.ros.node_host`) or the lockstep graph of the standalone
runtime (`space_robot_nodes.lockstep_graph`). The host supplies the message classes, the clock (`now`,
seconds) and the `publish` sink; the core never imports rclpy.

Timers carry a phase that fixes the order of callbacks due at the same instant in the lockstep runtime,
mirroring a ros2_control cycle: SENSE (state out), COMMAND (goals/setpoints in), CONTROL (controller update),
MONITOR, then ACTUATE (the physics step to the next instant). Under rclpy the phase is ignored.

A core may ask `wanted(topic)` before building a message it publishes on a timer: the lockstep graph answers
whether a subscriber or the recorder takes a message on that topic at this instant, so a topic nobody reads
at this tick (e.g. clock at 1 kHz with only the 100 Hz recorder listening) costs nothing. Under rclpy the
answer is always yes: the middleware's subscribers are not known in advance.

A subscription may say how a host that does not deliver synchronously (ROS 2) should take it:
- `latest_only`: only the newest message matters (a state holder): a queue of one, the rest dropped unread;
- `time_source`: its header stamps are the publisher's simulated time at a rate the node's timers need (the
  controller's joint_states): under simulated time the ROS host moves the node's clock to each message's
  stamp and runs the timers then due, so a 1 kHz control update follows each 1 kHz state sample (as in the
  lockstep runtime) without a 1 kHz /clock.
The lockstep graph needs neither: it delivers every message at once and runs timers after the sensors.

Messages handed to `publish` belong to the receivers from then on: the publisher never mutates them, and
receivers treat them as read-only (as rclpy's intra-process delivery shares one object between subscribers).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .message_types import MessageTypes

SENSE, COMMAND, CONTROL, MONITOR, ACTUATE = range(5)


def _always(_topic: str) -> bool:
    return True


@dataclass(frozen=True)
class Publication:
    topic: str              # relative name
    msgtype: str            # ROS 2 interface name
    transient_local: bool = False   # latched: robot_description, tf_static


@dataclass(frozen=True)
class Subscription:
    topic: str
    msgtype: str
    callback: Callable[[Any], None]
    latest_only: bool = False       # see the module docstring
    time_source: bool = False


@dataclass(frozen=True)
class Timer:
    name: str
    period: float           # s
    callback: Callable[[float], None]   # called with the current time (s)
    phase: int = CONTROL
    # where the period is configured, (file role, dotted field), e.g. ("nodes", "dynamics.rates.tf"), so a
    # period the host cannot run is reported against the setting a user can change
    setting: tuple[str, str] | None = None


class NodeCore:
    """Base class of the node cores: declarations plus the host-provided clock and publisher."""

    name = "node"

    def __init__(self, types: MessageTypes):
        self.types = types
        self.publications: list[Publication] = []
        self.subscriptions: list[Subscription] = []
        self.timers: list[Timer] = []
        self._publish: Callable[[str, Any], None] | None = None
        self._now: Callable[[], float] = lambda: 0.0
        self._wanted: Callable[[str], bool] = _always

    # ---- declarations (called by the core's constructor) ---------------------------------------
    def add_publication(self, topic: str, msgtype: str, transient_local: bool = False) -> str:
        self.publications.append(Publication(topic, msgtype, transient_local))
        return topic

    def add_subscription(self, topic: str, msgtype: str, callback: Callable[[Any], None], latest_only: bool = False,
                         time_source: bool = False) -> None:
        self.subscriptions.append(Subscription(topic, msgtype, callback, latest_only, time_source))

    def add_timer(self, name: str, period: float, callback: Callable[[float], None], phase: int,
                  setting: tuple[str, str] | None = None) -> None:
        self.timers.append(Timer(name, period, callback, phase, setting))

    # ---- host side ---------------------------------------------------------------------------
    def attach(self, publish: Callable[[str, Any], None], now: Callable[[], float],
               wanted: Callable[[str], bool] | None = None) -> None:
        """Called by the host before any callback runs (`wanted`: see the module docstring; default always)."""
        self._publish = publish
        self._now = now
        self._wanted = wanted if wanted is not None else _always
        # the host's functions themselves, one call less per use (these run several times a physics step),
        # unless a core defines its own (the dynamics core is the clock of the simulation)
        if type(self).publish is NodeCore.publish:
            self.publish = publish
        if type(self).now is NodeCore.now:
            self.now = now
        if type(self).wanted is NodeCore.wanted:
            self.wanted = self._wanted

    def publish(self, topic: str, msg: Any) -> None:
        if self._publish is None:
            raise RuntimeError(f"node {self.name!r} publishes before a host attached it")
        self._publish(topic, msg)

    def now(self) -> float:
        return self._now()

    def wanted(self, topic: str) -> bool:
        """Would a message published on `topic` now reach anyone? (Build it only then.)"""
        return self._wanted(topic)

    def start(self) -> None:
        """Called by the host after attach(): publish latched topics here."""

    def finish(self, now: float) -> None:
        """Called by a host that stops the node (a ROS node on SIGINT/SIGTERM) after its last callback: publish
        what subscribers should see last. By default the node's diagnostics timers run once more."""
        for timer in self.timers:
            if timer.name == "diagnostics":
                timer.callback(now)
