"""Every conversion between numpy quantities and ROS messages used by the nodes, in one place.

Builders take a `MessageTypes` provider first, so they produce rclpy or rosbags messages alike; they pass
every field (`make`, the fast path) except where a message's defaults are wanted (`new`). Readers
accept messages from either library and raise CommandError naming the field when a message is malformed
(wrong lengths, NaN/inf, unknown joints), so no node passes a bad value on.

Conventions (REP-103): SI units; quaternions (x, y, z, w); nav_msgs/Odometry pose in header.frame_id and
twist in child_frame_id; stamps are simulated time in seconds, rounded to whole nanoseconds.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from space_robot_dynamics.command_checks import all_finite
from space_robot_dynamics.errors import CommandError

from .message_types import MessageTypes

NANOSECONDS = 1_000_000_000

JOINT_STATE = "sensor_msgs/msg/JointState"
ODOMETRY = "nav_msgs/msg/Odometry"
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
FLOAT64_MULTI_ARRAY = "std_msgs/msg/Float64MultiArray"
FLOAT64 = "std_msgs/msg/Float64"
STRING = "std_msgs/msg/String"
EMPTY = "std_msgs/msg/Empty"
DIAGNOSTIC_ARRAY = "diagnostic_msgs/msg/DiagnosticArray"
DIAGNOSTIC_STATUS = "diagnostic_msgs/msg/DiagnosticStatus"
CLOCK = "rosgraph_msgs/msg/Clock"
QUATERNION_STAMPED = "geometry_msgs/msg/QuaternionStamped"
VECTOR3_STAMPED = "geometry_msgs/msg/Vector3Stamped"
JOINT_TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
BOOL = "std_msgs/msg/Bool"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
POSE_STAMPED = "geometry_msgs/msg/PoseStamped"
POSE_WITH_COVARIANCE_STAMPED = "geometry_msgs/msg/PoseWithCovarianceStamped"
IMU = "sensor_msgs/msg/Imu"

# diagnostic_msgs/DiagnosticStatus levels (values from its .msg definition; byte constants)
OK, WARN, ERROR, STALE = 0, 1, 2, 3
LEVEL_NAMES = {OK: "OK", WARN: "WARN", ERROR: "ERROR", STALE: "STALE"}


# ---- time ------------------------------------------------------------------------------------
def nanoseconds(t: float) -> int:
    """Seconds -> integer nanoseconds (round half to even, deterministic)."""
    return int(round(t * NANOSECONDS))


def time_msg(types: MessageTypes, t: float):
    sec, nanosec = divmod(nanoseconds(t), NANOSECONDS)
    return types.make("builtin_interfaces/msg/Time", sec=sec, nanosec=nanosec)


def duration_msg(types: MessageTypes, t: float):
    sec, nanosec = divmod(nanoseconds(t), NANOSECONDS)
    return types.make("builtin_interfaces/msg/Duration", sec=sec, nanosec=nanosec)


def seconds(stamp) -> float:
    """builtin_interfaces Time or Duration -> seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def header(types: MessageTypes, t: float, frame_id: str = ""):
    return types.make("std_msgs/msg/Header", stamp=time_msg(types, t), frame_id=frame_id)


def clock(types: MessageTypes, t: float):
    return types.make(CLOCK, clock=time_msg(types, t))


# ---- small std_msgs ----------------------------------------------------------------------------
def string(types: MessageTypes, text: str):
    return types.make(STRING, data=text)


def float64(types: MessageTypes, value: float):
    return types.make(FLOAT64, data=float(value))


def empty(types: MessageTypes):
    return types.new(EMPTY)


def boolean(types: MessageTypes, value: bool):
    return types.make(BOOL, data=bool(value))


def read_boolean(msg, field: str) -> bool:
    """std_msgs/Bool data as a bool, else CommandError naming `field`."""
    value = getattr(msg, "data", None)
    if not isinstance(value, (bool, np.bool_)):
        raise CommandError(field, f"expected a std_msgs/Bool, got data {value!r}")
    return bool(value)


