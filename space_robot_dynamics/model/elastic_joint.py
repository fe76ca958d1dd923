"""One elastic joint (docs/flexibility.md sec. 4; seed 003 eqs. 1-8 and 17-20; Spong 1987).

The motor's rotor is a body on the joint's parent link turning about the joint axis a by phi = N theta_m
relative to the parent (its Pinocchio joint `<joint>/rotor`); theta_m is the motor angle on the output side of
the gear. Kinetic energy 1/2 I_r (w_parent . a + N dtheta_m/dt)^2 (eq. 11) comes from Pinocchio; the spring and
damper between theta_m and the link-side angle q are generalized forces (eq. 12):

    lambda = q - theta_m,   tau_q = -k (lambda - lambda_0) - b dlambda/dt,
    tau_phi = (tau_m + k (lambda - lambda_0) + b dlambda/dt) / N.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .flexibility_config import ElasticJointConfig

ROTOR_SUFFIX = "/rotor"


@dataclass(frozen=True)
class ElasticJoint:
    config: ElasticJointConfig
    axis: np.ndarray            # unit joint axis in the joint frame

    @property
    def name(self) -> str:
        return self.config.joint

    @property
    def rotor_joint(self) -> str:
        """Pinocchio/URDF name of the rotor's joint (coordinate phi = N theta_m, rad)."""
        return self.name + ROTOR_SUFFIX

    @property
    def rotor_link(self) -> str:
        return self.name + ROTOR_SUFFIX + "_link"

    @property
    def gear_ratio(self) -> float:
        return self.config.gear_ratio

    def rotor_inertia(self) -> np.ndarray:
        """I_r a a^T (kg m^2) in the joint frame: the rotor's inertia about its spin axis; its mass and transverse
        inertia are part of the links' (seed 003 sec. 2)."""
        return self.config.motor_inertia * np.outer(self.axis, self.axis)

    def reflected_inertia(self) -> float:
        """N^2 I_r (kg m^2): the motor inertia seen from the output side (seed 003's I_m)."""
        return self.config.gear_ratio ** 2 * self.config.motor_inertia

    def stiffness_block(self) -> np.ndarray:
        """K on (q, phi): V = 1/2 k (q - phi/N - lambda_0)^2 = 1/2 x^T K x - f0^T x + const (eq. 12)."""
        g = np.array([1.0, -1.0 / self.config.gear_ratio])
        return self.config.stiffness * np.outer(g, g)

    def damping_block(self) -> np.ndarray:
        g = np.array([1.0, -1.0 / self.config.gear_ratio])
        return self.config.damping * np.outer(g, g)

    def offset_force(self) -> np.ndarray:
        """f0 on (q, phi): the spring's generalized force at zero coordinates, k lambda_0 (1, -1/N)."""
        return self.config.stiffness * self.config.spring_offset * np.array([1.0, -1.0 / self.config.gear_ratio])
