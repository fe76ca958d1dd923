"""Joint-space computed torque for a free-floating system: the generalized (reduced) inertia.

Whole-system dynamics (servicer base, arm, wheels, target; seed 004 eq. 5.14 without contact):
    M(q) vdot + h(q, v) = tau,
M from `pinocchio.crba`, h (Coriolis, centrifugal and gravity terms) from `pinocchio.nonLinearEffects`,
velocities and forces in Pinocchio's convention (a free-flying base: linear and angular, base-link frame).

Split v into the controlled coordinates c (arm joints, whose accelerations a_c are prescribed) and the
passive coordinates p (bases, wheels, target), whose generalized forces tau_p are known: zero on the
unactuated free-flying bases, the commanded torques on the wheel joints. The p rows are the momentum
balance of the free-floating system at the acceleration level and give

    a_p = M_pp^-1 (tau_p - h_p - M_pc a_c),                                    (1)

and the c rows then give the arm torques that produce a_c on the floating system:

    tau_c = H* a_c + c* + M_cp M_pp^-1 tau_p,                                  (2)
    H* = M_cc - M_cp M_pp^-1 M_pc,    c* = h_c - M_cp M_pp^-1 h_p.            (3)

H* is the generalized inertia matrix of a free-floating space robot (Umetani & Yoshida 1989, with the
base eliminated); seed 004 eqs. 5.25-5.30 eliminate the target the same way and the equations after 5.32
the base's linear motion; eq. 6.6 is the resulting inverse-dynamics law. Here base, wheels and target are
eliminated at once, and the wheel torques (the attitude loop's output) enter through the last term of (2).
The elimination is exact for any momentum (non-zero momentum enters through h); with a computed torque
and the same model, Pinocchio's forward dynamics (`pinocchio.aba`) returns a_c to round-off.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin


@dataclass
class ReducedDynamics:
    """Eqs. (1)-(3) at one state. Sizes: nc controlled, np passive coordinates (orders as the indices).

    inertia: H* (nc x nc, kg m^2 for revolute joints); bias: c* (nc, N m);
    passive_inverse: M_pp^-1 (np x np); coupling: M_pp^-1 M_pc (np x nc); passive_bias: M_pp^-1 h_p (np).
    """

    inertia: np.ndarray
    bias: np.ndarray
    passive_inverse: np.ndarray
    coupling: np.ndarray
    passive_bias: np.ndarray

    def torque(self, controlled_acceleration: np.ndarray, passive_force: np.ndarray) -> np.ndarray:
        """Eq. (2): generalized forces on the controlled coordinates (N m) that produce the given
        accelerations while `passive_force` (np) acts on the passive coordinates."""
        return self.inertia @ controlled_acceleration + self.bias + self.coupling.T @ passive_force

    def passive_acceleration(self, controlled_acceleration: np.ndarray, passive_force: np.ndarray) -> np.ndarray:
        """Eq. (1): accelerations of the passive coordinates (base twist rates in the base-link frame)."""
        return self.passive_inverse @ passive_force - self.passive_bias - self.coupling @ controlled_acceleration


class FreeFloatingComputedTorque:
    """Computed torque on the controlled coordinates of a free-floating Pinocchio model.

    controlled_v: indices into v of the controlled (actuated, acceleration-prescribed) joints, in the order
    of the torque vectors; all other coordinates are passive. An empty list is allowed (everything passive:
    eq. (1) is then the forward dynamics, used by attitude-only control).
    effort_limit: |tau| limit per controlled joint (N m), from the URDF.
    """

    def __init__(self, model: pin.Model, controlled_v, effort_limit=None):
        self.model = model
        self.data = model.createData()
        self.controlled = np.asarray(controlled_v, dtype=int).reshape(-1)
        if len(np.unique(self.controlled)) != len(self.controlled):
            raise ValueError("controlled_v has duplicate indices")
        mask = np.ones(model.nv, dtype=bool)
        mask[self.controlled] = False
        self.passive = np.flatnonzero(mask)
        self.effort_limit = (np.full(len(self.controlled), np.inf) if effort_limit is None
                             else np.asarray(effort_limit, dtype=float).reshape(len(self.controlled)))
        n_p, n_c = len(self.passive), len(self.controlled)
        # Right-hand side of the one solve in reduce(): [I | M_pc | h_p]; the identity block is fixed.
        self._rhs = np.zeros((n_p, n_p + n_c + 1))
        self._rhs[:, :n_p] = np.eye(n_p)

    def passive_index(self, v_index: int) -> int:
        """Position of velocity index `v_index` among the passive coordinates."""
        hits = np.flatnonzero(self.passive == v_index)
        if hits.size != 1:
            raise ValueError(f"v index {v_index} is not a passive coordinate")
        return int(hits[0])

    def reduce(self, q: np.ndarray, v: np.ndarray) -> ReducedDynamics:
        """Eqs. (1)-(3) at (q, v): one crba, one nonLinearEffects and one linear solve of size np."""
        M = pin.crba(self.model, self.data, q)
        h = pin.nonLinearEffects(self.model, self.data, q, v)
        n_p, n_c = len(self.passive), len(self.controlled)
        rows_p = M[self.passive]
        M_pc = rows_p[:, self.controlled]
        h_p = h[self.passive]
        rhs = self._rhs
        rhs[:, n_p:n_p + n_c] = M_pc
        rhs[:, -1] = h_p
        # One solve gives M_pp^-1, M_pp^-1 M_pc and M_pp^-1 h_p (M_pp is symmetric positive definite).
        sol = np.linalg.solve(rows_p[:, self.passive], rhs)
        Z, W, y = sol[:, :n_p], sol[:, n_p:n_p + n_c], sol[:, -1]
        H_star = M[self.controlled][:, self.controlled] - M_pc.T @ W
        c_star = h[self.controlled] - M_pc.T @ y
        return ReducedDynamics(H_star, c_star, Z, W, y)     # H* symmetric to round-off (M_cp = M_pc^T)

    def clip(self, torque: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Clip to +-effort_limit (N m). Returns (applied torque, mask of clipped joints)."""
        applied = np.minimum(np.maximum(torque, -self.effort_limit), self.effort_limit)
        return applied, applied != torque
