"""Reaction-wheel actuator limits: torque saturation and speed saturation.

The wheels themselves are rigid bodies on continuous joints in the URDF, so the reaction torque on the
bus comes from the multibody dynamics, not from this module (a wheel modelled as rotor armature alone
would exert no reaction on the bus). Wheel speed is the joint rate, i.e. relative to the bus (rad/s).
"""
from __future__ import annotations

import numpy as np


def saturate_wheel_torque(command: np.ndarray, wheel_speed: np.ndarray, max_torque: np.ndarray,
                          max_speed: np.ndarray) -> np.ndarray:
    """Clip each wheel torque to +-max_torque (N m) and cut any torque that would spin a wheel beyond
    max_speed (rad/s). Returns the applied torque (a new array; `applied != command` marks the
    wheels whose command was altered).
    """
    applied = np.minimum(np.maximum(command, -max_torque), max_torque)
    speeding_up = (np.abs(wheel_speed) >= max_speed) & (applied * wheel_speed > 0.0)
    if speeding_up.any():
        applied[speeding_up] = 0.0
    return applied
