"""Whole-system mechanical quantities computed with Pinocchio's centroidal algorithms.

- Centroidal momentum h_G = (p, L_G): total linear momentum p (kg m/s) and angular momentum about the
  system centre of mass L_G (kg m^2/s), both expressed in the world frame (seed 004 eqs. 2.9-2.12:
  P = sum m_i v_i, L = sum I_i w_i + r_i x m_i v_i; Pinocchio `computeCentroidalMomentum`).
- Angular momentum about any world point P: L_P = L_G + (c - P) x p (the moment of the momentum moved from
  the centre of mass c to P; p does not depend on the point). About a point fixed in the world, dL_P/dt is
  the moment about P of the external wrenches.
- Kinetic energy T = 1/2 v^T M(q) v (J).
- Centre of mass in the world frame (m).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..command_checks import checked_vector


@dataclass(frozen=True)
class MomentumState:
    linear: np.ndarray        # kg m/s, world frame
    angular: np.ndarray       # kg m^2/s about the system CoM, world frame
    com: np.ndarray           # m, world frame
    com_velocity: np.ndarray  # m/s, world frame
    kinetic_energy: float     # J

    def angular_about(self, point) -> np.ndarray:
        """Angular momentum about the world point `point` (m), world frame (kg m^2/s): L_G + (c - P) x p."""
        return self.angular + np.cross(self.com - checked_vector(point, 3, "point"), self.linear)


def momentum_state(model: pin.Model, data: pin.Data, q: np.ndarray, v: np.ndarray) -> MomentumState:
    hg = pin.computeCentroidalMomentum(model, data, q, v)   # also fills data.com[0], data.vcom[0]
    energy = pin.computeKineticEnergy(model, data, q, v)
    return MomentumState(hg.linear.copy(), hg.angular.copy(), data.com[0].copy(), data.vcom[0].copy(),
                         float(energy))


def momentum_about_point(model: pin.Model, data: pin.Data, q: np.ndarray, v: np.ndarray, point
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(p, L_P): total linear momentum (kg m/s) and angular momentum about the world point `point` (m)
    (kg m^2/s), both in the world frame. A point that is not 3 finite numbers is a CommandError naming `point`."""
    point = checked_vector(point, 3, "point")
    hg = pin.computeCentroidalMomentum(model, data, q, v)   # about the CoM data.com[0]
    linear = hg.linear.copy()
    return linear, hg.angular + np.cross(data.com[0] - point, linear)


def body_momenta_scale(model: pin.Model, data: pin.Data, q: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """Largest single-body |linear momentum| and |angular momentum about the system CoM|.

    The reference for relative momentum drift: total momentum may be zero by design (free floating
    from rest), so drift is measured against the momentum the bodies actually carry.
    """
    pin.forwardKinematics(model, data, q, v)
    com = pin.centerOfMass(model, data, q, v)
    p_max, l_max = 0.0, 0.0
    for j in range(1, model.njoints):
        inertia, placement = model.inertias[j], data.oMi[j]
        h_local = inertia * data.v[j]                           # momentum of body j in its joint frame
        h_world = placement.act(h_local)                        # about the world origin, world frame
        linear = h_world.linear
        angular = h_world.angular - np.cross(com, linear)       # about the system CoM
        p_max = max(p_max, float(np.linalg.norm(linear)))
        l_max = max(l_max, float(np.linalg.norm(angular)))
    return p_max, l_max
