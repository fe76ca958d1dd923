"""Constrained forward dynamics with an explicit constraint Jacobian: Pinocchio's `forwardDynamics(model, data,
tau, J, gamma)` after `crba` and `rnea` (docs/contact.md sec. 3).

    M a + h = tau + J^T lambda,      J a + gamma = 0                     (seed 004 eqs. 5.14, 2.29 differentiated)

with h = rnea(q, v, 0, f_ext) (Coriolis, centrifugal and gravity terms minus the external wrenches' generalized
forces), M from crba, and Pinocchio's KKT solve (Cholesky of M, then of J M^-1 J^T). Used where Pinocchio's
`constraintDynamics` does not apply: a constraint with a single row (the normal of a surface contact), external
wrenches, and any contact on a model with flexible links. On such a model the tip-chain coordinates depend on the
modal ones (docs/flexibility.md eq. 14, v_d = S v_s): they enter as the constant linear rows

    C v = 0,   C = [E_d - S E_s],   gamma_C = 0,                                               (1)

appended below the contact rows. Because T spans the kernel of C (C T = 0), the KKT system with (1) is the
reduced dynamics of flexibility.md eq. 16 with the contact Jacobian J T (test_contact_reduced_models.py checks this
against the reduced KKT to round-off); the multipliers of (1) are the internal forces of the tip chains.

`kinematics()` runs rnea (which leaves the joint velocities data.v and the velocity-product accelerations
data.a_gf at (q, v): for a = 0 these are the constraint drifts' ingredients), computeJointJacobians (data.oMi,
data.J) and crba (data.M); the constraints then read their rows from data (loop_closure.py,
surface_contact.py) and `solve()` finishes.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..model.coordinate_map import CoordinateMap


def coupling_rows(coordinates: CoordinateMap | None, nv: int) -> np.ndarray:
    """C of eq. (1): one row per dependent coordinate, (n_d, nv); (0, nv) without dependent coordinates."""
    if coordinates is None or coordinates.trivial:
        return np.zeros((0, nv))
    rows = np.zeros((len(coordinates.dependent_v), nv))
    rows[np.arange(len(rows)), coordinates.dependent_v] = 1.0
    rows[:, coordinates.source_v] -= coordinates.S
    return rows


class ExplicitConstraintDynamics:
    """crba + rnea + forwardDynamics with the contact rows and the coupling rows (1) of a flexible model."""

    def __init__(self, model: pin.Model, coordinates: CoordinateMap | None = None):
        self.model = model
        self.coupling = coupling_rows(coordinates, model.nv)
        self.n_coupling = len(self.coupling)
        self._zero = np.zeros(model.nv)

    def kinematics(self, data: pin.Data, q: np.ndarray, v: np.ndarray, fext=None) -> np.ndarray:
        """h (nv, a new array) at (q, v); leaves data.v, data.a_gf (velocity products, a = 0), data.oMi, data.J and
        data.M at (q, v) for the constraints' rows."""
        model = self.model
        bias = pin.rnea(model, data, q, v, self._zero) if fext is None else pin.rnea(model, data, q, v, self._zero,
                                                                                     fext)
        bias = bias.copy()
        pin.computeJointJacobians(model, data, q)
        pin.crba(model, data, q)
        return bias

    def stacked(self, jacobian: np.ndarray, drift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[J; C] and [gamma; 0]."""
        if not self.n_coupling:
            return jacobian, drift
        return np.vstack((jacobian, self.coupling)), np.concatenate((drift, np.zeros(self.n_coupling)))

    def solve(self, data: pin.Data, tau: np.ndarray, bias: np.ndarray, jacobian: np.ndarray, drift: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """(a, lambda) with M a + h = tau + J^T lambda, J a + gamma = 0, after kinematics(); lambda: the contact
        rows' multipliers only (a copy), a: a new array."""
        J, gamma = self.stacked(jacobian, drift)
        data.nle[:] = bias
        acceleration = pin.forwardDynamics(self.model, data, tau, J, gamma, 0.0).copy()
        return acceleration, data.lambda_c[:len(jacobian)].copy()

    def impulse_jacobian(self, jacobian: np.ndarray) -> np.ndarray:
        """[J; C]: an impulse on the contact rows that keeps the coupling rows (1)."""
        return self.stacked(jacobian, np.zeros(len(jacobian)))[0]