def float64_multi_array(types: MessageTypes, data, label: str = ""):
    """A one-dimensional Float64MultiArray; `label` names what the entries are (layout.dim[0].label)."""
    values = np.asarray(data, dtype=float)
    dim = types.make("std_msgs/msg/MultiArrayDimension", label=label, size=len(values), stride=len(values))
    layout = types.make("std_msgs/msg/MultiArrayLayout", dim=[dim], data_offset=0)
    return types.make(FLOAT64_MULTI_ARRAY, layout=layout, data=types.float64_sequence(values))


def read_command_vector(msg, size: int, field: str) -> np.ndarray:
    """Float64MultiArray data as a vector of `size` finite numbers, else CommandError naming `field`."""
    try:
        values = np.asarray(msg.data, dtype=float)
    except (TypeError, ValueError) as exc:
        raise CommandError(field, f"data is not numeric: {exc}") from exc
    if values.ndim != 1 or len(values) != size:
        raise CommandError(field, f"expected {size} values, got {values.size}")
    if not all_finite(values):
        raise CommandError(field, f"non-finite values at indices {np.flatnonzero(~np.isfinite(values)).tolist()}")
    return values


# ---- joint states ------------------------------------------------------------------------------
def joint_state(types: MessageTypes, t: float, names: Sequence[str], position, velocity, effort):
    return types.make(JOINT_STATE, header=header(types, t), name=list(names),
                     position=types.float64_sequence(position), velocity=types.float64_sequence(velocity),
                     effort=types.float64_sequence(effort))


def read_joint_state(msg, names: Sequence[str], field: str = "joint_states") -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities of `names` (in that order) from a JointState; other joints are ignored.

    Raises CommandError if a joint is missing, the arrays disagree in length or a value is not finite.
    An empty velocity array is allowed by the message definition but not here: the controllers need rates.
    """
    msg_names = msg.name
    position = np.asarray(msg.position, dtype=float)
    velocity = np.asarray(msg.velocity, dtype=float)
    if len(position) != len(msg_names) or len(velocity) != len(msg_names):
        raise CommandError(field, f"{len(msg_names)} names but {len(position)} positions and "
                           f"{len(velocity)} velocities")
    if tuple(msg_names) != tuple(names):        # the usual case (same order as ours) needs no reordering
        index = {name: i for i, name in enumerate(msg_names)}
        missing = [name for name in names if name not in index]
        if missing:
            raise CommandError(f"{field}.name", f"missing joints {missing}")
        rows = [index[name] for name in names]
        position, velocity = position[rows], velocity[rows]
    if not (all_finite(position) and all_finite(velocity)):
        bad = [names[i] for i in np.flatnonzero(~(np.isfinite(position) & np.isfinite(velocity)))]
        raise CommandError(field, f"non-finite position or velocity for joints {bad}")
    return position, velocity


# ---- geometry ----------------------------------------------------------------------------------
def point(types: MessageTypes, xyz):
    return types.make("geometry_msgs/msg/Point", x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


def vector3(types: MessageTypes, xyz):
    return types.make("geometry_msgs/msg/Vector3", x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


def quaternion(types: MessageTypes, xyzw):
    return types.make("geometry_msgs/msg/Quaternion", x=float(xyzw[0]), y=float(xyzw[1]), z=float(xyzw[2]),
                     w=float(xyzw[3]))


def read_wrench_stamped(msg, frame: str, field: str, force_limit: float, torque_limit: float
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(force N, torque N m) of a WrenchStamped in `frame` (an empty frame_id means it), finite and within the
    limits on their norms; CommandError naming the field otherwise (a force setpoint, a thruster command)."""
    given = msg.header.frame_id
    if given not in ("", frame):
        raise CommandError(f"{field}.header.frame_id", f"must be {frame!r}, got {given!r}")
    force, torque = xyz_of(msg.wrench.force), xyz_of(msg.wrench.torque)
    for name, values in (("force", force), ("torque", torque)):
        if not np.isfinite(values).all():
            raise CommandError(f"{field}.wrench.{name}", f"non-finite value {values.tolist()}")
    if np.linalg.norm(force) > force_limit:
        raise CommandError(f"{field}.wrench.force", f"|f| = {np.linalg.norm(force):.6g} N exceeds the limit "
                                                    f"{force_limit:.6g} N")
    if np.linalg.norm(torque) > torque_limit:
        raise CommandError(f"{field}.wrench.torque", f"|t| = {np.linalg.norm(torque):.6g} N m exceeds the limit "
                                                     f"{torque_limit:.6g} N m")
    return force, torque


