"""Recording the graph's topics to a rosbag2 directory in MCAP storage (rosbags writer).

Metadata version 8, so ROS 2 Humble reads the bag (with the MCAP storage plugin, `ros2 bag play -s mcap`);
MCAP profile ros2 / ros2msg schemas / cdr messages, so Foxglove opens it. Latched topics
(robot_description, tf_static) are offered transient-local in the metadata, so `ros2 bag play` re-offers
them transient-local and RViz receives them however late it subscribes; the rest reliable/volatile.
Each publisher of a topic is decimated to `rate` on its own (the message at or after each 1/rate interval),
so a 10 Hz publisher sharing `diagnostics` with others loses nothing; the bag timestamp is the simulated
time of publication.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import StoragePlugin, Writer

from space_robot_nodes.lockstep_graph import TopicInfo
from space_robot_nodes.message_types import RosbagsMessageTypes, typename_of

BAG_VERSION = 8                       # Humble reads up to 8
_DEFAULT_TIME = QosTime(0, 0)         # rmw "default" for deadline, lifespan, lease duration (= infinite)
VOLATILE_DEPTH = 10                   # rclpy's usual publisher history depth
LATCHED_DEPTH = 1                     # as robot_state_publisher's robot_description and tf_static


def offered_qos(transient_local: bool) -> Qos:
    return Qos(QosHistory.KEEP_LAST, LATCHED_DEPTH if transient_local else VOLATILE_DEPTH, QosReliability.RELIABLE,
               QosDurability.TRANSIENT_LOCAL if transient_local else QosDurability.VOLATILE, _DEFAULT_TIME,
               _DEFAULT_TIME, QosLiveliness.AUTOMATIC, _DEFAULT_TIME, False)


class BagRecorder:
    """Writes every message of the recorded topics, decimating fast ones to `rate` Hz.

    `listeners` see exactly the recorded messages (the run trace). With path None nothing is written, but
    the listeners are still fed (a run without output files).
    """

    def __init__(self, path: str | Path | None, typestore, topics: dict[str, TopicInfo], rate: float,
                 listeners: tuple[Callable[[str, Any, int], None], ...] = ()):
        self.path = None if path is None else Path(path)
        self.typestore = typestore
        self.period_ns = round(1e9 / rate)
        self.listeners = listeners
        self.topics = topics
        self.connections = {}
        self.writer = None
        if self.path is not None:
            self.writer = Writer(self.path, version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
            self.writer.open()
            for name, info in sorted(topics.items()):
                self.connections[name] = self.writer.add_connection(
                    name, info.msgtype, typestore=typestore,
                    offered_qos_profiles=[offered_qos(info.transient_local)])
            # rosbags generates each type's serialiser on first use (~10 ms): do it now, not inside the run
            warm = RosbagsMessageTypes(typestore)
            for msgtype in sorted({info.msgtype for info in topics.values()}):
                typestore.serialize_cdr(warm.new(msgtype), msgtype)
        self._last_ns: dict[tuple[str, str], int] = {}
        self.counts = dict.fromkeys(topics, 0)
        self._closed = False

    def __call__(self, topic: str, msg: Any, time_ns: int, publisher: str = "") -> None:
        info = self.topics.get(topic)
        if info is None:
            return
        key = (topic, publisher)
        last = self._last_ns.get(key)
        if last is not None and not info.transient_local and time_ns - last < self.period_ns:
            return
        self._last_ns[key] = time_ns
        if typename_of(msg) != info.msgtype:
            raise TypeError(f"topic {topic!r}: expected {info.msgtype}, got {typename_of(msg)}")
        if self.writer is not None:
            self.writer.write(self.connections[topic], time_ns, self.typestore.serialize_cdr(msg, info.msgtype))
        self.counts[topic] += 1
        for listener in self.listeners:
            listener(topic, msg, time_ns)

    def set_custom_data(self, key: str, value: str) -> None:
        if self.writer is not None:
            self.writer.set_custom_data(key, value)

    def close(self) -> None:
        if not self._closed and self.writer is not None:
            self.writer.close()
        self._closed = True
