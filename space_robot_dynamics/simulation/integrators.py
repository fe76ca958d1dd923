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


class ManifoldRK4:
    """RKMK4 for a Pinocchio model; joints with non-commutative Lie groups get the dexp^-1 correction."""

    name = "rk4"

    def __init__(self, model: pin.Model):
        self.model = model
        self._se3, self._so3, self._se2 = [], [], []
        for joint in model.joints[1:]:
            kind = joint.shortname()
            if kind == "JointModelFreeFlyer":
                self._se3.append(slice(joint.idx_v, joint.idx_v + 6))
            elif kind == "JointModelSpherical":
                self._so3.append(slice(joint.idx_v, joint.idx_v + 3))
            elif kind == "JointModelPlanar":
                self._se2.append(slice(joint.idx_v, joint.idx_v + 3))

    def dexp_inv(self, q0: np.ndarray, xi: np.ndarray, w: np.ndarray) -> np.ndarray:
        """xi' such that d/dt (q0 (+) xi) = w (body velocity): xi' = J_r(xi)^-1 w, block by block.

        Euclidean and SO(2) joints commute, so their blocks are the identity.
        """
        out = w.copy()
        for b in self._se3:
            out[b] = pin.Jlog6(pin.exp6(xi[b])) @ w[b]      # J_r(xi)^-1 = Jlog6(exp6(xi))
        for b in self._so3:
            out[b] = pin.Jlog3(pin.exp3(xi[b])) @ w[b]
        if self._se2:  # no closed-form binding for SE(2): invert Pinocchio's own Jacobian block
            jac = pin.dIntegrate(self.model, q0, xi, pin.ArgumentPosition.ARG1)
            for b in self._se2:
                out[b] = np.linalg.solve(jac[b, b], w[b])
        return out

    def step(self, f: RightHandSide, q0: np.ndarray, y0: np.ndarray, dt: float):
        """One step of x = (q, y), y = [v, z]: q' = v (through dexp^-1), y' = f(q, y).

        Returns (q, y, dq): dq is the tangent increment with q = q0 (+) dq; for a one-DOF joint it is the
        RK4 quadrature of its rate over the step, i.e. its exact angle change.
        """
        model, nv = self.model, self.model.nv
        h = 0.5 * dt
        d1 = f(q0, y0)
        xi = h * y0[:nv]                                     # dexp^-1(0) = identity
        y2 = y0 + h * d1
        d2 = f(pin.integrate(model, q0, xi), y2)
        k2 = self.dexp_inv(q0, xi, y2[:nv])
        xi = h * k2
        y3 = y0 + h * d2
        d3 = f(pin.integrate(model, q0, xi), y3)
        k3 = self.dexp_inv(q0, xi, y3[:nv])
        xi = dt * k3
        y4 = y0 + dt * d3
        d4 = f(pin.integrate(model, q0, xi), y4)
        k4 = self.dexp_inv(q0, xi, y4[:nv])
        sixth = dt / 6.0
        dq = sixth * (y0[:nv] + 2.0 * (k2 + k3) + k4)
        return pin.integrate(model, q0, dq), y0 + sixth * (d1 + 2.0 * (d2 + d3) + d4), dq


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
