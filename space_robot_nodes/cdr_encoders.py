"""CDR encoders for the message types the recorder writes at the bag rate, byte for byte those of rosbags.

rosbags' generated serialisers walk every field of every message, strings included; the runtime records the
same few types 100 times a second with the same frame ids, joint names and array lengths each time. These
encoders lay such a message out once per distinct set of constant parts (frame ids, names, labels, lengths)
as constant byte runs around the numeric fields, then fill in only the numbers. Any type without an encoder
here goes through rosbags (`encoder_for` returns None).

Wire format (OMG CDR as ROS 2 uses it, little-endian): a 4-byte encapsulation header 00 01 00 00, then the
fields in definition order, each primitive aligned to its own size counted from the end of the header;
strings are a uint32 length including the terminating NUL, the bytes, the NUL; sequences a uint32 count and
the elements (float64 elements aligned to 8 only when there are any). test_runtime_cdr.py checks every
encoder against rosbags' serialiser on messages with odd string lengths and empty arrays.
"""
from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

ENCAPSULATION = b"\x00\x01\x00\x00"         # CDR little-endian, no options
_STAMP = struct.Struct("<iI")               # builtin_interfaces/Time: int32 sec, uint32 nanosec
_U32 = struct.Struct("<I")
_D3 = struct.Struct("<3d")
_D7 = struct.Struct("<7d")
_D6 = struct.Struct("<6d")


class _Layout:
    """Builds constant byte runs, tracking the position (from the end of the encapsulation header)."""

    def __init__(self, pos: int = 0):
        self.pos = pos
        self.parts: list[bytes] = []

    def align(self, size: int) -> _Layout:
        pad = -self.pos % size
        if pad:
            self.raw(b"\x00" * pad)
        return self

    def raw(self, data: bytes) -> _Layout:
        self.parts.append(data)
        self.pos += len(data)
        return self

    def u32(self, value: int) -> _Layout:
        return self.align(4).raw(_U32.pack(value))

    def string(self, text: str) -> _Layout:
        data = text.encode()
        return self.u32(len(data) + 1).raw(data + b"\x00")

    def doubles(self, count: int) -> _Layout:
        """Room for `count` float64 filled in later: only the alignment is laid out here."""
        if count:
            self.align(8)
        self.pos += 8 * count
        return self

    def take(self) -> bytes:
        """The bytes laid out since the last take()."""
        out, self.parts = b"".join(self.parts), []
        return out


_MAX_PLANS = 4096           # per cache: a publisher whose names change every message must not grow it forever


def _remember(cache: dict, key, plan):
    if len(cache) >= _MAX_PLANS:
        cache.clear()
    cache[key] = plan
    return plan


def _f64(values) -> bytes:
    return np.asarray(values, dtype="<f8").tobytes()


# ---- sensor_msgs/JointState ----------------------------------------------------------------------
_joint_state_plans: dict[tuple, tuple[bytes, bytes, bytes, bytes]] = {}


def _joint_state_plan(frame_id: str, names: tuple, n_pos: int, n_vel: int, n_eff: int):
    layout = _Layout(_STAMP.size).string(frame_id).u32(len(names))
    for name in names:
        layout.string(name)
    head = layout.u32(n_pos).doubles(n_pos).take()
    mid_vel = layout.u32(n_vel).doubles(n_vel).take()
    mid_eff = layout.u32(n_eff).doubles(n_eff).take()
    return head, mid_vel, mid_eff


def encode_joint_state(msg) -> bytes:
    header, position, velocity, effort = msg.header, msg.position, msg.velocity, msg.effort
    key = (header.frame_id, tuple(msg.name), len(position), len(velocity), len(effort))
    plan = _joint_state_plans.get(key)
    if plan is None:
        plan = _remember(_joint_state_plans, key, _joint_state_plan(*key))
    head, mid_vel, mid_eff = plan
    stamp = header.stamp
    return b"".join((ENCAPSULATION, _STAMP.pack(stamp.sec, stamp.nanosec), head, _f64(position), mid_vel,
                     _f64(velocity), mid_eff, _f64(effort)))


# ---- nav_msgs/Odometry ----------------------------------------------------------------------------
_odometry_plans: dict[tuple, bytes] = {}


def _odometry_plan(frame_id: str, child_frame_id: str) -> bytes:
    return _Layout(_STAMP.size).string(frame_id).string(child_frame_id).align(8).take()


def encode_odometry(msg) -> bytes:
    header = msg.header
    key = (header.frame_id, msg.child_frame_id)
    head = _odometry_plans.get(key)
    if head is None:
        head = _remember(_odometry_plans, key, _odometry_plan(*key))
    stamp, pose, twist = header.stamp, msg.pose, msg.twist
    p, o = pose.pose.position, pose.pose.orientation
    lin, ang = twist.twist.linear, twist.twist.angular
    return b"".join((ENCAPSULATION, _STAMP.pack(stamp.sec, stamp.nanosec), head,
                     _D7.pack(p.x, p.y, p.z, o.x, o.y, o.z, o.w), _f64(pose.covariance),
                     _D6.pack(lin.x, lin.y, lin.z, ang.x, ang.y, ang.z), _f64(twist.covariance)))


