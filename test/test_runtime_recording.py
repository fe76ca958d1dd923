"""The recorder's fast paths produce exactly what rosbags produces: the CDR encoders byte for byte against
rosbags' generated serialisers, and bags written through the chunk appender byte for byte against bags
written through rosbags' Writer.write. Messages are random, with the awkward cases the encoders' layout
caches must get right: empty arrays and strings, string lengths that leave every padding, frame ids that
change between transforms of one message, dimensions without labels."""
from __future__ import annotations

import numpy as np
import pytest
from rosbags.rosbag2 import CompressionMode, Reader, StoragePlugin, Writer

from space_robot_nodes import cdr_encoders
from space_robot_nodes import conversions as cv
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_runtime.bag_recorder import BAG_VERSION, offered_qos
from space_robot_runtime.mcap_append import CHUNK_LIMIT, ChunkAppender

TYPES = RosbagsMessageTypes()
MARKER = "visualization_msgs/msg/Marker"
STORE = TYPES.typestore
RNG = np.random.default_rng(7)


def text(max_length: int = 9) -> str:
    return "".join(RNG.choice(list("abc_/xyz01"), size=int(RNG.integers(0, max_length + 1))))


def random_messages():
    """(type, message) pairs of every type with a fast encoder."""
    n = int(RNG.integers(0, 5))
    names = [text() for _ in range(n)]
    velocity_count = n if RNG.random() < 0.7 else int(RNG.integers(0, 3))     # may disagree with the names
    yield cv.JOINT_STATE, TYPES.make(cv.JOINT_STATE, header=cv.header(TYPES, RNG.random() * 1e3, text()),
                                     name=names, position=RNG.normal(size=n),
                                     velocity=RNG.normal(size=velocity_count), effort=RNG.normal(size=n))
    odometry = cv.odometry(TYPES, RNG.random() * 1e3, text(), text(), RNG.normal(size=3), RNG.normal(size=4),
                           RNG.normal(size=3), RNG.normal(size=3))
    odometry.pose.covariance[:] = RNG.normal(size=36)
    odometry.twist.covariance[:] = RNG.normal(size=36)
    yield cv.ODOMETRY, odometry
    yield cv.TF_MESSAGE, cv.tf_message(TYPES, [cv.transform_stamped(TYPES, RNG.random() * 1e3, text(), text(),
                                                                    RNG.normal(size=3), RNG.normal(size=4))
                                               for _ in range(int(RNG.integers(0, 5)))])
    dims = [TYPES.make("std_msgs/msg/MultiArrayDimension", label=text(), size=int(RNG.integers(0, 9)),
                       stride=int(RNG.integers(0, 9))) for _ in range(int(RNG.integers(0, 3)))]
    yield cv.FLOAT64_MULTI_ARRAY, TYPES.make(
        cv.FLOAT64_MULTI_ARRAY, layout=TYPES.make("std_msgs/msg/MultiArrayLayout", dim=dims,
                                                  data_offset=int(RNG.integers(0, 5))),
        data=RNG.normal(size=int(RNG.integers(0, 6))))
    yield cv.VECTOR3_STAMPED, cv.vector3_stamped(TYPES, RNG.random() * 1e3, text(), RNG.normal(size=3))
    yield cv.CLOCK, cv.clock(TYPES, RNG.random() * 1e5)
    statuses = [cv.diagnostic_status(TYPES, int(RNG.integers(0, 4)), text(), text(30), text(),
                                     [(text(), RNG.normal()) for _ in range(int(RNG.integers(0, 4)))])
                for _ in range(int(RNG.integers(0, 4)))]
    yield cv.DIAGNOSTIC_ARRAY, cv.diagnostic_array(TYPES, RNG.random() * 1e3, statuses)
    yield MARKER, random_marker()
    yield "visualization_msgs/msg/MarkerArray", TYPES.make("visualization_msgs/msg/MarkerArray", markers=[
        random_marker() for _ in range(int(RNG.integers(0, 4)))])


