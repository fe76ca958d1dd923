"""Where a sensor sits: its frame's pose in a link of the model.

`frame`: the link (a frame name of the model, e.g. base_link, right_hand); `position` (m) and `orientation`
(unit quaternion x, y, z, w, REP-103 order) of the sensor frame in that link's frame; `sensor_frame`: the sensor
frame's name (the frame_id of its messages; the sensors node publishes it on tf_static under `frame`). A vector
measured in the sensor frame is R_link_sensor^T times the same vector in the link frame.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader

# |q| may differ from 1 by this much in a YAML quaternion (8 printed digits give ~1e-8; a hand-typed
# 0.7071068 pair gives ~1e-7): beyond it the entry is a mistake, not rounding, and is refused
QUATERNION_NORM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Mounting:
    frame: str
    position: np.ndarray          # m, in `frame`
    rotation: Rotation            # R_frame_sensor: sensor axes expressed in `frame`
    sensor_frame: str = ""

    @property
    def orientation_xyzw(self) -> np.ndarray:
        return self.rotation.as_quat()

    @functools.cached_property
    def matrix(self) -> np.ndarray:
        """R_frame_sensor as a matrix (a scipy Rotation costs ~20 us a use; the sensors use it at 1 kHz)."""
        return self.rotation.as_matrix()


def read_mounting(reader: ConfigReader, default_frame: str, default_sensor_frame: str) -> Mounting:
    """`frame`, `position`, `orientation` and `sensor_frame` of a sensor's mapping (the defaults: `default_frame`,
    its origin, its axes, `default_sensor_frame`)."""
    frame = reader.string("frame", default_frame)
    sensor_frame = reader.string("sensor_frame", default_sensor_frame)
    if not sensor_frame or sensor_frame == frame:
        raise reader.error("sensor_frame", f"must name a frame of its own (not empty, not its link {frame!r}), got "
                                           f"{sensor_frame!r}")
    position = reader.vector("position", 3, [0.0, 0.0, 0.0])
    xyzw = reader.vector("orientation", 4, [0.0, 0.0, 0.0, 1.0])
    norm = float(np.linalg.norm(xyzw))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise reader.error("orientation", f"must be a unit quaternion (x, y, z, w), got norm {norm:.9g}")
    return Mounting(frame, position, Rotation.from_quat(xyzw / norm), sensor_frame)
