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

At the control rate (ComputedTorqueStep) the same law is evaluated without forming H*, c* or M_pp^-1: with
the Cholesky factorization M_pp = L L^T and

    u = M_pp^-1 (h_p + M_pc a_c),   so that (1) reads  a_p = M_pp^-1 tau_p - u,               (4)

the c rows of the dynamics give (2) as tau_c = M_cc a_c + M_cp a_p + h_c. Where tau_p acts on a few
coordinates only (the wheels), M_pp^-1 tau_p needs only those columns of M_pp^-1. For a group o of passive
coordinates ordered last (the bus rotation), K = (M_pp^-1)_oo maps forces on o to their accelerations, and
its inverse, the apparent inertia of o, is read off the factor: with L_oo the last diagonal block of L,

    K^-1 = L_oo L_oo^T                                                                         (5)

(the last block of L^-1 is L_oo^-1, and the rows of L^-1 above it vanish in those columns).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from space_robot_dynamics.index_views import contiguous_index

_dposv = lapack.dposv        # positional arguments: f2py parses them faster than keywords


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
        self._lowest_effort = -self.effort_limit
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
        # One solve gives M_pp^-1, M_pp^-1 M_pc and M_pp^-1 h_p (M_pp is symmetric positive definite): LAPACK's
        # Cholesky dposv, as ComputedTorqueStep (numpy's solve, an LU, ran ~100x slower on a loaded 2-core machine
        # with NumPy 1.26's threaded OpenBLAS). The lower triangle of M_pp in Fortran order is its transpose.
        _factor, sol, info = _dposv(rows_p[:, self.passive].T, rhs, 1, 0)
        if info:
            raise np.linalg.LinAlgError(f"M_pp is not positive definite (LAPACK dposv info {info})")
        Z, W, y = sol[:, :n_p], sol[:, n_p:n_p + n_c], sol[:, -1]
        H_star = M[self.controlled][:, self.controlled] - M_pc.T @ W
        c_star = h[self.controlled] - M_pc.T @ y
        return ReducedDynamics(H_star, c_star, Z, W, y)     # H* symmetric to round-off (M_cp = M_pc^T)

    def clip(self, torque: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Clip to +-effort_limit (N m). Returns (applied torque, mask of clipped joints)."""
        applied = self.limit(torque)
        return applied, applied != torque

    def limit(self, torque: np.ndarray) -> np.ndarray:
        """`torque` clipped to +-effort_limit (N m), a new array (clip() without the mask)."""
        return np.minimum(np.maximum(torque, self._lowest_effort), self.effort_limit)


class ComputedTorqueStep:
    """Eqs. (1), (2), (4), (5) for one control step: one crba, one nonLinearEffects, and one LAPACK call
    (dposv: Cholesky factorization of M_pp and solve with 2 + len(forced_v) right-hand sides).

    dynamics: the split into controlled and passive coordinates (and the model). forced_v: v indices of the
    passive coordinates on which forces are applied (the wheels); observed_v: v indices of passive
    coordinates whose acceleration is to be cancelled (the bus rotation), ordered last in the elimination
    for eq. (5). Use: solve(q, v, a_c), then cancelling_force() and torque(forces), which refer to the
    state of the last solve(). After solve(), `accelerations(forces, scale)` and `scale(alpha)` take the controlled
    accelerations as alpha a_c (the grasp-wrench limiter's scaling) from the same factorization: eq. (4) is affine
    in a_c, u(alpha) = (1 - alpha) u_0 + alpha u with u_0 = M_pp^-1 h_p, the last right-hand side of the solve.
    """

    def __init__(self, dynamics: FreeFloatingComputedTorque, forced_v=(), observed_v=()):
        self.model = dynamics.model
        self.data = self.model.createData()
        passive, controlled = dynamics.passive, dynamics.controlled
        forced = _passive_subset(forced_v, passive, "forced_v")
        observed = _passive_subset(observed_v, passive, "observed_v")
        order = np.concatenate((passive[~np.isin(passive, observed)], observed)).astype(int)
        nv, self._n_p = self.model.nv, len(passive)
        self._passive = order                          # the passive coordinates, observed last
        self._controlled = contiguous_index(controlled)
        # Flat indices of [M_pp; M_cp] (columns in `order`) in M: one take gives LAPACK its matrix (the first
        # n_p rows, contiguous) and eq. (2) its coupling block.
        self._blocks = np.concatenate((order, controlled)).astype(int)[:, None] * nv + order[None, :]
        self._observed = slice(self._n_p - len(observed), self._n_p)
        self._lower = np.tril(np.ones((len(observed), len(observed))))   # dposv leaves M_pp above the diagonal
        self._L_oo = np.zeros((len(observed), len(observed)))
        self._position = {int(i): k for k, i in enumerate(order)}
        self._forced = forced
        self._forces = slice(1, 1 + len(forced))
        self._acceleration = np.zeros(nv)          # a_c on the controlled coordinates, zero on the passive ones
        self._alpha = 1.0
        self._bias = np.zeros(nv)                  # h (with scaling on)
        self._layout(scalable=False)
        self._factor = np.zeros((0, 0))
        self._coupling = np.zeros((len(controlled), self._n_p))     # M_cp
        self._drift = np.zeros(nv)                                  # M [0; a_c] + h

    def _layout(self, scalable: bool) -> None:
        """Right-hand sides [h_p + M_pc a_c | unit columns of the forced coordinates (| h_p with scaling on)],
        Fortran order for LAPACK, and the weights that combine their solutions: a_p = [u | M_pp^-1 E_f | u_0]
        [-alpha; forces; alpha - 1]."""
        self.scalable = scalable
        self._rhs = np.zeros((self._n_p, 1 + len(self._forced) + int(scalable)), order="F")
        for j, i in enumerate(self._forced):
            self._rhs[self._position[int(i)], 1 + j] = 1.0
        self._rhs_drift = self._rhs[:, 0]           # a contiguous view (Fortran order)
        self._rhs_bias = self._rhs[:, -1] if scalable else None
        self._weights = np.zeros(self._rhs.shape[1])
        self._weights[0] = -1.0
        self._solution = np.zeros((self._n_p, self._rhs.shape[1]))

    def enable_scaling(self) -> None:
        """scale() and accelerations() from the next solve() on: h_p becomes one more right-hand side (the
        grasp-wrench limiter's; off by default, since it costs every update a copy and a column)."""
        if not self.scalable:
            self._layout(scalable=True)

    def solve(self, q: np.ndarray, v: np.ndarray, controlled_acceleration: np.ndarray) -> None:
        """Factor M_pp(q) and solve eq. (4) at (q, v) for the controlled accelerations a_c (rad/s^2).
        q, v: normalized configuration and velocity (checked by the caller)."""
        model, data = self.model, self.data
        M = pin.crba(model, data, q)
        drift = pin.nonLinearEffects(model, data, q, v)      # a new array: h, then M [0; a_c] + h
        if self.scalable:
            self._bias = drift.copy()
        acceleration = self._acceleration
        acceleration[self._controlled] = controlled_acceleration
        drift += M.dot(acceleration)          # passive rows: h_p + M_pc a_c; controlled rows: h_c + M_cc a_c
        self._drift = drift
        self._alpha = 1.0
        self._weights[0] = -1.0
        if self.scalable:
            self._weights[-1] = 0.0
        blocks = M.take(self._blocks)
        n_p = self._n_p
        self._coupling = blocks[n_p:]
        if n_p:
            self._rhs_drift[...] = drift[self._passive]
            if self.scalable:
                self._rhs_bias[...] = self._bias[self._passive]
            # M_pp is symmetric: its transpose is the same matrix in the Fortran order LAPACK works in place on.
            self._factor, self._solution, info = _dposv(blocks[:n_p].T, self._rhs, 1, 1)   # lower, overwrite_a
            if info:
                raise np.linalg.LinAlgError(f"M_pp is not positive definite (LAPACK dposv info {info})")

    def cancelling_force(self) -> list[float]:
        """Forces on the observed coordinates that alone cancel their acceleration (eq. 1 with tau_p on them
        only): K^-1 u_o = L_oo L_oo^T u_o by eq. (5), in the order of observed_v (N m for rotations), as
        Python floats (the attitude law works on floats)."""
        o = self._observed
        if o.stop - o.start == 3:
            # The bus rotation: the 3 x 3 triangular products on floats cost a third of numpy's calls.
            (l00, _, _), (l10, l11, _), (l20, l21, l22) = self._factor[o, o].tolist()
            u0, u1, u2 = self._solution[o, 0].tolist()
            w0, w1, w2 = l00 * u0 + l10 * u1 + l20 * u2, l11 * u1 + l21 * u2, l22 * u2      # L_oo^T u_o
            return [l00 * w0, l10 * w0 + l11 * w1, l20 * w0 + l21 * w1 + l22 * w2]
        L_oo = np.multiply(self._factor[o, o], self._lower, out=self._L_oo)
        return L_oo.dot(L_oo.T.dot(self._solution[o, 0])).tolist()

    def torque(self, forces: np.ndarray | None = None) -> np.ndarray:
        """Eq. (2) as the c rows of the dynamics, tau_c = M_cc a_c + h_c + M_cp a_p (order of the controlled
        coordinates), with `forces` (order of forced_v; None: zero) acting on the forced coordinates and none
        on the other passive ones: a_p = [u | M_pp^-1 E_f] [-1; forces] by eq. (4)."""
        weights = self._weights
        weights[self._forces] = 0.0 if forces is None else forces
        drift = self._drift[self._controlled]
        if self._alpha != 1.0:                # h_c + alpha M_cc a_c
            bias = self._bias[self._controlled]
            drift = bias + self._alpha * (drift - bias)
        return self._coupling.dot(self._solution.dot(weights)) + drift

    def scale(self, alpha: float) -> None:
        """From now until the next solve(), the controlled accelerations are alpha a_c (torque() and
        accelerations() at alpha 1 then give alpha's): eq. (4) at alpha a_c without a new factorization. Needs
        enable_scaling() before the solve."""
        if not self.scalable:
            raise RuntimeError("ComputedTorqueStep.scale needs enable_scaling() before solve()")
        self._alpha = float(alpha)
        self._weights[0], self._weights[-1] = -self._alpha, self._alpha - 1.0

    def accelerations(self, forces: np.ndarray | None = None, alpha: float = 1.0) -> np.ndarray:
        """The full acceleration vector (nv, model order) for the controlled accelerations alpha a_c of the last
        solve() and `forces` (order of forced_v) on the forced coordinates: a_c scaled on the controlled ones,
        a_p of eq. (4) on the passive ones. Needs enable_scaling() before the solve."""
        if not self.scalable:
            raise RuntimeError("ComputedTorqueStep.accelerations needs enable_scaling() before solve()")
        weights = np.zeros(len(self._weights))
        weights[0], weights[-1] = -alpha, alpha - 1.0
        if forces is not None:
            weights[self._forces] = forces
        a = np.zeros(self.model.nv)
        a[self._controlled] = alpha * self._acceleration[self._controlled]
        if self._n_p:
            a[self._passive] = self._solution.dot(weights)
        return a


def _passive_subset(v_indices, passive: np.ndarray, field: str) -> np.ndarray:
    indices = np.asarray(v_indices, dtype=int).reshape(-1)
    if len(np.unique(indices)) != len(indices) or not np.isin(indices, passive).all():
        raise ValueError(f"{field} must be distinct passive v indices, got {indices.tolist()}")
    return indices