def xyz_of(msg) -> np.ndarray:
    return np.array([msg.x, msg.y, msg.z], dtype=float)


def xyzw_of(msg) -> np.ndarray:
    return np.array([msg.x, msg.y, msg.z, msg.w], dtype=float)


def vector3_stamped(types: MessageTypes, t: float, frame_id: str, xyz):
    return types.make(VECTOR3_STAMPED, header=header(types, t, frame_id), vector=vector3(types, xyz))


def wrench_stamped(types: MessageTypes, t: float, frame_id: str, force, torque):
    """A WrenchStamped: force (N) and torque (N m) in frame_id's axes, about its origin."""
    wrench = types.make("geometry_msgs/msg/Wrench", force=vector3(types, force), torque=vector3(types, torque))
    return types.make(WRENCH_STAMPED, header=header(types, t, frame_id), wrench=wrench)


def pose_stamped(types: MessageTypes, t: float, frame_id: str, position, xyzw):
    """A PoseStamped: position (m) and orientation (unit quaternion x, y, z, w) in frame_id."""
    return types.make(POSE_STAMPED, header=header(types, t, frame_id), pose=types.make(
        "geometry_msgs/msg/Pose", position=point(types, position), orientation=quaternion(types, xyzw)))


def quaternion_stamped(types: MessageTypes, t: float, frame_id: str, xyzw):
    return types.make(QUATERNION_STAMPED, header=header(types, t, frame_id), quaternion=quaternion(types, xyzw))


def read_quaternion_stamped(msg, frame_id: str, field: str, norm_tolerance: float) -> np.ndarray:
    """A unit quaternion (x, y, z, w) expressed in `frame_id` (an empty frame_id means `frame_id`).

    The quaternion is normalised if its norm is within `norm_tolerance` of 1; otherwise CommandError.
    """
    frame = msg.header.frame_id
    if frame not in ("", frame_id):
        raise CommandError(f"{field}.header.frame_id", f"must be {frame_id!r}, got {frame!r}")
    xyzw = xyzw_of(msg.quaternion)
    if not np.isfinite(xyzw).all():
        raise CommandError(f"{field}.quaternion", f"non-finite value {xyzw.tolist()}")
    norm = float(np.linalg.norm(xyzw))
    if abs(norm - 1.0) > norm_tolerance:
        raise CommandError(f"{field}.quaternion", f"not a unit quaternion (norm {norm:.6g})")
    return xyzw / norm


def covariance(size: int = 36) -> np.ndarray:
    """Zero covariance: ground-truth simulation output carries no estimation uncertainty."""
    return np.zeros(size, dtype=np.float64)


def not_provided(size: int = 9) -> np.ndarray:
    """sensor_msgs/Imu's mark of a quantity the sensor does not measure: element 0 of its covariance is -1."""
    values = np.zeros(size, dtype=np.float64)
    values[0] = -1.0
    return values


def imu(types: MessageTypes, t: float, frame_id: str, orientation_xyzw=None, orientation_covariance=None,
        angular_velocity=None, angular_velocity_covariance=None):
    """A sensor_msgs/Imu with what a sensor gives: an orientation (of frame_id in the world) and/or an angular
    velocity (rad/s, frame_id's axes), each with its 3x3 covariance (row-major); what it does not give (and
    the linear acceleration: no accelerometer here) is marked with -1 (REP-145, the message's definition)."""
    return types.make(
        IMU, header=header(types, t, frame_id),
        orientation=quaternion(types, orientation_xyzw if orientation_xyzw is not None else (0.0, 0.0, 0.0, 1.0)),
        orientation_covariance=np.asarray(orientation_covariance, np.float64).ravel()
        if orientation_xyzw is not None else not_provided(),
        angular_velocity=vector3(types, angular_velocity if angular_velocity is not None else (0.0, 0.0, 0.0)),
        angular_velocity_covariance=np.asarray(angular_velocity_covariance, np.float64).ravel()
        if angular_velocity is not None else not_provided(),
        linear_acceleration=vector3(types, (0.0, 0.0, 0.0)), linear_acceleration_covariance=not_provided())


