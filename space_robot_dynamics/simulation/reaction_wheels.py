"""Reaction-wheel actuator limits: torque saturation and speed saturation.

The wheels themselves are rigid bodies on continuous joints in the URDF, so the reaction torque on the
bus comes from the multibody dynamics, not from this module (a wheel modelled as rotor armature alone
would exert no reaction on the bus). Wheel speed is the joint rate, i.e. relative to the bus (rad/s).
The torque limit +-max_torque (N m) is a clip, applied by the simulator together with the arm's effort
limits; the speed limit is below.
"""
from __future__ import annotations

import numpy as np


def cut_speeding_wheels(torque: np.ndarray, wheel_speed: list[float], max_speed: list[float]) -> None:
    """Zero, in place, the torque (N m) of any wheel at or beyond max_speed (rad/s) that would spin it
    faster; braking stays allowed. Speeds and limits are plain floats (a few wheels: a loop on floats
    costs less than numpy's per-call overhead)."""
    for i, (speed, limit) in enumerate(zip(wheel_speed, max_speed)):
        if abs(speed) >= limit and torque[i] * speed > 0.0:
            torque[i] = 0.0
