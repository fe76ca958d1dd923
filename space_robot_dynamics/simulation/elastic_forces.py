"""Elastic and damping generalized forces of flexible links and elastic joints (docs/flexibility.md eqs. 10, 12),
evaluated at every right-hand side of the integrator.

On the selected coordinates x = q[selected_q] (rates xdot = v[selected_v]) of flexibility.py:
tau = -K x - C xdot + f0, and the power the dampers take, xdot^T C xdot (W), for the dissipated-energy state.
"""
from __future__ import annotations

import numpy as np

from ..model.flexibility import Flexibility


class ElasticForces:
    def __init__(self, flexibility: Flexibility):
        self.q_index = flexibility.selected_q
        self.v_index = flexibility.selected_v
        self.K, self.C, self.f0 = flexibility.K, flexibility.C, flexibility.f0
        self.damped = bool(np.any(self.C))

    def add_to(self, tau: np.ndarray, q: np.ndarray, v: np.ndarray) -> float:
        """tau[selected] += -K x - C xdot + f0, in place; returns the dampers' power xdot^T C xdot (W)."""
        rate = v[self.v_index]
        damping = self.C.dot(rate)
        tau[self.v_index] += self.f0 - self.K.dot(q[self.q_index]) - damping
        return float(rate.dot(damping))