def pose_with_covariance_stamped(types: MessageTypes, t: float, frame_id: str, position, xyzw, covariance_6x6):
    """Pose in frame_id; covariance of (x, y, z, rotation about frame_id's fixed X, Y, Z), row-major 6x6."""
    pose = types.make("geometry_msgs/msg/Pose", position=point(types, position), orientation=quaternion(types, xyzw))
    return types.make(POSE_WITH_COVARIANCE_STAMPED, header=header(types, t, frame_id), pose=types.make(
        "geometry_msgs/msg/PoseWithCovariance", pose=pose,
        covariance=np.asarray(covariance_6x6, np.float64).ravel()))


def odometry(types: MessageTypes, t: float, frame_id: str, child_frame_id: str, position, orientation_xyzw,
             linear_velocity, angular_velocity, pose_covariance=None, twist_covariance=None):
    """Pose of `child_frame_id` in `frame_id`; twist of `child_frame_id` expressed in `child_frame_id`. The
    covariances (6x6: pose about frame_id's axes, twist about child_frame_id's; nav_msgs/Odometry's convention)
    are zero unless given (the truth's)."""
    pose = types.make("geometry_msgs/msg/Pose", position=point(types, position),
                     orientation=quaternion(types, orientation_xyzw))
    twist = types.make("geometry_msgs/msg/Twist", linear=vector3(types, linear_velocity),
                      angular=vector3(types, angular_velocity))
    pose_covariance = covariance() if pose_covariance is None else np.asarray(pose_covariance, np.float64).ravel()
    twist_covariance = covariance() if twist_covariance is None else np.asarray(twist_covariance, np.float64).ravel()
    return types.make(ODOMETRY, header=header(types, t, frame_id), child_frame_id=child_frame_id,
                     pose=types.make("geometry_msgs/msg/PoseWithCovariance", pose=pose, covariance=pose_covariance),
                     twist=types.make("geometry_msgs/msg/TwistWithCovariance", twist=twist,
                                      covariance=twist_covariance))


def read_odometry(msg, frame_id: str, child_frame_id: str, field: str):
    """(position, orientation_xyzw, linear_velocity, angular_velocity) of an Odometry in the expected frames."""
    values = np.array(read_odometry_values(msg, frame_id, child_frame_id, field))
    return values[0:3], values[3:7], values[7:10], values[10:13]


def read_odometry_values(msg, frame_id: str, child_frame_id: str, field: str) -> list[float]:
    """[position (3), orientation_xyzw (4, normalised), linear (3), angular (3)] of an Odometry as Python
    floats, frames and values checked (a quaternion more than 1e-6 off unit norm is rejected, a closer one
    normalised). Plain floats: 13 numbers cost less to check and scale here than as a numpy array."""
    if msg.header.frame_id != frame_id:
        raise CommandError(f"{field}.header.frame_id", f"must be {frame_id!r}, got {msg.header.frame_id!r}")
    if msg.child_frame_id != child_frame_id:
        raise CommandError(f"{field}.child_frame_id", f"must be {child_frame_id!r}, got {msg.child_frame_id!r}")
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    values = [p.x, p.y, p.z, o.x, o.y, o.z, o.w, lin.x, lin.y, lin.z, ang.x, ang.y, ang.z]
    try:
        finite = math.isfinite(sum(values)) or all(math.isfinite(x) for x in values)   # see all_finite
    except TypeError as exc:
        raise CommandError(field, f"pose or twist is not numeric: {exc}") from exc
    if not finite:
        raise CommandError(field, "non-finite pose or twist")
    qx, qy, qz, qw = values[3:7]
    norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if abs(norm - 1.0) > 1e-6:
        raise CommandError(f"{field}.pose.pose.orientation", f"not a unit quaternion (norm {norm:.9g})")
    values[3:7] = qx / norm, qy / norm, qz / norm, qw / norm
    return values


