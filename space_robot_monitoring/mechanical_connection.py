"""Mechanical connection and its curvature: the integrability test of the momentum (and contact) constraints.

Setting (issue 4 sec. 2). Velocity constraints C(q) v = 0 (momentum h = 0, seed 004 eq. 2.25; optionally
with the rigid-grasp rows of eq. 2.30, i.e. the combined constraints of eq. 2.34), v split into fibre
velocities xi (the base twists of the free-floating bodies, Pinocchio LOCAL = body twists) and shape
velocities qdot (one-DOF joints). When C_f = C[:, fibre] is invertible the constraint is

    xi = K(q) qdot,   K = -C_f^-1 C_s                       (with momentum only: K = -H_b^-1 H_bm)

the mechanical connection. Column K_i is the base twist per unit rate of joint i; X_i = (K_i, e_i) spans
the allowed velocities. The allowed motions form an integrable (holonomic) distribution iff every
Lie bracket [X_i, X_j] is again allowed (Frobenius). Its shape part is zero, so the test is the fibre part

    F_ij = X_i(K_j) - X_j(K_i) + [K_i, K_j]                  (curvature, body twists)

with [.,.] the se(3) bracket of lie_algebra.py (left-invariant fields, since Pinocchio's base twist is a
body twist). For spatial (world) twists the bracket sign flips. Meaning (proved in
test/test_holonomy_loop.py by simulation): a small closed loop of side e in joints i then j, starting at
q0 with h = 0, returns the base displaced by exp(e^2 F_ij(q0) + O(e^3)) in its own frame.
X_i(K_j) is computed from Pinocchio's analytic derivatives: differentiating C (K_j; e_j) = 0 along X_i,

    X_i(K_j) = -C_f^-1 X_i(C) (K_j; e_j),

with X_i(C) from `computeCentroidalMapTimeVariation` and `computeJointJacobiansTimeVariation` evaluated
at the velocity X_i (the derivative follows the base and target as they move with joint i, which matters
once the target is welded: K then depends on the base-to-target pose too).

Gauge. The linear-momentum constraint alone is integrable (the centre of mass stays put): in the gauge of
a frame at the system centre of mass with the base's axes, h = (I, c_b) with c_b the centre of mass in the
base frame, the curvature is Ad_h^-1 F = (F_lin - c_b x F_ang, F_ang), whose linear part must vanish
(for several fibres: the centre-of-mass velocity of the bracket, see `curvature_figures`).

Units. F_ij is in fibre units per unit of shape coordinates squared (rad/rad^2, m/rad^2, ...). For ranks
and residuals everything is made dimensionless with a length L: linear fibre parts are divided by L and a
prismatic shape coordinate is measured in units of L.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .constraint_stack import ConstraintStack
from .lie_algebra import se3_bracket_pairs


@dataclass(frozen=True)
class Fibre:
    """One free-floating body group: its root joint id and its base velocity indices (6, linear first)."""

    root_joint_id: int
    base_v: np.ndarray


@dataclass(frozen=True)
class ConnectionCurvature:
    """K, its derivatives and the curvature at one configuration (see the module docstring).

    K: (6 n_f, n_s), fibre twists stacked in fibre order, per unit shape rate.
    dK: (n_s, n_s, 6 n_f), dK[i, j] = X_i(K_j).
    F: (n_s, n_s, 6 n_f), F[i, j] = dK[i, j] - dK[j, i] + [K_i, K_j]; antisymmetric in (i, j).
    bracket: (n_s, n_s, 6 n_f), the [K_i, K_j] term alone (for the sign-convention test and the scale).
    constraint_matrix: C(q) (rows x nv), the stacked constraint rows the connection was built from.
    All in SI, fibre twists in each base's own frame (Pinocchio LOCAL).
    """

    K: np.ndarray
    dK: np.ndarray
    F: np.ndarray
    bracket: np.ndarray
    constraint_matrix: np.ndarray

    def term_size(self) -> np.ndarray:
        """|X_i K_j| + |X_j K_i| + |[K_i, K_j]| per fibre component: the size of what cancels when F = 0."""
        return np.abs(self.dK) + np.abs(self.dK.transpose(1, 0, 2)) + np.abs(self.bracket)


class MechanicalConnection:
    """Computes ConnectionCurvature for constraints C = stacked `constraints` (objects with rows, matrix(q)
    and derivative(q, u), e.g. momentum_matrices.CentroidalMomentum and contact_constraint.WeldConstraint),
    fibres (free flyers) and shape velocity indices shape_v.

    C_f must be square and invertible: 6 rows per fibre (momentum for one free body; momentum + weld for
    a robot holding a target).
    """

    def __init__(self, model: pin.Model, constraints: list, fibres: list[Fibre], shape_v: np.ndarray):
        self.model = model
        self.constraints = ConstraintStack(constraints)
        self.fibres = list(fibres)
        self.fibre_v = np.concatenate([f.base_v for f in fibres])
        self.shape_v = np.asarray(shape_v, dtype=int)
        if self.constraints.rows != len(self.fibre_v):
            raise ValueError(f"{self.constraints.rows} constraint rows for {len(self.fibre_v)} fibre velocities: "
                             "the connection needs a square C_f")

    def matrix(self, q: np.ndarray) -> np.ndarray:
        """C(q) (rows x nv)."""
        return self.constraints.matrix(q)

    def connection(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, C_f^-1, C) at q."""
        c = self.matrix(q)
        cf_inv = np.linalg.inv(c[:, self.fibre_v])
        return -cf_inv @ c[:, self.shape_v], cf_inv, c

    def compute(self, q: np.ndarray) -> ConnectionCurvature:
        k, cf_inv, c = self.connection(q)
        ns, nv = len(self.shape_v), self.model.nv
        u = np.zeros((nv, ns))
        u[self.fibre_v] = k
        u[self.shape_v, np.arange(ns)] = 1.0
        g = self.constraints.kernel_derivatives(q, u) @ u    # g[i] = X_i(C) U (U is allowed: kernel form)
        dk = -(cf_inv @ g).transpose(0, 2, 1)         # dk[i, j] = X_i(K_j)
        bracket = se3_bracket_pairs(k.T)              # (ns, ns, 6 nf)
        curvature = dk - dk.transpose(1, 0, 2) + bracket
        return ConnectionCurvature(k, dk, curvature, bracket, c)


