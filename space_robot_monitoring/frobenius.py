"""Frobenius (involutivity) test for any velocity constraint A(q) v = 0 on a Pinocchio configuration space.

The constraint rows are 1-forms omega^r = sum_k A_rk theta^k, where theta^k is the coframe dual to the
vector fields E_k behind Pinocchio's velocity coordinates v_k (lie_algebra.py: left-invariant fields on
free-flyer / spherical / planar joints, coordinate fields on one-DOF joints). The distribution
D = ker A is integrable (the constraint is holonomic) iff, for all u, w in D and every row r,

    d omega^r(u, w) = (D_u A) w - (D_w A) u - A [u, w]_G  = 0              (Frobenius)

where D_u A = d/de A(q (+) e u) (the derivative along Pinocchio's integrate, i.e. along the left-invariant
field) and [u, w]_G is the Lie bracket of the velocity spaces. The last term is there because body angular
velocity (and a free flyer's body-frame linear velocity) is not the time derivative of any coordinate:
a test that treats v as coordinate rates (drops the term) declares the rotation constraint "omega_z = 0"
integrable, which it is not, and the constraint "world-frame linear velocity = 0" non-integrable, which it
is (both shown in test/test_holonomy_curvature.py). The value on D does not depend on which rows describe
D (for A' = M A, d omega' = M d omega on D), so the rank computed here is a property of the distribution.

`involutivity_check` evaluates d omega on an orthonormal basis of ker A: for momentum constraints this is
the curvature of mechanical_connection.py in another basis; it also takes the combined momentum and
contact constraints of seed 004 eq. 2.34, or any other A(q).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .lie_algebra import VelocityBracket

# Central-difference step on q (rad or m): about the cube root of machine epsilon, which balances the
# O(h^2) truncation and the O(eps/h) round-off of a central difference for quantities of order one.
FINITE_DIFFERENCE_STEP = 6e-6


@dataclass(frozen=True)
class FrobeniusCheck:
    """Result of `involutivity_check` at one configuration.

    basis: (nv, p) orthonormal basis of ker A. obstruction: (m, p, p), d omega^r(n_a, n_b).
    singular_values: of the (m x p(p-1)/2) matrix of obstructions over pairs a < b.
    rank: their count above rank_rtol * scale: the number of independent constraint directions that
    brackets of allowed motions leave (0: integrable). scale: largest |D_a A n_b| + |D_b A n_a| +
    |A [n_a, n_b]| over pairs. relative_residual: largest singular value / scale.
    """

    basis: np.ndarray
    obstruction: np.ndarray
    singular_values: np.ndarray
    rank: int
    scale: float
    relative_residual: float


def finite_difference_derivative(model: pin.Model, matrix: Callable[[np.ndarray], np.ndarray], q: np.ndarray,
                                 u: np.ndarray, step: float = FINITE_DIFFERENCE_STEP) -> np.ndarray:
    """D_u A = d/de A(q (+) e u) by a central difference along pin.integrate."""
    return (matrix(pin.integrate(model, q, step * u)) - matrix(pin.integrate(model, q, -step * u))) / (2.0 * step)


def involutivity_check(model: pin.Model, q: np.ndarray, matrix: Callable[[np.ndarray], np.ndarray],
                       derivative: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                       rank_rtol: float = 1e-6, velocity_weights: np.ndarray | None = None) -> FrobeniusCheck:
    """Frobenius test of A(q) v = 0 at q.

    matrix(q) -> A (m x nv). derivative(q, u) -> D_u A (m x nv); by default a central finite difference
    (then rank_rtol must exceed its relative error, about 1e-10; 1e-6 leaves margin).
    velocity_weights (nv,): metric for the orthonormal basis, e.g. 1/L on linear velocities and prismatic
    rates so that the basis is not dominated by units (the rank does not depend on it, the residual's
    normalisation does). Rows of A are used as given.
    """
    a = matrix(q)
    if derivative is None:
        def derivative(qq, u):
            return finite_difference_derivative(model, matrix, qq, u)
    nv = model.nv
    w = np.ones(nv) if velocity_weights is None else np.asarray(velocity_weights, dtype=float)
    # ker(A) in weighted coordinates y = w * v: A v = (A / w) y.
    _, sv, vt = np.linalg.svd(a / w)
    # numerical rank of A with numpy's matrix_rank rule: sigma > sigma_max * max(m, n) * eps
    rank_a = int(np.sum(sv > sv[0] * max(a.shape) * np.finfo(float).eps)) if len(sv) else 0
    basis = (vt[rank_a:].T) / w[:, None]
    p = basis.shape[1]
    da = np.stack([derivative(q, basis[:, k]) for k in range(p)])         # (p, m, nv)
    cross = np.einsum("amn,nb->mab", da, basis)                             # (D_a A) n_b
    bracket = VelocityBracket(model)(basis[:, :, None], basis[:, None, :])  # (nv, p, p)
    a_bracket = np.einsum("mn,nab->mab", a, bracket)
    obstruction = cross - cross.transpose(0, 2, 1) - a_bracket
    iu, ju = np.triu_indices(p, 1)
    pairs = obstruction[:, iu, ju]
    size = (np.abs(cross) + np.abs(cross.transpose(0, 2, 1)) + np.abs(a_bracket))[:, iu, ju]
    scale = float(np.max(np.linalg.norm(size, axis=0), initial=0.0))
    svals = np.linalg.svd(pairs, compute_uv=False) if pairs.size else np.zeros(0)
    rank = int(np.sum(svals > rank_rtol * scale)) if scale > 0 else 0
    largest = float(svals[0]) if len(svals) else 0.0
    return FrobeniusCheck(basis, obstruction, svals, rank, scale, largest / scale if scale > 0 else 0.0)
