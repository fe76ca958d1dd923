"""Builders for the messages the nodes publish every control period, with their constant parts made once.

The generic builders in `conversions` look everything up and copy every array on each call; at 1 kHz that
is most of the messaging cost. These builders fetch their message classes once, build the constant parts
(joint name lists, frame ids, Float64MultiArray layouts, zero covariances) once and share them between
messages, and build one builtin_interfaces/Time per instant for every message stamped then. Shared parts
are never mutated (node_core: published messages are read-only), so sharing them is safe; the name lists are
tuples under rosbags so they cannot be mutated at all.

Arrays passed to `JointStateBuilder.build` become the message's fields without a copy when the provider can
use them as they are (rosbags: contiguous float64): callers hand over freshly computed arrays, never state
they keep mutating. Float64MultiArrayBuilder copies, since controllers may reuse their output buffers.

Conventions are those of `conversions` (stamps in whole nanoseconds of simulated time, quaternions (x, y, z,
w), odometry pose in header.frame_id and twist in child_frame_id); test_nodes_messages.py checks that both
produce the same bytes.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import conversions as cv
from .message_types import MessageTypes


class Stamps:
    """builtin_interfaces/Time of simulated time t (s), built once per instant and shared by its messages,
    and one std_msgs/Header per frame id at that instant."""

    def __init__(self, types: MessageTypes):
        self._time = types.constructor("builtin_interfaces/msg/Time", ("sec", "nanosec"))
        self._header = types.constructor("std_msgs/msg/Header", ("stamp", "frame_id"))
        self._t: float | None = None
        self._stamp = None
        self._headers: dict[str, object] = {}

    def time(self, t: float):
        if t != self._t:
            sec, nanosec = divmod(cv.nanoseconds(t), cv.NANOSECONDS)
            self._stamp = self._time(sec, nanosec)
            self._t = t
            self._headers = {}
        return self._stamp

    def header(self, t: float, frame_id: str):
        if t != self._t:
            self.time(t)
        header = self._headers.get(frame_id)
        if header is None:
            header = self._headers[frame_id] = self._header(self._stamp, frame_id)
        return header


class JointStateBuilder:
    """sensor_msgs/JointState for a fixed list of joints (header.frame_id empty, as robot drivers publish)."""

    def __init__(self, types: MessageTypes, names: Sequence[str], stamps: Stamps | None = None):
        self.names = types.string_sequence(names)
        self.stamps = stamps if stamps is not None else Stamps(types)
        self._new = types.constructor(cv.JOINT_STATE, ("header", "name", "position", "velocity", "effort"))
        self._array = types.float64_owned

    def build(self, t: float, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray):
        """Positions (rad), velocities (rad/s), efforts (N m) in `names` order, handed over (see module)."""
        array = self._array
        return self._new(self.stamps.header(t, ""), self.names, array(position), array(velocity), array(effort))


class OdometryBuilder:
    """nav_msgs/Odometry of `child_frame_id` in `frame_id` with zero covariances (ground truth)."""

    def __init__(self, types: MessageTypes, frame_id: str, child_frame_id: str, stamps: Stamps | None = None):
        self.frame_id, self.child_frame_id = frame_id, child_frame_id
        self.stamps = stamps if stamps is not None else Stamps(types)
        new = types.constructor
        self._odometry = new(cv.ODOMETRY, ("header", "child_frame_id", "pose", "twist"))
        self._point = new("geometry_msgs/msg/Point", ("x", "y", "z"))
        self._quaternion = new("geometry_msgs/msg/Quaternion", ("x", "y", "z", "w"))
        self._vector = new("geometry_msgs/msg/Vector3", ("x", "y", "z"))
        self._pose = new("geometry_msgs/msg/Pose", ("position", "orientation"))
        self._twist = new("geometry_msgs/msg/Twist", ("linear", "angular"))
        self._pose_cov = new("geometry_msgs/msg/PoseWithCovariance", ("pose", "covariance"))
        self._twist_cov = new("geometry_msgs/msg/TwistWithCovariance", ("twist", "covariance"))
        self._covariance = _read_only(cv.covariance())

    def build(self, t: float, pose: Sequence[float], twist: Sequence[float], pose_covariance=None,
              twist_covariance=None):
        """Pose [x, y, z, qx, qy, qz, qw] (m, quaternion) in frame_id and twist [vx, vy, vz, wx, wy, wz] (m/s,
        rad/s) in child_frame_id, as Python floats: a free flyer's q and v slices as ndarray.tolist() gives them.
        Covariances: flat (36,) float64 arrays (an estimate's), else zero (the truth's); the message takes the
        array given, which its sender must not change afterwards."""
        x, y, z, qx, qy, qz, qw = pose
        vx, vy, vz, wx, wy, wz = twist
        vector = self._vector
        return self._odometry(
            self.stamps.header(t, self.frame_id), self.child_frame_id,
            self._pose_cov(self._pose(self._point(x, y, z), self._quaternion(qx, qy, qz, qw)),
                           self._covariance if pose_covariance is None else pose_covariance),
            self._twist_cov(self._twist(vector(vx, vy, vz), vector(wx, wy, wz)),
                            self._covariance if twist_covariance is None else twist_covariance))


class TransformBuilder:
    """geometry_msgs/TransformStamped (parent -> child) and tf2_msgs/TFMessage."""

    def __init__(self, types: MessageTypes, stamps: Stamps | None = None):
        self.stamps = stamps if stamps is not None else Stamps(types)
        new = types.constructor
        self._stamped = new("geometry_msgs/msg/TransformStamped", ("header", "child_frame_id", "transform"))
        self._transform = new("geometry_msgs/msg/Transform", ("translation", "rotation"))
        self._quaternion = new("geometry_msgs/msg/Quaternion", ("x", "y", "z", "w"))
        self._vector = new("geometry_msgs/msg/Vector3", ("x", "y", "z"))
        self._tf = new(cv.TF_MESSAGE, ("transforms",))

    def transform(self, t: float, parent: str, child: str, translation: Sequence[float],
                  rotation_xyzw: Sequence[float]):
        """Pose of `child` in `parent` at t: translation (m) and rotation (x, y, z, w), Python floats."""
        return self.stamped(self.stamps.header(t, parent), child, translation, rotation_xyzw)

    def stamped(self, header, child: str, translation: Sequence[float], rotation_xyzw: Sequence[float]):
        """The same with a ready std_msgs/Header (stamp and parent frame)."""
        return self._stamped(header, child, self._transform(self._vector(*translation),
                                                            self._quaternion(*rotation_xyzw)))

    def from_xyzquat(self, header, child: str, pose: Sequence[float]):
        """stamped() from [x, y, z, qx, qy, qz, qw] (pinocchio.SE3ToXYZQUAT order)."""
        x, y, z, qx, qy, qz, qw = pose
        return self._stamped(header, child, self._transform(self._vector(x, y, z), self._quaternion(qx, qy, qz, qw)))

    def message(self, transforms: list):
        return self._tf(transforms)


class Float64MultiArrayBuilder:
    """One-dimensional std_msgs/Float64MultiArray of `size` entries named by `label` (layout built once)."""

    def __init__(self, types: MessageTypes, size: int, label: str = ""):
        self.size = int(size)
        dim = types.make("std_msgs/msg/MultiArrayDimension", label=label, size=self.size, stride=self.size)
        self._layout = types.make("std_msgs/msg/MultiArrayLayout", dim=[dim], data_offset=0)
        self._new = types.constructor(cv.FLOAT64_MULTI_ARRAY, ("layout", "data"))
        self._sequence = types.float64_sequence

    def build(self, values):
        """A copy of `values` (size entries) as the data."""
        data = self._sequence(values)
        if len(data) != self.size:
            raise ValueError(f"expected {self.size} values, got {len(data)}")
        return self._new(self._layout, data)


class Vector3StampedBuilder:
    """geometry_msgs/Vector3Stamped in a fixed frame."""

    def __init__(self, types: MessageTypes, frame_id: str, stamps: Stamps | None = None):
        self.frame_id = frame_id
        self.stamps = stamps if stamps is not None else Stamps(types)
        self._new = types.constructor(cv.VECTOR3_STAMPED, ("header", "vector"))
        self._vector = types.constructor("geometry_msgs/msg/Vector3", ("x", "y", "z"))

    def build(self, t: float, xyz: Sequence[float]):
        """xyz as Python floats."""
        return self._new(self.stamps.header(t, self.frame_id), self._vector(*xyz))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class MarkerBuilder:
    """visualization_msgs/Marker from the fields a display sets; the fields no display here uses (lifetime,
    texture, uv coordinates, mesh) are one shared default each, and colours and scales are made once per value
    (shared: published messages are read-only). `pose(xyz, xyzw)` and `point(xyz)` take Python floats."""

    def __init__(self, types: MessageTypes):
        new = types.constructor
        cls = types.cls(MARKER)
        self.ARROW, self.CUBE, self.CYLINDER, self.TEXT = (int(cls.ARROW), int(cls.CUBE), int(cls.CYLINDER),
                                                           int(cls.TEXT_VIEW_FACING))
        self.LINE_LIST = int(cls.LINE_LIST)
        self.ADD, self.DELETE = int(cls.ADD), int(cls.DELETE)
        self._marker = new(MARKER, MARKER_FIELDS)
        self._point = new("geometry_msgs/msg/Point", ("x", "y", "z"))
        self._quaternion = new("geometry_msgs/msg/Quaternion", ("x", "y", "z", "w"))
        self._pose = new("geometry_msgs/msg/Pose", ("position", "orientation"))
        self._vector = new("geometry_msgs/msg/Vector3", ("x", "y", "z"))
        self._rgba = new("std_msgs/msg/ColorRGBA", ("r", "g", "b", "a"))
        self._lifetime = types.new("builtin_interfaces/msg/Duration")      # 0: until replaced or deleted
        self._texture = types.new("sensor_msgs/msg/CompressedImage")
        self._mesh_file = types.new("visualization_msgs/msg/MeshFile")
        self._colours: dict[tuple, object] = {}
        self._scales: dict[tuple, object] = {}
        self._identity = self._quaternion(0.0, 0.0, 0.0, 1.0)

    def marker(self, header, ns: str, marker_id: int, kind: int, pose, scale: tuple, rgba: tuple, points=(),
               text: str = "", frame_locked: bool = False, action: int | None = None):
        """scale (m) and rgba as tuples; points as built by point()."""
        colour = self._colours.get(rgba)
        if colour is None:
            colour = self._colours[rgba] = self._rgba(*rgba)
        vector = self._scales.get(scale)
        if vector is None:
            vector = self._scales[scale] = self._vector(*scale)
        return self._marker(header, ns, marker_id, kind, self.ADD if action is None else action, pose, vector, colour,
                            self._lifetime, frame_locked, list(points), [], "", self._texture, [], text, "",
                            self._mesh_file, False)

    def point(self, xyz) -> object:
        return self._point(*xyz)

    def pose(self, xyz, xyzw=None) -> object:
        return self._pose(self._point(*xyz), self._identity if xyzw is None else self._quaternion(*xyzw))


MARKER = "visualization_msgs/msg/Marker"
MARKER_FIELDS = ("header", "ns", "id", "type", "action", "pose", "scale", "color", "lifetime", "frame_locked",
                 "points", "colors", "texture_resource", "texture", "uv_coordinates", "text", "mesh_resource",
                 "mesh_file", "mesh_use_embedded_materials")
