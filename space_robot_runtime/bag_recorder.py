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
time of publication. The recording plan (space_robot_scenario/recording.py) may give a topic a rate of its own,
0 leaving it out of the bag: the listeners (the run trace) still take it at `rate`, so the summary does not depend
on the plan. A dropped message is never serialised, and each stream's `due_ns` tells the graph in advance which
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
    """Writes every message of the recorded topics, decimating fast ones to `rate` Hz (or the plan's `topic_rates`).

    `listeners` see the messages at `rate` (the run trace), on the topics their `takes(topic)` accepts (all without
    `takes`). With path None nothing is written and nothing counted, but the listeners are still fed (a run without
    output files): only their topics are taken.
    """

    def __init__(self, path: str | Path | None, typestore, topics: dict[str, TopicInfo], rate: float,
                 listeners: tuple[Callable[[str, Any, int], None], ...] = (),
                 topic_rates: dict[str, float] | None = None):
        """topic_rates: the recording plan's topics whose bag rate is not `rate` (Hz; 0: not in the bag)."""
        self.path = None if path is None else Path(path)
        self.typestore = typestore
        self.period_ns = round(1e9 / rate)
        self.topic_rates = dict(topic_rates or {})
        self.counts = dict.fromkeys(topics, 0)       # messages in the bag per topic (none without a bag)
        topics = {name: info for name, info in topics.items()
                  if (path is not None and self.topic_rates.get(name, rate) > 0.0)
                  or any(_takes(listener, name) for listener in listeners)}
        self.listeners = listeners
        self.topics = topics
        self.connections = {}
        self.writer = None
        if self.path is not None:
            _remember_qos_text()
            self.writer = Writer(self.path, version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
            self.writer.open()
            for name, info in sorted(topics.items()):
                if self.topic_rates.get(name, rate) == 0.0:        # the listeners' only
                    continue
                self.connections[name] = self.writer.add_connection(
                    name, info.msgtype, typestore=typestore,
                    offered_qos_profiles=[offered_qos(info.transient_local)])
            appender = ChunkAppender.attach(self.writer)
            self.write = appender.write if appender is not None else self.writer.write
            # rosbags generates each type's serialiser on first use (~10 ms): do it now, not inside the run (only
            # for the types without a fast encoder: the others never reach rosbags' serialiser)
            warm = RosbagsMessageTypes(typestore)
            for msgtype in sorted({topics[name].msgtype for name in self.connections}):
                if encoder_for(msgtype) is None:
                    typestore.serialize_cdr(warm.new(msgtype), msgtype)
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
                if stream.kept:
                    stream.write_due_ns = 0
                if stream.listeners:
                    stream.listen_due_ns = 0
                stream.due_ns = min(stream.write_due_ns, stream.listen_due_ns)

    def set_custom_data(self, key: str, value: str) -> None:
        if self.writer is not None:
            self.writer.set_custom_data(key, value)

    def close(self) -> None:
        if not self._closed and self.writer is not None:
            self.writer.close()
        self._closed = True


def _takes(listener, topic: str) -> bool:
    takes = getattr(listener, "takes", None)
    return takes is None or takes(topic)


class _Stream:
    """One publisher's messages on one recorded topic: decimation (the bag's rate and the listeners' rate, the same
    unless the plan gives the topic a rate of its own), type check, encoding, writing."""

    __slots__ = ("due_ns", "write_due_ns", "listen_due_ns", "recorder", "topic", "msgtype", "write_period_ns",
                 "listen_period_ns", "kept", "encode", "connection", "listeners")

    def __init__(self, recorder: BagRecorder, topic: str, info: TopicInfo):
        self.recorder, self.topic, self.msgtype = recorder, topic, info.msgtype
        bag_rate = recorder.topic_rates.get(topic)
        # in the bag: without one (a run without outputs: a campaign's) only the listeners take messages, and a topic
        # nobody else takes is never built
        self.kept = recorder.writer is not None and (bag_rate is None or bag_rate > 0.0)
        # latched topics: every message
        self.listen_period_ns = 0 if info.transient_local else recorder.period_ns
        self.write_period_ns = 0 if info.transient_local else \
            recorder.period_ns if bag_rate is None or not self.kept else round(1e9 / bag_rate)
        self.encode = recorder._encoders[topic]
        self.connection = recorder.connections.get(topic)
        self.listeners = tuple(listener for listener in recorder.listeners if _takes(listener, topic))
        # simulated times (ns) from which the next message is kept by the bag, by the listeners, by either
        self.write_due_ns = 0 if self.kept else _NEVER
        self.listen_due_ns = 0 if self.listeners else _NEVER
        self.due_ns = 0

    def record(self, msg: Any, time_ns: int) -> None:
        if getattr(msg, "__msgtype__", None) != self.msgtype and typename_of(msg) != self.msgtype:
            raise TypeError(f"topic {self.topic!r}: expected {self.msgtype}, got {typename_of(msg)}")
        if time_ns >= self.write_due_ns:
            self.write_due_ns = time_ns + self.write_period_ns
            recorder = self.recorder
            recorder.write(self.connection, time_ns, self.encode(msg))
            recorder.counts[self.topic] += 1
        if time_ns >= self.listen_due_ns:
            self.listen_due_ns = time_ns + self.listen_period_ns
            for listener in self.listeners:
                listener(self.topic, msg, time_ns)
        self.due_ns = min(self.write_due_ns, self.listen_due_ns)


_NEVER = 2**62          # ns: a due time no run reaches
