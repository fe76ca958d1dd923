"""Generic states of a SystemModel for control tests: tumbling bases, a moving arm inside its limits, spinning
wheels, drawn from a numpy Generator in a fixed order (same seed, same state)."""
from __future__ import annotations

import numpy as np


def random_state(system, rng, wheel_speed: float = 300.0, wheel_angles: bool = False):
    """(q, v): every floating base at a random pose in a 4 m box with a random attitude, moving at ~0.05 m/s
    and ~0.02 rad/s; arm joints within 80 % of their limits, moving at ~0.5 rad/s; wheels spinning up to
    `wheel_speed` rad/s, at random angles if `wheel_angles` (else at zero)."""
    model = system.model
    q = system.neutral()
    for sub in system.subtrees:
        qs = system.q_slice(sub.config.root_joint_name)
        quat = rng.normal(size=4)
        q[qs] = np.concatenate([rng.uniform(-2.0, 2.0, 3), quat / np.linalg.norm(quat)])
    for name in system.arm_joints:
        j = system.q_slice(name).start
        system.set_joint_angle(q, name, 0.8 * rng.uniform(model.lowerPositionLimit[j], model.upperPositionLimit[j]))
    if wheel_angles:
        for name in system.wheel_joints:
            system.set_joint_angle(q, name, rng.uniform(-np.pi, np.pi))
    v = np.zeros(system.nv)
    for sub in system.subtrees:
        v[system.v_slice(sub.config.root_joint_name)] = np.concatenate([rng.normal(0.0, 0.05, 3),   # m/s
                                                                        rng.normal(0.0, 0.02, 3)])  # rad/s
    v[system.arm_v] = rng.normal(0.0, 0.5, len(system.arm_v))
    v[system.wheel_v] = rng.uniform(-wheel_speed, wheel_speed, len(system.wheel_v))
    return q, v
