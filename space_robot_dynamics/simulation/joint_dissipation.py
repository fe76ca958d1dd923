"""Joint damping and friction from the URDF <dynamics> tags (optional, off by default).

tau_d = -b qdot - f_c tanh(qdot / v_s): viscous damping b (N m s/rad) and Coulomb friction f_c (N m)
smoothed over v_s (rad/s) so the right-hand side stays Lipschitz for the explicit integrators.
Both act between the two bodies a joint connects, so they dissipate energy but conserve the total
momentum of a free-floating system.
"""
from __future__ import annotations

import numpy as np


class JointDissipation:
    """Dissipative generalized forces on the one-DOF joints `v_indices` (indices into v)."""

    def __init__(self, v_indices: np.ndarray, damping: np.ndarray, friction: np.ndarray,
                 friction_smoothing_speed: float):
        self.v_indices = np.asarray(v_indices, dtype=int)
        self.damping = np.asarray(damping, dtype=float)
        self.friction = np.asarray(friction, dtype=float)
        self.smoothing = float(friction_smoothing_speed)

    def torque(self, v: np.ndarray) -> np.ndarray:
        """Generalized force on the selected joints (N m), same order as v_indices."""
        rate = v[self.v_indices]
        return -self.damping * rate - self.friction * np.tanh(rate / self.smoothing)
