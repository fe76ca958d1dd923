"""Recorded signals from a rosbag2 directory (the runtime's, or `ros2 bag record`'s) or a CSV file.

The names are those of space_robot_identification.recorded_signals. From a bag: every JointState, Odometry and
Vector3Stamped topic, stamped with the message header's time (the instant the data belongs to, also when the
bag was recorded live and the log time is the arrival time); other topics are skipped. From a CSV file: a
header row `t,NAME,NAME...` and one row per instant (s, SI units).
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from space_robot_dynamics.errors import ConfigError
from space_robot_identification.recorded_signals import RecordedSignals
from space_robot_runtime.run_trace import bag_error_text

_FIELD = "--data"
_JOINT_STATE = "sensor_msgs/msg/JointState"
_ODOMETRY = "nav_msgs/msg/Odometry"
_VECTOR3_STAMPED = "geometry_msgs/msg/Vector3Stamped"


def read_recording(path: str | Path) -> RecordedSignals:
    """A bag directory (with metadata.yaml) or a .csv file; ConfigError naming --data otherwise."""
    path = Path(path)
    if path.is_dir():
        if not (path / "metadata.yaml").is_file():
            raise ConfigError(_FIELD, f"{path} is a directory without metadata.yaml: not a rosbag2 recording")
        return read_bag_signals(path)
    if path.suffix.lower() == ".csv" and path.is_file():
        return read_csv_signals(path)
    if not path.exists():
        raise ConfigError(_FIELD, f"no such file or directory {str(path)!r}")
    raise ConfigError(_FIELD, f"{path}: give a rosbag2 directory or a .csv file")


def _stamp_ns(msg, log_time: int) -> int:
    header = getattr(msg, "header", None)
    if header is None:
        return int(log_time)
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def read_bag_signals(path: Path) -> RecordedSignals:
    from rosbags.rosbag2 import Reader

    from space_robot_nodes.message_types import RosbagsMessageTypes

    typestore = RosbagsMessageTypes().typestore
    rows: dict[str, tuple[list, list]] = {}

    def add(name: str, stamp: int, value: float) -> None:
        times, values = rows.setdefault(name, ([], []))
        times.append(stamp)
        values.append(value)

    try:
        with Reader(path) as reader:
            wanted = [c for c in reader.connections if c.msgtype in (_JOINT_STATE, _ODOMETRY, _VECTOR3_STAMPED)]
            for connection, log_time, raw in reader.messages(connections=wanted):
                msg = typestore.deserialize_cdr(raw, connection.msgtype)
                stamp, topic = _stamp_ns(msg, log_time), connection.topic
                if connection.msgtype == _JOINT_STATE:
                    for key in ("position", "velocity", "effort"):
                        values = getattr(msg, key)
                        if len(values) == len(msg.name):
                            for joint, value in zip(msg.name, values):
                                add(f"{topic}.{key}.{joint}", stamp, float(value))
                elif connection.msgtype == _ODOMETRY:
                    pose, twist = msg.pose.pose, msg.twist.twist
                    for key, vector, axes in (("position", pose.position, "xyz"),
                                              ("orientation", pose.orientation, "xyzw"),
                                              ("linear_velocity", twist.linear, "xyz"),
                                              ("angular_velocity", twist.angular, "xyz")):
                        for axis in axes:
                            add(f"{topic}.{key}.{axis}", stamp, float(getattr(vector, axis)))
                else:
                    for axis in "xyz":
                        add(f"{topic}.{axis}", stamp, float(getattr(msg.vector, axis)))
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure means an unreadable bag: say which and why
        raise ConfigError(_FIELD, f"cannot read the bag {path}: {bag_error_text(exc)}") from None
    if not rows:
        raise ConfigError(_FIELD, f"the bag {path} has no JointState, Odometry or Vector3Stamped messages")
    origin = min(times[0] if times else 0 for times, _ in rows.values())
    signals = RecordedSignals(source=str(path))
    for name, (times, values) in rows.items():
        stamps = np.array(times, dtype=np.int64)
        order = np.argsort(stamps, kind="stable")
        signals.with_series(name, (stamps[order] - origin) * 1e-9, np.array(values)[order])
    return signals


def read_csv_signals(path: Path) -> RecordedSignals:
    try:
        with path.open(newline="") as handle:
            table = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(_FIELD, f"cannot read {path}: {exc}") from None
    if not table or not table[0] or table[0][0].strip() != "t":
        raise ConfigError(_FIELD, f"{path}: the first row must be the header, starting with the time column 't'")
    header = [h.strip() for h in table[0]]
    if len(set(header)) != len(header):
        raise ConfigError(_FIELD, f"{path}: the header names a column twice")
    body = [row for row in table[1:] if row]
    try:
        data = np.array([[float(x) for x in row] for row in body], dtype=float)
    except ValueError as exc:
        raise ConfigError(_FIELD, f"{path}: every entry must be a number: {exc}") from None
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] != len(header):
        raise ConfigError(_FIELD, f"{path}: needs at least two rows of {len(header)} numbers")
    if not np.all(np.isfinite(data)):
        raise ConfigError(_FIELD, f"{path}: holds non-finite numbers (NaN or inf)")
    t = data[:, 0]
    if np.any(np.diff(t) <= 0):
        raise ConfigError(_FIELD, f"{path}: the times (column t) must increase")
    t = t - t[0]
    signals = RecordedSignals(source=str(path))
    for i, name in enumerate(header[1:], start=1):
        signals.with_series(name, t, data[:, i])
    return signals


def write_csv_signals(signals: RecordedSignals, path: Path, names: list[str] | None = None) -> None:
    """The signals that share the first one's times as a CSV file (what read_csv_signals reads)."""
    names = names or signals.names()
    t = signals.times(names[0])
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["t", *names])
        columns = [signals.sampled(n, t, _FIELD) for n in names]
        for k in range(len(t)):
            writer.writerow([repr(float(t[k])), *(repr(float(c[k])) for c in columns)])
