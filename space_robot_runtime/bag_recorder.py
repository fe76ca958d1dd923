"""Recording the graph's topics to a rosbag2 directory in MCAP storage (rosbags writer).

Metadata version 8, so ROS 2 Humble and Jazzy both read the bag (space_robot_nodes/ros_distributions.py; with the
MCAP storage plugin, `ros2 bag play -s mcap`);
MCAP profile ros2 / ros2msg schemas / cdr messages, so Foxglove opens it. The high-rate types are encoded by
cdr_encoders (the same bytes as rosbags' serialiser, a fraction of its cost), the rest by rosbags, and
appended to the bag by mcap_append (the same bytes as rosbags' Writer.write). Latched topics
(robot_description, tf_static) are offered transient-local in the metadata, so `ros2 bag play` re-offers
them transient-local and RViz receives them however late it subscribes; the rest reliable/volatile.
Each publisher of a topic is decimated to `rate` on its own (the message at or after each 1/rate interval),
so a 10 Hz publisher sharing `diagnostics` with others loses nothing; the bag timestamp is the simulated
time of publication. A dropped message is never serialised, and `wants` tells the graph in advance which
messages will be kept, so a publisher nobody else listens to builds only those (lockstep_graph).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import StoragePlugin, Writer

from space_robot_nodes.cdr_encoders import encoder_for
from space_robot_nodes.lockstep_graph import TopicInfo
from space_robot_nodes.message_types import RosbagsMessageTypes, typename_of
from space_robot_nodes.ros_distributions import BAG_METADATA_VERSION

from .mcap_append import ChunkAppender

BAG_VERSION = BAG_METADATA_VERSION    # read by Humble and Jazzy
_DEFAULT_TIME = QosTime(0, 0)         # rmw "default" for deadline, lifespan, lease duration (= infinite)
VOLATILE_DEPTH = 10                   # rclpy's usual publisher history depth
LATCHED_DEPTH = 1                     # as robot_state_publisher's robot_description and tf_static


def _remember_qos_text() -> None:
    """rosbags' Writer turns each connection's QoS profiles into YAML text twice (add_connection and close) with
    a fresh ruamel emitter each time: ~3 ms a call, ~0.1 s for a bag of 17 topics, for the same two profiles.
    The text depends only on the profiles, so it is worked out once per distinct list (same function, same
    output). Installed only where rosbags has the module-level function this relies on."""
    import rosbags.rosbag2.writer as writer_module

    original = getattr(writer_module, "dump_qos_v8", None)
    if original is None or getattr(original, "remembers", False):
        return
    texts: dict[str, str] = {}

    def dump_qos_v8(qos):
        key = repr(list(qos))
        text = texts.get(key)
        if text is None:
            text = texts[key] = original(qos)
        return text

    dump_qos_v8.remembers = True
    writer_module.dump_qos_v8 = dump_qos_v8


def offered_qos(transient_local: bool) -> Qos:
    return Qos(QosHistory.KEEP_LAST, LATCHED_DEPTH if transient_local else VOLATILE_DEPTH, QosReliability.RELIABLE,
               QosDurability.TRANSIENT_LOCAL if transient_local else QosDurability.VOLATILE, _DEFAULT_TIME,
               _DEFAULT_TIME, QosLiveliness.AUTOMATIC, _DEFAULT_TIME, False)


class BagRecorder:
    """Writes every message of the recorded topics, decimating fast ones to `rate` Hz.

    `listeners` see exactly the recorded messages (the run trace), or those on the topics their
    `takes(topic)` accepts. With path None nothing is written, but the listeners are still fed (a run without
    output files).
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
            _remember_qos_text()
            self.writer = Writer(self.path, version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
            self.writer.open()
            for name, info in sorted(topics.items()):
                self.connections[name] = self.writer.add_connection(
                    name, info.msgtype, typestore=typestore,
                    offered_qos_profiles=[offered_qos(info.transient_local)])
            appender = ChunkAppender.attach(self.writer)
            self.write = appender.write if appender is not None else self.writer.write
            # rosbags generates each type's serialiser on first use (~10 ms): do it now, not inside the run (only
            # for the types without a fast encoder: the others never reach rosbags' serialiser)
            warm = RosbagsMessageTypes(typestore)
            for msgtype in sorted({info.msgtype for info in topics.values()}):
                if encoder_for(msgtype) is None:
                    typestore.serialize_cdr(warm.new(msgtype), msgtype)
        self.counts = dict.fromkeys(topics, 0)
        # the fast encoders of the high-rate types (byte-identical to rosbags), rosbags for the rest
        self._encoders = {name: encoder_for(info.msgtype) or partial(typestore.serialize_cdr, typename=info.msgtype)
                          for name, info in topics.items()}
        self._routes: dict[tuple[str, str], _Stream | None] = {}
        self._closed = False

    def route(self, topic: str, publisher: str) -> _Stream | None:
        """The stream of `publisher` on `topic` (lockstep_graph.TapRoute), None for a topic not recorded."""
        key = (topic, publisher)
        if key not in self._routes:
            info = self.topics.get(topic)
            self._routes[key] = None if info is None else _Stream(self, topic, info)
        return self._routes[key]

    def take_next_message_of_every_stream(self) -> None:
        """The next message of every stream is recorded whatever the decimation (the run's final instant)."""
        for stream in self._routes.values():
            if stream is not None:
                stream.due_ns = 0

    def set_custom_data(self, key: str, value: str) -> None:
        if self.writer is not None:
            self.writer.set_custom_data(key, value)

    def close(self) -> None:
        if not self._closed and self.writer is not None:
            self.writer.close()
        self._closed = True


class _Stream:
    """One publisher's messages on one recorded topic: decimation, type check, encoding, writing."""

    __slots__ = ("due_ns", "recorder", "topic", "msgtype", "period_ns", "encode", "connection", "listeners")

    def __init__(self, recorder: BagRecorder, topic: str, info: TopicInfo):
        self.due_ns = 0                       # simulated time (ns) from which the next message is kept
        self.recorder, self.topic, self.msgtype = recorder, topic, info.msgtype
        self.period_ns = 0 if info.transient_local else recorder.period_ns    # latched topics: every message
        self.encode = recorder._encoders[topic]
        self.connection = recorder.connections.get(topic)
        self.listeners = tuple(listener for listener in recorder.listeners
                               if getattr(listener, "takes", None) is None or listener.takes(topic))

    def record(self, msg: Any, time_ns: int) -> None:
        self.due_ns = time_ns + self.period_ns
        if getattr(msg, "__msgtype__", None) != self.msgtype and typename_of(msg) != self.msgtype:
            raise TypeError(f"topic {self.topic!r}: expected {self.msgtype}, got {typename_of(msg)}")
        recorder = self.recorder
        if recorder.writer is not None:
            recorder.write(self.connection, time_ns, self.encode(msg))
        recorder.counts[self.topic] += 1
        for listener in self.listeners:
            listener(self.topic, msg, time_ns)
