"""Mechanical connection and its curvature: the integrability test of the momentum (and contact) constraints.

Setting (docs/holonomy.md). Velocity constraints C(q) v = 0 (momentum h = 0, seed 004 eq. 2.25; optionally
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

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from .constraint_stack import ConstraintStack
from .lie_algebra import bracket_constants, bracket_pairs
from .small_linear_algebra import singular_values_from_gram
from .system_partition import index_or_slice


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


class PairCurvature(NamedTuple):
    """The part of ConnectionCurvature the monitor publishes from, for the joint pairs i < j only (in
    np.triu_indices order), components first: K (6 n_f, n_s); F (6 n_f, n_pairs), column p = F[i, j];
    term_size (6 n_f, n_pairs), column p = term_size()[i, j]. Same arithmetic as ConnectionCurvature
    (test_holonomy_curvature.py checks it). fields (n_s, nv): row i = X_i = (K_i, e_i), the allowed motion per
    unit rate of shape joint i in Pinocchio velocity coordinates."""

    K: np.ndarray
    F: np.ndarray
    term_size: np.ndarray
    fields: np.ndarray


_CURVATURE_SIGNS = np.array([1.0, -1.0, 1.0])      # F_ij = X_i(K_j) - X_j(K_i) + [K_i, K_j]
_ONES3 = np.ones(3)


class MechanicalConnection:
    """Computes ConnectionCurvature for constraints C = stacked `constraints` (objects with rows, matrix(q)
    and derivative(q, u), e.g. momentum_matrices.CentroidalMomentum and contact_constraint.WeldConstraint),
    fibres (free flyers) and shape velocity indices shape_v; or, for a flexible model whose tip chains follow the
    modal coordinates, `shape_basis` (nv, n_s): each shape coordinate's velocity field (system_partition), so
    that C_s = C shape_basis and the fields X_i carry the dependent velocities.

    C_f must be square and invertible: 6 rows per fibre (momentum for one free body; momentum + weld for
    a robot holding a target).
    """

    def __init__(self, model: pin.Model, constraints: list, fibres: list[Fibre], shape_v: np.ndarray,
                 shape_basis: np.ndarray | None = None):
        self.model = model
        self.shape_basis = shape_basis
        self.constraints = ConstraintStack(constraints)
        self.fibres = list(fibres)
        self.fibre_v = np.concatenate([f.base_v for f in fibres])
        self.shape_v = np.asarray(shape_v, dtype=int)
        if self.constraints.rows != len(self.fibre_v):
            raise ValueError(f"{self.constraints.rows} constraint rows for {len(self.fibre_v)} fibre velocities: "
                             "the connection needs a square C_f")
        # Index work done once: the fields X_i = (K_i, e_i) as rows (shape part constant), the se(3)
        # structure constants of the fibres, and the entries of the terms (see _terms) that the pairs i < j
        # need: X_i(K_j), X_j(K_i), [K_i, K_j].
        ns = len(self.shape_v)
        self._fibre = index_or_slice(self.fibre_v)
        self._shape = index_or_slice(self.shape_v)
        self._fields = np.zeros((ns, model.nv))
        if shape_basis is None:
            self._fields[np.arange(ns), self.shape_v] = 1.0
        else:
            self._fields[:] = shape_basis.T
        self._constants = bracket_constants(len(self.fibres))
        iu, ju = np.triu_indices(ns, 1)
        rows = len(self.fibre_v)
        # flat indices into terms (2, 6 nf, ns^2) (see _terms): [term, component r, pair p], flattened over (r, p)
        columns = np.stack((iu * ns + ju, ju * ns + iu, rows * ns * ns + ju * ns + iu))    # (3, n_pairs)
        self._pair_index = (np.arange(rows)[None, :, None] * (ns * ns) + columns[:, None, :]).reshape(3, -1)
        self._n_pairs = len(iu)
        # matrix(q) -> C(q) (rows x nv): the stack's own method, bound here (one Python call less per cycle)
        self.matrix = self.constraints.matrix


    def connection(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, C_f^-1, C) at q."""
        c = self.matrix(q)
        cf_inv = np.linalg.inv(c[:, self._fibre])
        return -cf_inv @ self._shape_columns(c), cf_inv, c

    def _shape_columns(self, c: np.ndarray) -> np.ndarray:
        """C_s: the columns of C on the shape velocities (C times the shape basis for a flexible model)."""
        return c[:, self._shape] if self.shape_basis is None else c.dot(self.shape_basis)

    def fibre_block(self, c: np.ndarray) -> np.ndarray:
        """C_f, the columns of C(q) on the fibre velocities (square)."""
        return c[:, self._fibre]

    def _terms(self, q: np.ndarray, c: np.ndarray, cf_inverse: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, terms, fields) from C = C(q), terms (2, 6 nf, ns^2) with fibre components r in the middle:
        terms[0, r, i ns + j] = X_i(K_j)_r and terms[1, r, j ns + i] = [K_i, K_j]_r; fields (ns, nv), row i = X_i.

        X_i(K_j) = -C_f^-1 X_i(C) (K_j; e_j) (module docstring), with the constraint sources' derivatives along
        the fields X_i (their `kernel_derivatives`: the fields are allowed velocities). Plain 2-D products
        throughout: these arrays are small, and each numpy call costs more than its arithmetic."""
        k_map = -(np.linalg.inv(c[:, self._fibre]) if cf_inverse is None else cf_inverse)  # rows -> fibre twists
        k = k_map.dot(self._shape_columns(c))
        fields = self._fields.copy()                        # (ns, nv), row i = X_i
        fields[:, self._fibre] = k.T
        ns, nv = fields.shape
        derivatives = self.constraints.kernel_derivatives(q, fields.T)    # (rows, ns nv): block i = X_i(C)
        rows = len(derivatives)
        # [r, i, j] = (X_i(C) X_j)_r, then k_map applied to r
        applied = derivatives.reshape(rows * ns, nv).dot(fields.T).reshape(rows, ns * ns)
        terms = np.empty((2, rows, ns * ns))
        k_map.dot(applied, out=terms[0])
        bracket_pairs(k, self._constants, out=terms[1])
        return k, terms, fields

    def compute(self, q: np.ndarray) -> ConnectionCurvature:
        c = self.matrix(q)
        k, terms, _ = self._terms(q, c, None)
        ns = k.shape[1]
        dk = terms[0].T.reshape(ns, ns, -1)                              # [i, j] = X_i(K_j)
        bracket = terms[1].reshape(-1, ns, ns).transpose(2, 1, 0)        # [i, j] = [K_i, K_j]
        curvature = dk - dk.transpose(1, 0, 2) + bracket
        return ConnectionCurvature(k, dk, curvature, bracket, c)

    def pair_curvature(self, q: np.ndarray, c: np.ndarray, cf_inverse: np.ndarray | None = None) -> PairCurvature:
        """K, F[i, j] and the term size for i < j only (the monitor's per-cycle path), from C = matrix(q),
        computed by the caller so that it can read the constraint sources' Pinocchio data at q in between,
        and optionally C_f^-1 (inverted by the caller together with other matrices)."""
        k, terms, fields = self._terms(q, c, cf_inverse)
        shape = (len(k), self._n_pairs)
        columns = terms.take(self._pair_index)          # (3, 6 nf n_pairs): X_i K_j, X_j K_i, [K_i, K_j]
        curvature = _CURVATURE_SIGNS.dot(columns).reshape(shape)
        np.abs(columns, out=columns)
        return PairCurvature(k, curvature, _ONES3.dot(columns).reshape(shape), fields)


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
        ns, nf6 = len(shape_scale), 6 * n_fibres
        self.pairs = np.triu_indices(ns, 1)                         # (i, j), i < j
        iu, ju = self.pairs
        fibre_scale = np.tile(np.r_[np.full(3, 1.0 / length_scale), np.ones(3)], n_fibres)
        pair_scale = shape_scale[iu] * shape_scale[ju]
        self.weight = fibre_scale[:, None] * pair_scale[None, :]   # (6 nf, n_pairs), components first
        # com_jacobian columns times this, applied to the weighted F: pair_scale / L on the SI centre-of-mass
        # velocity (linear parts are already divided by L in the weighted F, angular ones not)
        self.com_column_scale = np.tile(np.r_[np.ones(3), np.full(3, 1.0 / length_scale)], n_fibres)
        # squares of [weighted term size (6 nf rows), scaled centre-of-mass velocity (3 rows)] summed into: the
        # robot base's angular term size, the whole term size, the centre-of-mass velocity
        self.square_sums = np.zeros((3, nf6 + 3))
        self.square_sums[0, 3:6] = 1.0
        self.square_sums[1, :nf6] = 1.0
        self.square_sums[2, nf6:] = 1.0
        self.rank_rtol = rank_rtol

    def figures(self, result: ConnectionCurvature, com_jacobian: np.ndarray) -> CurvatureFigures:
        """pair_figures of a full ConnectionCurvature."""
        iu, ju = self.pairs
        return self.pair_figures(result.F[iu, ju].T, result.term_size()[iu, ju].T, com_jacobian)

    def pair_figures(self, curvature: np.ndarray, term_size: np.ndarray, com_jacobian: np.ndarray
                     ) -> CurvatureFigures:
        """From F_ij and the term size for the pairs i < j ((6 n_f, n_pairs) each, components first, SI;
        PairCurvature), and com_jacobian (see `parts`)."""
        parts = self.parts(curvature, term_size, com_jacobian)
        if parts is None:
            return CurvatureFigures(np.zeros(3), 0, 0.0)
        return self.figures_from(parts, np.linalg.svd(parts.attitude, compute_uv=False))

    def parts(self, curvature: np.ndarray, term_size: np.ndarray, com_jacobian: np.ndarray) -> CurvatureParts | None:
        """Everything but the singular values (None without joint pairs), so that a caller can compute those
        with other matrices' in one call (then `figures_from`).

        com_jacobian: (3 x 6 n_f), [G_1 ... G_nf] with cdot = sum_f G_f xi_f the velocity of the constrained
        system's centre of mass (world, m/s) produced by the fibre twists xi_f:
        G_f = (m_f / M) R_f [E_3, -[c_f x]] with m_f, c_f the mass and centre of mass (base frame) of the
        bodies that move with base f. The linear-momentum residual is |sum_f G_f F_ij^f|, the bracket's
        centre-of-mass velocity, zero when linear momentum is integrable (the centre-of-mass gauge of the
        module docstring, generalised to several fibres).
        """
        if curvature.shape[1] == 0:
            return None
        weighted = curvature * self.weight
        rows = len(weighted)
        squares = np.empty((rows + 3, weighted.shape[1]))     # [weighted term size; centre-of-mass velocity]
        np.multiply(term_size, self.weight, out=squares[:rows])
        (com_jacobian * self.com_column_scale).dot(weighted, out=squares[rows:])
        squares *= squares
        # largest over the pairs of: attitude term size^2, term size^2, centre-of-mass velocity^2
        sums = self.square_sums.dot(squares).tolist()
        attitude_scale, all_scale, com_velocity = (math.sqrt(max(row)) for row in sums)
        attitude = weighted[3:6]
        return CurvatureParts(attitude.T, attitude.dot(attitude.T), self.rank_rtol * attitude_scale,
                              com_velocity / all_scale if all_scale > 0.0 else 0.0)

    @staticmethod
    def attitude_singular_values(parts: CurvatureParts, gram_singular_values: np.ndarray) -> np.ndarray:
        """The singular values of parts.attitude (A, n_pairs x 3) from the singular values (or the eigenvalues,
        decreasing) of its Gram matrix parts.attitude_gram = A^T A, which a caller can compute together with
        other matrices': s = sqrt(s_G), or from the SVD of A itself when the Gram route loses accuracy
        (small_linear_algebra.singular_values_from_gram)."""
        return singular_values_from_gram(parts.attitude, gram_singular_values[:min(3, len(parts.attitude))])

    @staticmethod
    def figures_from(parts: CurvatureParts, attitude_singular_values: np.ndarray) -> CurvatureFigures:
        threshold = parts.attitude_threshold
        rank = len([x for x in attitude_singular_values.tolist() if x > threshold])
        return CurvatureFigures(attitude_singular_values, rank, parts.linear_residual)


class CurvatureParts(NamedTuple):
    """CurvatureFigureMaker.parts: attitude (n_pairs, 3) (a transposed view), the robot base's scaled angular
    curvature per pair, whose singular values are published; attitude_gram, its Gram matrix (3 x 3);
    attitude_threshold, the rank threshold for them; linear_residual."""

    attitude: np.ndarray
    attitude_gram: np.ndarray
    attitude_threshold: float
    linear_residual: float


def curvature_figures(result: ConnectionCurvature, com_jacobians: list[np.ndarray], shape_scale: np.ndarray,
                      length_scale: float, rank_rtol: float) -> CurvatureFigures:
    """One-off CurvatureFigureMaker(...).figures(result, hstack(com_jacobians)) (see there); com_jacobians
    is the list of the per-fibre G_f (3 x 6)."""
    maker = CurvatureFigureMaker(np.asarray(shape_scale, dtype=float), len(com_jacobians), length_scale, rank_rtol)
    return maker.figures(result, np.hstack(com_jacobians))
