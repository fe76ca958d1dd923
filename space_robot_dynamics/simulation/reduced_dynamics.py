"""Forward dynamics of an expanded model with dependent (tip-chain) coordinates (docs/flexibility.md eq. 16).

    (T^T M_f T) a_r = T^T (tau_f - h_f),   a_f = T a_r,

M_f from `pinocchio.crba`, h_f = `pinocchio.rnea`(q, v, 0, f_ext) (Coriolis, centrifugal, gravity terms minus the
external wrenches' generalized forces), T the constant CoordinateMap matrix, and one LAPACK Cholesky solve (dposv)
of size n_r. It leaves the joint velocities of (q, v) in `data` (rnea's forward pass), as `aba` does.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from ..model.coordinate_map import CoordinateMap

_dposv = lapack.dposv


class ReducedForwardDynamics:
    def __init__(self, model: pin.Model, coordinates: CoordinateMap):
        self.model = model
        self.T = coordinates.T
        self.Tt = np.ascontiguousarray(coordinates.T.T)
        self._zero = np.zeros(model.nv)

    def __call__(self, data: pin.Data, q: np.ndarray, v: np.ndarray, tau: np.ndarray, fext=None) -> np.ndarray:
        """a_f (nv) at (q, v) under the generalized forces tau (nv) and the external forces fext (Pinocchio
        joint forces, or None)."""
        model = self.model
        mass = pin.crba(model, data, q)
        bias = pin.rnea(model, data, q, v, self._zero) if fext is None else pin.rnea(model, data, q, v, self._zero,
                                                                                     fext)
        reduced_mass = self.Tt.dot(mass.dot(self.T))
        # symmetric: its transpose is the same matrix in the Fortran order LAPACK factors in place, without a copy
        _, acceleration, info = _dposv(reduced_mass.T, self.Tt.dot(tau - bias), 1, 1, 1)
        if info:
            raise np.linalg.LinAlgError(f"reduced mass matrix not positive definite (LAPACK dposv info {info})")
        return self.T.dot(acceleration)
