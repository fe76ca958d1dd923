"""Reaction-wheel actuator limits: torque saturation and speed saturation.

The wheels themselves are rigid bodies on continuous joints in the URDF, so the reaction torque on the
bus comes from the multibody dynamics, not from this module (a wheel modelled as rotor armature alone
would exert no reaction on the bus). Wheel speed is the joint rate, i.e. relative to the bus (rad/s).
The torque limit +-max_torque (N m) is a clip, applied by the simulator together with the arm's effort
limits; the speed limit is below.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin


def cut_speeding_wheels(torque: np.ndarray, wheel_speed: list[float], max_speed: list[float]) -> None:
    """Zero, in place, the torque (N m) of any wheel at or beyond max_speed (rad/s) that would spin it
    faster; braking stays allowed. Speeds and limits are plain floats (a few wheels: a loop on floats
    costs less than numpy's per-call overhead)."""
    for i, (speed, limit) in enumerate(zip(wheel_speed, max_speed)):
        if abs(speed) >= limit and torque[i] * speed > 0.0:
            torque[i] = 0.0


def wheel_spin_inertia(system) -> np.ndarray:
    """Spin-axis inertia (kg m^2) of each wheel, from the Pinocchio model: S^T I S for a unit joint rate."""
    model = system.model
    data = model.createData()
    out = []
    for name in system.wheel_joints:
        v = np.zeros(model.nv)
        v[system.v_index(name)] = 1.0
        pin.forwardKinematics(model, data, system.neutral(), v)
        joint = system.joint_id(name)
        body_velocity = data.v[joint]                 # twist of the wheel body for a unit rate (joint frame)
        momentum = model.inertias[joint] * body_velocity
        out.append(float(np.dot(momentum.angular, body_velocity.angular)))
    return np.array(out)
