"""Relative pose sensor of the target: what a camera or lidar pose estimator hands the GNC loop.

It reports the pose of a target frame (default target/base_link) in its own sensor frame C, mounted on the
servicer (default on the bus; +z is the boresight), at a few hertz, late, noisy, and only when the target is in
view. For a target at range r = |p_CT| (m) the errors are, per axis, 1 sigma:

    sigma_p(r) = position_noise.at_zero_range + position_noise.per_metre r          (m)
    sigma_a(r) = attitude_noise.at_zero_range + attitude_noise.per_metre r          (rad)

(a stereo camera's depth error grows as r^2 and a lidar's is nearly flat: linear is the first-order model and
covers both over a capture's few metres). The position error is added in C; the attitude error is a small
rotation about C's fixed axes, q_CT,measured = exp(dtheta_C) (x) q_CT: the convention of PoseWithCovariance's
covariance (rotation about the header frame's X, Y, Z), which `covariance` (6x6, diagonal) is.

No measurement when the target's origin is outside the field of view (a cone of half-angle `field_of_view / 2`
about +z), nearer than `min_range` or farther than `max_range`, in a dropout window, or dropped at random with
probability `dropout_probability` (the estimator lost track). `status` says which. Stamped at sampling, handed
out `latency` later (delay_line.py). The noise and the dropout draw are taken at every sample whatever the
geometry, so a measurement's noise does not depend on what the target did before.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader

from .delay_line import DelayLine, Stamped
from .mounting import Mounting, read_mounting
from .time_windows import TimeWindows, read_windows

NAME = "target_pose"
VISIBLE, OUT_OF_VIEW, TOO_NEAR, TOO_FAR, DROPPED, DROPOUT_WINDOW = (
    "measured", "out of the field of view", "nearer than min_range", "farther than max_range", "dropped",
    "in a dropout window")


@dataclass(frozen=True)
class RangeNoise:
    at_zero_range: float
    per_metre: float

    def sigma(self, distance: float) -> float:
        return self.at_zero_range + self.per_metre * distance


@dataclass(frozen=True)
class RelativePoseConfig:
    rate: float                       # Hz
    latency: float                    # s
    position_noise: RangeNoise        # m, m/m
    attitude_noise: RangeNoise        # rad, rad/m
    field_of_view: float              # rad, full cone angle
    min_range: float                  # m
    max_range: float                  # m
    dropout_probability: float        # per sample, [0, 1)
    dropouts: TimeWindows             # s: no measurement inside
    target_frame: str
    mounting: Mounting


def read_relative_pose(reader: ConfigReader) -> RelativePoseConfig:
    def range_noise(key: str) -> RangeNoise:
        sub = reader.sub(key)
        noise = RangeNoise(sub.number("at_zero_range", minimum=0.0), sub.number("per_metre", 0.0, minimum=0.0))
        sub.reject_unknown()
        return noise

    min_range = reader.number("min_range", 0.0, minimum=0.0)
    max_range = reader.number("max_range", exclusive_minimum=0.0)
    if not max_range > min_range:
        raise reader.error("max_range", f"must be above min_range ({min_range} m), got {max_range} m")
    config = RelativePoseConfig(
        rate=reader.frequency("rate"), latency=reader.number("latency", 0.0, minimum=0.0),
        position_noise=range_noise("position_noise"), attitude_noise=range_noise("attitude_noise"),
        field_of_view=reader.number("field_of_view", exclusive_minimum=0.0, maximum=math.pi),
        min_range=min_range, max_range=max_range,
        dropout_probability=reader.number("dropout_probability", 0.0, minimum=0.0, maximum=0.99),
        dropouts=read_windows(reader, "dropouts"), target_frame=reader.string("target_frame", "target/base_link"),
        mounting=read_mounting(reader, "base_link", "pose_sensor_link"))
    reader.reject_unknown()
    return config


@dataclass(frozen=True)
class PoseMeasurement:
    """The target frame's pose in the sensor frame C: position (m), orientation (x, y, z, w); covariance 6x6 of
    (position, rotation about C's axes), m^2 and rad^2."""

    position: np.ndarray
    xyzw: np.ndarray
    covariance: np.ndarray


def pose_in_sensor(world_sensor: tuple[np.ndarray, Rotation], world_target: tuple[np.ndarray, Rotation]):
    """(p_CT, R_CT) from the world poses (position m, Rotation) of the sensor frame and of the target frame."""
    (p_ws, r_ws), (p_wt, r_wt) = world_sensor, world_target
    return r_ws.inv().apply(p_wt - p_ws), r_ws.inv() * r_wt


class RelativePoseSensor:
    """`sample(t, p_CT, R_CT)` once per period; `release(now)` every tick gives the measurements due."""

    def __init__(self, config: RelativePoseConfig, stream: np.random.Generator):
        self.config = config
        self._stream = stream
        self._line = DelayLine(config.latency)
        self._cos_half_view = math.cos(config.field_of_view / 2.0)
        self.dropouts = config.dropouts
        self.status = None                 # the last sample's: VISIBLE, OUT_OF_VIEW, ...

    def sample(self, t: float, position: np.ndarray, rotation: Rotation) -> bool:
        """Measure the target frame at `position` (m) and `rotation` (R_CT) in the sensor frame at time `t` (s);
        False when no measurement is taken (`status` says why)."""
        unit_position, unit_attitude = self._stream.standard_normal(3), self._stream.standard_normal(3)
        dropped = self._stream.random() < self.config.dropout_probability
        position = np.asarray(position, float)
        distance = float(np.linalg.norm(position))
        self.status = self._visibility(t, position, distance, dropped)
        if self.status != VISIBLE:
            return False
        c = self.config
        sigma_p, sigma_a = c.position_noise.sigma(distance), c.attitude_noise.sigma(distance)
        measured_rotation = Rotation.from_rotvec(sigma_a * unit_attitude) * rotation
        covariance = np.diag([sigma_p ** 2] * 3 + [sigma_a ** 2] * 3)
        self._line.push(t, PoseMeasurement(position + sigma_p * unit_position, measured_rotation.as_quat(),
                                           covariance))
        return True

    def _visibility(self, t: float, position: np.ndarray, distance: float, dropped: bool) -> str:
        c = self.config
        if distance < c.min_range:
            return TOO_NEAR
        if distance > c.max_range:
            return TOO_FAR
        if position[2] < self._cos_half_view * distance:       # angle from +z above half the field of view
            return OUT_OF_VIEW
        if self.dropouts.contains(t):
            return DROPOUT_WINDOW
        if dropped:
            return DROPPED
        return VISIBLE

    def release(self, now: float) -> list[Stamped]:
        return self._line.release(now)
