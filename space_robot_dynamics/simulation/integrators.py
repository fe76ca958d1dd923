"""Fixed-step integrators on the configuration manifold of a Pinocchio model.

State x = (q, y), y = [v, z]: q on the configuration manifold, v its tangent (nv), z auxiliary states
integrated alongside. The right-hand side `f(q, y) -> ydot = [vdot, zdot]` is evaluated with the input
held over the step; the configuration moves with the first nv entries of y.

- `ManifoldRK4`: Runge-Kutta-Munthe-Kaas RK4 (Munthe-Kaas 1998). Stages are taken in the tangent
  space at q0, q_i = q0 (+) xi_i, and the configuration rate is pulled back through the inverse of the
  right Jacobian of the exponential, xi' = dexp^{-1}_{xi}(v). With that correction the scheme is
  fourth order also for a tumbling base; combining stage velocities with `integrate` alone is only
  second order in attitude, because the stage rotations do not commute (see
  ../shared/reference/pinocchio_notes.md).
- `SemiImplicitEuler`: v+ = v + dt vdot(q, v); q+ = q (+) dt v+. First order, cheap, symplectic-like.

q (+) xi is `pinocchio.integrate`, which keeps quaternions on the unit sphere.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin

RightHandSide = Callable[[np.ndarray, np.ndarray], np.ndarray]
ARG1 = pin.ArgumentPosition.ARG1


class ManifoldRK4:
    """RKMK4 for a Pinocchio model; joints with non-commutative Lie groups get the dexp^-1 correction.

    The classical RK4 tableau (a_21 = a_32 = 1/2, a_43 = 1; b = (1/6, 1/3, 1/3, 1/6)), Munthe-Kaas 1998:
    stage i at y_i = y0 + dt sum_j a_ij d_j and q0 (+) xi_i with xi_i = dt sum_j a_ij k_j; result
    y = y0 + dt sum_j b_j d_j and q = q0 (+) dq, dq = dt sum_j b_j k_j. Here d_j = f(stage j) and k_j is
    stage j's velocity pulled back by dexp^-1 (k_1 = v0). Both sums use the same weights, so they are
    kept side by side in one table with rows [y0 | 0], [d_1 | k_1], ..., [d_4 | k_4]: each stage's
    (y_i, xi_i) and the result (y, dq) are one dot product with a row of weights (numpy's per-call cost,
    not arithmetic, dominates at nv ~ 20).
    """

    name = "rk4"

    def __init__(self, model: pin.Model):
        self.model = model
        self._se2 = [slice(j.idx_v, j.idx_v + 3) for j in model.joints[1:] if j.shortname() == "JointModelPlanar"]
        self._ny = None                     # len(y) the table below was made for (y may carry aux states)
        self._dt = None                     # the step its weights were made for

    def dexp_inv(self, q0: np.ndarray, q: np.ndarray, xi: np.ndarray, w: np.ndarray, out: np.ndarray) -> np.ndarray:
        """xi' such that d/dt (q0 (+) xi) = w (body velocity), q = q0 (+) xi: xi' = J_r(xi)^-1 w, into `out`.

        J_r(xi)^-1 = Jlog(exp(xi)) joint by joint, and exp(xi) = q0^-1 q, so Pinocchio's dDifference(q0, q)
        (ARG1) is the whole block-diagonal matrix in one call: Jlog6 on free flyers, Jlog3 on spherical
        joints, the identity on Euclidean and SO(2) joints (they commute). Pinocchio's Jlog3 (inside Jlog6)
        is accurate to ~3e-9 absolute for angles of 1e-4 to 1e-3 rad, 1e-16 elsewhere (measured,
        Pinocchio 3.4 and 4.1); its SE(2) Jlog to only ~5e-9 from 1e-4 rad up, so planar blocks are solved
        from dIntegrate (1e-13) instead.
        """
        pin.dDifference(self.model, q0, q, ARG1).dot(w, out=out)
        if self._se2:
            jac = pin.dIntegrate(self.model, q0, xi, ARG1)
            for b in self._se2:
                out[b] = np.linalg.solve(jac[b, b], w[b])
        return out

    def _prepare(self, ny: int, dt: float) -> None:
        """Table for len(y) = ny and the tableau's weights times dt (redone only when either changes)."""
        if ny != self._ny:
            self._table = np.zeros((5, ny + self.model.nv))    # row 0 stays [y0 | 0]
            self._d_rows = [row[:ny] for row in self._table]
            self._k_rows = [row[ny:] for row in self._table]
            self._ny = ny
        h, sixth = 0.5 * dt, dt / 6.0
        self._stages = [(np.array(weights), self._table[:len(weights)])
                        for weights in ([1.0, h], [1.0, 0.0, h], [1.0, 0.0, 0.0, dt])]
        self._result_weights = np.array([1.0, sixth, 2.0 * sixth, 2.0 * sixth, sixth])
        self._dt = dt

    def step(self, f: RightHandSide, q0: np.ndarray, y0: np.ndarray, dt: float):
        """One step of x = (q, y), y = [v, z]: q' = v (through dexp^-1), y' = f(q, y).

        Returns (q, y, dq), new arrays: dq is the tangent increment with q = q0 (+) dq; for a one-DOF joint
        it is the RK4 quadrature of its rate over the step, i.e. its exact angle change.
        """
        model, nv, ny = self.model, self.model.nv, len(y0)
        if ny != self._ny or dt != self._dt:
            self._prepare(ny, dt)
        d, k = self._d_rows, self._k_rows
        d[0][:] = y0
        k[1][:] = y0[:nv]                                    # dexp^-1(0) = identity
        d[1][:] = f(q0, y0)
        for i, (weights, rows) in enumerate(self._stages, start=2):
            stage = weights.dot(rows)
            y, xi = stage[:ny], stage[ny:]
            q = pin.integrate(model, q0, xi)
            d[i][:] = f(q, y)
            self.dexp_inv(q0, q, xi, y[:nv], k[i])
        result = self._result_weights.dot(self._table)
        dq = result[ny:]
        return pin.integrate(model, q0, dq), result[:ny], dq


class SemiImplicitEuler:
    """Symplectic (semi-implicit) Euler on the manifold."""

    name = "semi_implicit_euler"

    def __init__(self, model: pin.Model):
        self.model = model

    def step(self, f: RightHandSide, q0: np.ndarray, y0: np.ndarray, dt: float):
        """Returns (q, y, dq) as ManifoldRK4.step."""
        y = y0 + dt * f(q0, y0)
        dq = dt * y[:self.model.nv]
        return pin.integrate(self.model, q0, dq), y, dq


INTEGRATORS = {ManifoldRK4.name: ManifoldRK4, SemiImplicitEuler.name: SemiImplicitEuler}