@dataclass(frozen=True)
class CurvatureFigures:
    """What the monitor publishes from a ConnectionCurvature (all dimensionless, see `curvature_figures`).

    attitude_singular_values: (3,) of the robot base's angular curvature over all joint pairs.
    nonholonomy_rank: how many attitude directions small joint loops can change (0..3). It is also the rank
        of the span of all the brackets (Frobenius: 0 iff integrable): the base's linear part is fixed by the
        angular part once the centre-of-mass part vanishes (linear_residual), and a welded target's twist by
        the base's, so the remaining components add no direction.
    linear_residual: largest centre-of-mass-gauge linear curvature over the term size (0 up to round-off,
        because linear momentum is integrable).
    """

    attitude_singular_values: np.ndarray
    nonholonomy_rank: int
    linear_residual: float


class CurvatureFigureMaker:
    """Ranks and residuals of a ConnectionCurvature, with the index work done once.

    shape_scale: per shape coordinate, 1 (rad) or length_scale (prismatic, m), so F_ij s_i s_j is per
    dimensionless coordinate; linear fibre parts are divided by length_scale. The robot base is fibre 0.
    Ranks count singular values above rank_rtol times the largest term size (|X_i K_j| + |X_j K_i| +
    |[K_i, K_j]|, same scaling) over joint pairs: F is a cancellation of those terms, so this separates
    "zero up to round-off" from "not zero" without an absolute epsilon.
    """

    def __init__(self, shape_scale: np.ndarray, n_fibres: int, length_scale: float, rank_rtol: float):
        ns = len(shape_scale)
        iu, ju = np.triu_indices(ns, 1)
        self.pairs = iu * ns + ju                                   # rows of F.reshape(ns * ns, -1)
        self.pairs_transposed = ju * ns + iu
        fibre_scale = np.tile(np.r_[np.full(3, 1.0 / length_scale), np.ones(3)], n_fibres)
        pair_scale = (shape_scale[iu] * shape_scale[ju])[:, None]
        self.weight = pair_scale * fibre_scale[None, :]             # (n_pairs, 6 nf)
        self.com_weight = pair_scale / length_scale
        self.rank_rtol = rank_rtol
        self.n_shape = ns

    def figures(self, result: ConnectionCurvature, com_jacobian: np.ndarray) -> CurvatureFigures:
        """com_jacobian: (3 x 6 n_f), [G_1 ... G_nf] with cdot = sum_f G_f xi_f the velocity of the constrained
        system's centre of mass (world, m/s) produced by the fibre twists xi_f:
        G_f = (m_f / M) R_f [E_3, -[c_f x]] with m_f, c_f the mass and centre of mass (base frame) of the
        bodies that move with base f. The linear-momentum residual is |sum_f G_f F_ij^f|, the bracket's
        centre-of-mass velocity, zero when linear momentum is integrable (the centre-of-mass gauge of the
        module docstring, generalised to several fibres).
        """
        if len(self.pairs) == 0:
            return CurvatureFigures(np.zeros(3), 0, 0.0)
        ns = self.n_shape
        raw = result.F.reshape(ns * ns, -1)[self.pairs]                  # (n_pairs, 6 nf), SI
        pairs_f = raw * self.weight
        dk = np.abs(result.dK.reshape(ns * ns, -1))
        size = (dk[self.pairs] + dk[self.pairs_transposed]
                + np.abs(result.bracket.reshape(ns * ns, -1)[self.pairs])) * self.weight
        size *= size
        attitude_scale = np.sqrt(size[:, 3:6].sum(axis=1).max())
        all_scale = np.sqrt(size.sum(axis=1).max())
        att_sv = np.linalg.svd(pairs_f[:, 3:6], compute_uv=False)
        com_velocity = (raw @ com_jacobian.T) * self.com_weight
        residual = np.sqrt((com_velocity * com_velocity).sum(axis=1).max())
        rtol = self.rank_rtol
        return CurvatureFigures(
            attitude_singular_values=att_sv,
            nonholonomy_rank=int(np.count_nonzero(att_sv > rtol * attitude_scale)),
            linear_residual=float(residual / all_scale) if all_scale > 0.0 else 0.0,
        )


def curvature_figures(result: ConnectionCurvature, com_jacobians: list[np.ndarray], shape_scale: np.ndarray,
                      length_scale: float, rank_rtol: float) -> CurvatureFigures:
    """One-off CurvatureFigureMaker(...).figures(result, hstack(com_jacobians)) (see there); com_jacobians
    is the list of the per-fibre G_f (3 x 6)."""
    maker = CurvatureFigureMaker(np.asarray(shape_scale, dtype=float), len(com_jacobians), length_scale, rank_rtol)
    return maker.figures(result, np.hstack(com_jacobians))