def transform_stamped(types: MessageTypes, t: float, parent: str, child: str, translation, rotation_xyzw):
    transform = types.make("geometry_msgs/msg/Transform", translation=vector3(types, translation),
                          rotation=quaternion(types, rotation_xyzw))
    return types.make("geometry_msgs/msg/TransformStamped", header=header(types, t, parent), child_frame_id=child,
                     transform=transform)


def tf_message(types: MessageTypes, transforms: list):
    return types.make(TF_MESSAGE, transforms=list(transforms))


# ---- trajectories ------------------------------------------------------------------------------
def joint_trajectory(types: MessageTypes, t: float, joint_names: Sequence[str], points: Iterable[tuple]):
    """A JointTrajectory with points given as (time_from_start s, positions rad), or (time_from_start, positions,
    velocities rad/s, accelerations rad/s^2)."""
    msg_points = []
    for point_ in points:
        time_from_start, positions = point_[0], point_[1]
        rates = {} if len(point_) == 2 else {"velocities": types.float64_sequence(point_[2]),
                                              "accelerations": types.float64_sequence(point_[3])}
        msg_points.append(types.new("trajectory_msgs/msg/JointTrajectoryPoint",
                                    positions=types.float64_sequence(positions),
                                    time_from_start=duration_msg(types, time_from_start), **rates))
    return types.make(JOINT_TRAJECTORY, header=header(types, t), joint_names=list(joint_names), points=msg_points)


def read_joint_trajectory(msg):
    """(joint_names, points, start_time) of a JointTrajectory in the controller's plain form.

    points: (positions, velocities or None, accelerations or None, time_from_start s), in message order;
    empty arrays become None as ROS leaves unused fields empty. start_time: header.stamp in s, or None for a
    zero stamp ("start now", as joint_trajectory_controller reads it). Names, lengths, finiteness and limits
    are checked by the trajectory follower, which names the offending field.
    """
    points = []
    for pt in msg.points:
        velocities = np.asarray(pt.velocities, dtype=float)
        accelerations = np.asarray(pt.accelerations, dtype=float)
        points.append((np.asarray(pt.positions, dtype=float), velocities if velocities.size else None,
                       accelerations if accelerations.size else None, seconds(pt.time_from_start)))
    stamp = msg.header.stamp
    start = None if stamp.sec == 0 and stamp.nanosec == 0 else seconds(stamp)
    return list(msg.joint_names), points, start


# ---- diagnostics -------------------------------------------------------------------------------
def format_value(value) -> str:
    """KeyValue text: numbers with 9 significant digits (deterministic), the rest as str()."""
    if type(value) is float:                  # the usual case first ('nan', 'inf' as below)
        return f"{value:.9g}"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "nan" if math.isnan(value) else f"{float(value):.9g}"
    return str(value)


def diagnostic_status(types: MessageTypes, level: int, name: str, message: str, hardware_id: str = "",
                      values: Iterable[tuple[str, object]] = ()):
    key_value = types.constructor("diagnostic_msgs/msg/KeyValue", ("key", "value"))
    key_values = [key_value(str(k), format_value(v)) for k, v in values]
    return types.make(DIAGNOSTIC_STATUS, level=_level_value(types, level), name=name, message=message,
                     hardware_id=hardware_id, values=key_values)


def _level_value(types: MessageTypes, level: int):
    # rclpy declares `byte level` and wants a bytes object; rosbags stores the integer.
    return bytes([level]) if isinstance(getattr(types.cls(DIAGNOSTIC_STATUS), "OK", 0), bytes) else int(level)


def level_of(status) -> int:
    level = status.level
    return level[0] if isinstance(level, (bytes, bytearray)) else int(level)


def diagnostic_array(types: MessageTypes, t: float, statuses: list):
    return types.make(DIAGNOSTIC_ARRAY, header=header(types, t), status=list(statuses))
