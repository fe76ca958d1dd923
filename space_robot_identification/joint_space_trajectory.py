"""The desired joint-space trajectory of seed 003's test (sec. 3.2): "each joint accelerating with a constant
acceleration" for the test's duration, from rest at its start.

    trajectory:
      duration: 10.0                                   # s
      start: {joint_1: 0.1309, joint_2: -0.2618, ...}  # rad, every arm joint (for an elastic joint: its motor)
      acceleration: {joint_1: 0.01, ...}               # rad/s^2 (default 0: the joint holds its start)

    q_d(t) = q_0 + 1/2 a t^2,  q_d'(t) = a t,  q_d''(t) = a            for 0 <= t <= duration,
    then the joints coast at the rate reached: q_d'' = 0.

At t = duration the acceleration switches: `segment` says which side (0 accelerating, 1 coasting) an instant on
the switch belongs to, so an integrator can take each piece as smooth up to its ends.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader


@dataclass(frozen=True)
class ConstantAccelerationTrajectory:
    joints: tuple               # joint names, the order of the arrays
    start: np.ndarray           # rad
    acceleration: np.ndarray    # rad/s^2
    duration: float             # s

    def segments(self, end: float) -> list[tuple[float, float, int]]:
        """The smooth pieces covering [0, end]: (from, to, segment)."""
        if end <= self.duration:
            return [(0.0, end, 0)]
        return [(0.0, self.duration, 0), (self.duration, end, 1)]

    def at(self, t: np.ndarray, segment: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_d, q_d', q_d''), each (len(t), joints), on `segment` (0: t <= duration, 1: t >= duration)."""
        t = np.asarray(t, float)[:, None]
        if segment == 0:
            return self.start + 0.5 * self.acceleration * t ** 2, self.acceleration * t, \
                np.broadcast_to(self.acceleration, (len(t), len(self.joints))).copy()
        rate = self.acceleration * self.duration
        position = self.start + 0.5 * self.acceleration * self.duration ** 2 + rate * (t - self.duration)
        return position, np.broadcast_to(rate, position.shape).copy(), np.zeros(position.shape)


def read_trajectory(reader: ConfigReader, joints: tuple) -> ConstantAccelerationTrajectory:
    """`trajectory` as in the module docstring, for the arm joints `joints` (each needs a start)."""
    start_map = reader.number_map("start")
    acceleration_map = reader.number_map("acceleration", {})
    for key, values in (("start", start_map), ("acceleration", acceleration_map)):
        for name in values:
            if name not in joints:
                raise reader.error(f"{key}.{name}", f"not an arm joint of the model (arm joints: {list(joints)})")
    missing = [name for name in joints if name not in start_map]
    if missing:
        raise reader.error("start", f"needs every arm joint's start angle (rad); missing {missing}")
    trajectory = ConstantAccelerationTrajectory(
        tuple(joints), np.array([start_map[n] for n in joints]),
        np.array([acceleration_map.get(n, 0.0) for n in joints]),
        reader.number("duration", exclusive_minimum=0.0))
    reader.reject_unknown()
    return trajectory