# ---- tf2_msgs/TFMessage -----------------------------------------------------------------------------
_transform_plans: dict[tuple, tuple[bytes, bytes, int]] = {}


def _transform_plan(frame_id: str, child_frame_id: str, offset: int) -> tuple[bytes, bytes, int]:
    """(padding before the stamp, the bytes between stamp and numbers, length of the whole transform) for a
    TransformStamped starting at a position `offset` mod 8 (the only thing its alignment depends on)."""
    layout = _Layout(offset)
    pad = layout.align(4).take()
    layout.pos += _STAMP.size
    between = layout.string(frame_id).string(child_frame_id).align(8).take()
    return pad, between, len(pad) + _STAMP.size + len(between) + _D7.size


def encode_tf_message(msg) -> bytes:
    transforms = msg.transforms
    parts = [ENCAPSULATION, _U32.pack(len(transforms))]
    pos = _U32.size
    for t in transforms:
        header = t.header
        key = (header.frame_id, t.child_frame_id, pos % 8)
        plan = _transform_plans.get(key)
        if plan is None:
            plan = _remember(_transform_plans, key, _transform_plan(*key))
        pad, between, length = plan
        stamp, tr = header.stamp, t.transform
        v, r = tr.translation, tr.rotation
        parts += (pad, _STAMP.pack(stamp.sec, stamp.nanosec), between, _D7.pack(v.x, v.y, v.z, r.x, r.y, r.z, r.w))
        pos += length
    return b"".join(parts)


# ---- std_msgs/Float64MultiArray ---------------------------------------------------------------------
_array_plans: dict[tuple, bytes] = {}


def _array_plan(dims: tuple, data_offset: int, count: int) -> bytes:
    layout = _Layout().u32(len(dims))
    for label, size, stride in dims:
        layout.string(label).u32(size).u32(stride)
    return layout.u32(data_offset).u32(count).doubles(count).take()


def encode_float64_multi_array(msg) -> bytes:
    layout, data = msg.layout, msg.data
    key = (tuple((d.label, d.size, d.stride) for d in layout.dim), layout.data_offset, len(data))
    head = _array_plans.get(key)
    if head is None:
        head = _remember(_array_plans, key, _array_plan(*key))
    return b"".join((ENCAPSULATION, head, _f64(data)))


# ---- geometry_msgs/Vector3Stamped, rosgraph_msgs/Clock ------------------------------------------------
_vector_plans: dict[str, bytes] = {}


def encode_vector3_stamped(msg) -> bytes:
    header = msg.header
    head = _vector_plans.get(header.frame_id)
    if head is None:
        head = _remember(_vector_plans, header.frame_id, _Layout(_STAMP.size).string(header.frame_id).align(8).take())
    stamp, v = header.stamp, msg.vector
    return b"".join((ENCAPSULATION, _STAMP.pack(stamp.sec, stamp.nanosec), head, _D3.pack(v.x, v.y, v.z)))


def encode_clock(msg) -> bytes:
    return ENCAPSULATION + _STAMP.pack(msg.clock.sec, msg.clock.nanosec)


# ---- diagnostic_msgs/DiagnosticArray ------------------------------------------------------------------
# Strings vary here (values are numbers printed as text), so no layout is fixed; but keys, names and most
# messages repeat, and each string's encoding (length, bytes, NUL) is kept, leaving only the padding to work out.
_strings: dict[str, bytes] = {}
_PADS = (b"", b"\x00", b"\x00\x00", b"\x00\x00\x00")


def _string(parts: list, pos: int, text: str) -> int:
    encoded = _strings.get(text)
    if encoded is None:
        data = text.encode()
        encoded = _remember(_strings, text, _U32.pack(len(data) + 1) + data + b"\x00")
    pad = -pos % 4
    if pad:
        parts.append(_PADS[pad])
    parts.append(encoded)
    return pos + pad + len(encoded)


def _count(parts: list, pos: int, count: int) -> int:
    pad = -pos % 4
    if pad:
        parts.append(_PADS[pad])
    parts.append(_U32.pack(count))
    return pos + pad + 4


def encode_diagnostic_array(msg) -> bytes:
    header = msg.header
    stamp = header.stamp
    parts = [ENCAPSULATION, _STAMP.pack(stamp.sec, stamp.nanosec)]
    pos = _string(parts, _STAMP.size, header.frame_id)
    statuses = msg.status
    pos = _count(parts, pos, len(statuses))
    for status in statuses:
        level = status.level                  # byte: an int (rosbags) or a one-byte bytes object (rclpy)
        parts.append(level if isinstance(level, bytes) else _BYTES[level])
        pos = _string(parts, pos + 1, status.name)
        pos = _string(parts, pos, status.message)
        pos = _string(parts, pos, status.hardware_id)
        values = status.values
        pos = _count(parts, pos, len(values))
        for pair in values:
            pos = _string(parts, pos, pair.key)
            pos = _string(parts, pos, pair.value)
    return b"".join(parts)


