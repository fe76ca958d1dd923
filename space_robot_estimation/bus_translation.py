"""The bus's position and linear velocity, which no sensor of the suite measures, from the conserved momentum.

The gyro, the star tracker, the encoders, the tachometers and the pose sensor observe the bus attitude and rate,
the joints and the target relative to the bus; nothing observes where the bus itself is. In free space no external
force acts on the system (servicer + target, grasped or not), so its centre of mass moves uniformly:

    c(t) = c(0) + (P / M) t,        P = M c'(0)

(the virtual-ground argument of Vafa and Dubowsky, 1990). Given every relative coordinate - bus attitude, joint
angles, the target's pose from the bus origin - the system's centre of mass with the bus origin placed at the world
origin is c_rel(q_rel), and the bus origin is where it makes the two agree: p_bus = c(t) - c_rel. Likewise with
the bus's linear velocity set to zero, c'_rel = c'(t) - v_bus, so v_bus = P / M - c'_rel (world axes). Pinocchio's
centerOfMass gives c_rel and c'_rel (one call; a uniform translation of every base moves the centre of mass by the
same amount, so the solution is exact, not a linearisation).

c(0) and P are the scenario's initial state's: the mission's knowledge of its own momentum (zero for a servicer
that starts at rest in the frame it navigates in). The relative estimates' errors pass into p_bus weighted by the
masses: an error dr in the target's position moves p_bus by -(m_target / M) dr. Thrusters or any external force
break the premise (force_motion's base thrusters): the estimators refuse such a model (estimators_core).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel


class BusTranslation:
    """`solve(t, q_rel, v_rel)`: (p_bus, v_bus) in the world frame, from the full relative state."""

    def __init__(self, system: SystemModel, bus_subtree: str, q0: np.ndarray, v0: np.ndarray):
        self.model = system.model
        self.data = self.model.createData()
        bus = system.subtree(bus_subtree)
        self._position = system.q_slice(bus.base_joint)
        self._linear = system.v_slice(bus.base_joint)
        pin.centerOfMass(self.model, self.data, q0, v0)
        self.com0 = self.data.com[0].copy()           # m, world frame
        self.com_velocity = self.data.vcom[0].copy()  # m/s, world frame: P / M, constant
        self.mass = float(self.data.mass[0])

    def solve(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`q`, `v`: the system's configuration and velocity with everything but the bus's position and linear
        velocity filled in (those are overwritten with zero here); t (s) from the initial state's instant.
        Returns (bus position, bus linear velocity), m and m/s, world frame."""
        q = q.copy()
        v = v.copy()
        q[self._position.start:self._position.start + 3] = 0.0
        v[self._linear.start:self._linear.start + 3] = 0.0
        pin.centerOfMass(self.model, self.data, q, v)
        return self.com0 + self.com_velocity * t - self.data.com[0], self.com_velocity - self.data.vcom[0]