def random_marker():
    marker = TYPES.new(MARKER, header=cv.header(TYPES, RNG.random() * 1e3, text()), ns=text(),
                       id=int(RNG.integers(-5, 5)), type=int(RNG.integers(0, 12)), action=int(RNG.integers(0, 4)),
                       pose=TYPES.make("geometry_msgs/msg/Pose", position=cv.point(TYPES, RNG.normal(size=3)),
                                       orientation=cv.quaternion(TYPES, RNG.normal(size=4))),
                       scale=cv.vector3(TYPES, RNG.normal(size=3)), frame_locked=bool(RNG.random() < 0.5),
                       text=text(40), mesh_resource=text(), texture_resource=text(),
                       mesh_use_embedded_materials=bool(RNG.random() < 0.5))
    marker.color = TYPES.make("std_msgs/msg/ColorRGBA", **dict(zip("rgba", RNG.random(4).tolist())))
    marker.lifetime = cv.duration_msg(TYPES, RNG.random() * 10)
    marker.points = [cv.point(TYPES, RNG.normal(size=3)) for _ in range(int(RNG.integers(0, 3)))]
    marker.colors = [TYPES.make("std_msgs/msg/ColorRGBA", **dict(zip("rgba", RNG.random(4).tolist())))
                     for _ in range(int(RNG.integers(0, 3)))]
    marker.uv_coordinates = [TYPES.make("visualization_msgs/msg/UVCoordinate", u=float(RNG.random()),
                                        v=float(RNG.random())) for _ in range(int(RNG.integers(0, 3)))]
    marker.texture.header = cv.header(TYPES, RNG.random(), text())
    marker.texture.format = text()
    marker.texture.data = RNG.integers(0, 256, size=int(RNG.integers(0, 7)), dtype=np.uint8)
    marker.mesh_file.filename = text()
    marker.mesh_file.data = RNG.integers(0, 256, size=int(RNG.integers(0, 7)), dtype=np.uint8)
    return marker


def test_every_fast_encoder_writes_the_bytes_rosbags_writes():
    checked = set()
    for _ in range(150):
        for msgtype, msg in random_messages():
            encode = cdr_encoders.encoder_for(msgtype)
            assert encode(msg) == bytes(STORE.serialize_cdr(msg, msgtype)), msgtype
            checked.add(msgtype)
    assert checked == set(cdr_encoders.ENCODERS)
    assert cdr_encoders.encoder_for(cv.JOINT_TRAJECTORY) is None     # the rest go through rosbags


def test_the_encoders_follow_a_change_of_names_or_lengths():
    """A layout is cached per set of constant parts: a second message with other names must not reuse it."""
    a = cv.joint_state(TYPES, 1.0, ["a", "b"], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0])
    b = cv.joint_state(TYPES, 1.0, ["abcde", "b"], [1.0, 2.0], [3.0, 4.0], [5.0, 6.0])
    c = cv.joint_state(TYPES, 1.0, ["a", "b", "c"], [1.0, 2.0, 7.0], [3.0, 4.0, 8.0], [5.0, 6.0, 9.0])
    for msg in (a, b, c, a):
        assert cdr_encoders.encode_joint_state(msg) == bytes(STORE.serialize_cdr(msg, cv.JOINT_STATE))


def write_bag(path, messages, fast: bool):
    writer = Writer(path, version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connections = {topic: writer.add_connection(topic, msgtype, typestore=STORE,
                                                offered_qos_profiles=[offered_qos(False)])
                   for topic, msgtype in sorted({(t, m) for t, m, _, _ in messages})}
    write = writer.write
    if fast:
        appender = ChunkAppender.attach(writer)
        assert appender is not None, "the appender no longer recognises rosbags' MCAP writer"
        write = appender.write
    for topic, _msgtype, stamp, raw in messages:
        write(connections[topic], stamp, raw)
    writer.close()


@pytest.mark.slow
def test_the_chunk_appender_writes_the_bag_writer_write_writes(tmp_path):
    messages = []
    for k in range(600):                     # > 1 MiB in all: the appender must close chunks where rosbags does
        for msgtype, msg in random_messages():
            raw = bytes(STORE.serialize_cdr(msg, msgtype))
            messages.append((msgtype.split("/")[-1].lower(), msgtype, 1_000_000 * k + len(messages) % 7, raw))
        messages.append(("blob", cv.STRING, 1_000_000 * k, bytes(STORE.serialize_cdr(
            cv.string(TYPES, "x" * int(RNG.integers(0, 3000))), cv.STRING))))
    assert sum(len(raw) for *_, raw in messages) > CHUNK_LIMIT
    write_bag(tmp_path / "slow", messages, fast=False)
    write_bag(tmp_path / "fast", messages, fast=True)
    for name in ("slow.mcap", "metadata.yaml"):
        fast_name = name.replace("slow", "fast")
        slow_bytes = (tmp_path / "slow" / name).read_bytes()
        fast_bytes = (tmp_path / "fast" / fast_name).read_bytes()
        assert fast_bytes.replace(b"fast", b"slow") == slow_bytes, name
    with Reader(tmp_path / "fast") as reader:
        back = [(c.topic, ts, bytes(raw)) for c, ts, raw in reader.messages()]
    assert sorted(back) == sorted((topic, stamp, raw) for topic, _m, stamp, raw in messages)


def test_the_appender_leaves_per_message_compression_to_rosbags(tmp_path):
    writer = Writer(tmp_path / "c", version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    assert ChunkAppender.attach(writer) is not None
    writer.compression_mode = CompressionMode.MESSAGE     # what set_compression(MESSAGE, ...) sets
    assert ChunkAppender.attach(writer) is None
    writer.compression_mode = CompressionMode.NONE
    writer.close()