_BYTES = tuple(bytes((i,)) for i in range(256))


# ---- visualization_msgs/Marker (ROS 2 Humble definition) ---------------------------------------------
_MARKER_IDS = struct.Struct("<3i")          # id, type, action
_MARKER_POSE_SCALE = struct.Struct("<10d")  # pose position, orientation (x, y, z, w), scale
_MARKER_COLOUR_LIFE = struct.Struct("<4fiIB")   # color (r, g, b, a), lifetime (sec, nanosec), frame_locked
_POINT = struct.Struct("<3d")
_COLOUR = struct.Struct("<4f")
_UV = struct.Struct("<2f")


def _pad(parts: list, pos: int, size: int) -> int:
    pad = -pos % size
    if pad:
        parts.append(b"\x00" * pad)
    return pos + pad


def _uint8_sequence(parts: list, pos: int, data) -> int:
    pos = _count(parts, pos, len(data))
    raw = bytes(np.asarray(data, dtype=np.uint8)) if not isinstance(data, (bytes, bytearray)) else bytes(data)
    parts.append(raw)
    return pos + len(raw)


def encode_marker(msg) -> bytes:
    parts = [ENCAPSULATION]
    _marker(parts, 0, msg)
    return b"".join(parts)


def encode_marker_array(msg) -> bytes:
    markers = msg.markers
    parts = [ENCAPSULATION, _U32.pack(len(markers))]
    pos = _U32.size
    for marker in markers:
        pos = _marker(parts, pos, marker)
    return b"".join(parts)


def _marker(parts: list, pos: int, msg) -> int:
    """Lay out one Marker from `pos` (bytes after the encapsulation header); returns the position after it."""
    header = msg.header
    stamp = header.stamp
    pos = _pad(parts, pos, 4)
    parts.append(_STAMP.pack(stamp.sec, stamp.nanosec))
    pos = _string(parts, pos + _STAMP.size, header.frame_id)
    pos = _string(parts, pos, msg.ns)
    pos = _pad(parts, pos, 4)
    parts.append(_MARKER_IDS.pack(msg.id, msg.type, msg.action))
    pos = _pad(parts, pos + _MARKER_IDS.size, 8)
    pose, scale = msg.pose, msg.scale
    p, o = pose.position, pose.orientation
    parts.append(_MARKER_POSE_SCALE.pack(p.x, p.y, p.z, o.x, o.y, o.z, o.w, scale.x, scale.y, scale.z))
    c, life = msg.color, msg.lifetime
    parts.append(_MARKER_COLOUR_LIFE.pack(c.r, c.g, c.b, c.a, life.sec, life.nanosec, bool(msg.frame_locked)))
    pos += _MARKER_POSE_SCALE.size + _MARKER_COLOUR_LIFE.size
    points = msg.points
    pos = _count(parts, pos, len(points))
    if points:
        pos = _pad(parts, pos, 8)
        parts += [_POINT.pack(pt.x, pt.y, pt.z) for pt in points]
        pos += _POINT.size * len(points)
    colours = msg.colors
    pos = _count(parts, pos, len(colours))
    parts += [_COLOUR.pack(c.r, c.g, c.b, c.a) for c in colours]
    pos += _COLOUR.size * len(colours)
    pos = _string(parts, pos, msg.texture_resource)
    texture = msg.texture
    pos = _pad(parts, pos, 4)
    parts.append(_STAMP.pack(texture.header.stamp.sec, texture.header.stamp.nanosec))
    pos = _string(parts, pos + _STAMP.size, texture.header.frame_id)
    pos = _string(parts, pos, texture.format)
    pos = _uint8_sequence(parts, pos, texture.data)
    uv = msg.uv_coordinates
    pos = _count(parts, pos, len(uv))
    parts += [_UV.pack(c.u, c.v) for c in uv]
    pos += _UV.size * len(uv)
    pos = _string(parts, pos, msg.text)
    pos = _string(parts, pos, msg.mesh_resource)
    pos = _string(parts, pos, msg.mesh_file.filename)
    pos = _uint8_sequence(parts, pos, msg.mesh_file.data)
    parts.append(_BYTES[bool(msg.mesh_use_embedded_materials)])
    return pos + 1


ENCODERS: dict[str, Callable[[object], bytes]] = {
    "diagnostic_msgs/msg/DiagnosticArray": encode_diagnostic_array,
    "visualization_msgs/msg/Marker": encode_marker,
    "visualization_msgs/msg/MarkerArray": encode_marker_array,
    "sensor_msgs/msg/JointState": encode_joint_state,
    "nav_msgs/msg/Odometry": encode_odometry,
    "tf2_msgs/msg/TFMessage": encode_tf_message,
    "std_msgs/msg/Float64MultiArray": encode_float64_multi_array,
    "geometry_msgs/msg/Vector3Stamped": encode_vector3_stamped,
    "rosgraph_msgs/msg/Clock": encode_clock,
}


def encoder_for(msgtype: str) -> Callable[[object], bytes] | None:
    return ENCODERS.get(msgtype)
