"""The "holonomy criterion" of seed 004 sec. 4.2 (eqs. 4.1-4.16): the matrix Y_h and its rank.

Read this before using the number. Y_h does NOT test integrability.

The thesis algorithm, for a constraint A theta_dot = 0 with A (m x N) of full row rank:
    A+ = A^T (A A^T)^-1                                        (eq. 4.9)
    D = I - A+ A = U S V^T                                     (eqs. 4.8, 4.10-4.12)
    P_perp = [u_1 ... u_{N-m}]   (the left singular vectors of the N - m nonzero singular values, eq. 4.14)
    A_tilde = [A; P_perp^T]      (N x N; printed "[A; P_perp]" in eq. 4.7, which only fits transposed)
    Y_h = first m rows and m columns of A_tilde^-1              (eqs. 4.15-4.16)
and it declares the constraint holonomic when Y_h has full rank m (Theorem 4.1).

Closed form. The rows of P_perp^T are orthonormal and orthogonal to the rows of A, so
A_tilde [A+, P_perp] = [[A A+, A P_perp], [P_perp^T A+, P_perp^T P_perp]] = I, i.e. A_tilde^-1 = [A+, P_perp], and

    Y_h = (A+)[:m, :m] = A[:, :m]^T (A A^T)^-1,     rank Y_h = rank A[:, :m].

Y_h is the block of the pseudo-inverse that belongs to the first m velocity coordinates. Its rank says
whether the constraint can be solved for those m velocities: a property of the value of A at one point,
of the coordinate ordering and, for angular momentum, of the reference point. Integrability (Frobenius)
is a property of the derivatives of A, which Y_h never looks at. On seed 004's ordering
[V_b, Omega_b, qdot, omega_t, v_t]:
- linear momentum: A[:, :3] = H_Vb = M E_3 (eq. 2.14)                  -> rank 3 at every configuration;
- angular momentum about r_b: A[:, :3] = H_VbOb^T = [M (r_G - r_b) x]  -> rank 2 whenever the system's centre
  of mass r_G is off the base centroid (a skew matrix has rank 2 or 0), rank 0 when it is on it;
  about the system centre of mass the block is zero (rank 0), and with Omega_b ordered first the block is
  the locked inertia H_Ob (rank 3);
- neither depends on the velocities, the momentum value or external forces (A is a function of q only);
  attaching the target adds its mass to M and its offset to r_G and changes nothing else.
So Table 4.1's "rank 3 / holonomic" and "rank 2 / nonholonomic" are reproduced, but for the reasons
above; the same "rank 2" is returned for a constraint that is integrable (test_thesis_criterion.py has
an example). The thesis's "rank 3 with external forces" cannot come out of eqs. 4.1-4.16 at the same
configuration. Use mechanical_connection.py (curvature) or frobenius.py to test integrability.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

METHODS = ("closed_form", "augmented_svd")


@dataclass(frozen=True)
class YhResult:
    """Y_h (m x m, units of A's first m columns over A A^T), its singular values, rank and rank threshold."""

    Yh: np.ndarray
    singular_values: np.ndarray
    rank: int
    threshold: float


def yh_augmented_svd(A: np.ndarray) -> np.ndarray:
    """Y_h exactly as eqs. 4.8-4.16 compute it (SVD of D, augmented square matrix, inverse)."""
    m, n = A.shape
    a_pinv = A.T @ np.linalg.inv(A @ A.T)                   # eq. 4.9
    d = np.eye(n) - a_pinv @ A                             # eq. 4.8
    u, _, _ = np.linalg.svd(d)                             # eq. 4.10, singular values decreasing
    p_perp = u[:, : n - m]                                 # eq. 4.14
    a_tilde = np.vstack((A, p_perp.T))                     # eq. 4.7 (P_perp transposed to make it square)
    return np.linalg.inv(a_tilde)[:m, :m]                  # eqs. 4.15-4.16


def yh_closed_form(A: np.ndarray) -> np.ndarray:
    """Y_h = A[:, :m]^T (A A^T)^-1 (equal to yh_augmented_svd, see the module docstring)."""
    m = A.shape[0]
    return np.linalg.solve(A @ A.T, A[:, :m]).T            # (A A^T) symmetric: (G^-1 A1)^T = A1^T G^-1


def thesis_criterion(A: np.ndarray, rank_rtol: float, method: str = "closed_form") -> YhResult:
    """Y_h of constraint matrix A and its numerical rank.

    Rank threshold: rank_rtol * ||A+||_2 = rank_rtol / sigma_min(A). Y_h is a block of A+, so this is the
    size its singular values have when they are not zero; the count does not depend on the units of A,
    and a Y_h that vanishes (rank 0) is not mistaken for round-off of a full-rank one.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    yh = yh_closed_form(A) if method == "closed_form" else yh_augmented_svd(A)
    scale = 1.0 / np.sqrt(np.linalg.eigvalsh(A @ A.T)[0])
    sv = np.linalg.svd(yh, compute_uv=False)
    threshold = rank_rtol * scale
    return YhResult(yh, sv, int(np.sum(sv > threshold)), float(threshold))


def block_gram(blocks: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """blockdiag(A_1 A_1^T, ..., A_k A_k^T), (k m, k m), for blocks (k, m, N); written into `out` if given.
    Its inverse holds every (A A^T)^-1 of the closed form, so one inversion serves all blocks (the monitor
    also stacks it with other matrices to invert)."""
    k, m, n = blocks.shape
    flat = blocks.reshape(k * m, n)
    return np.multiply(flat.dot(flat.T), _block_mask(k, m), out=out)


@lru_cache(maxsize=8)
def _ones(n: int) -> np.ndarray:
    ones = np.ones(n)
    ones.flags.writeable = False
    return ones


@lru_cache(maxsize=8)
def _block_mask(k: int, m: int) -> np.ndarray:
    mask = np.kron(np.eye(k), np.ones((m, m)))
    mask.flags.writeable = False
    return mask


def closed_form_from_gram_inverse(blocks: np.ndarray, gram_inverse: np.ndarray) -> tuple[np.ndarray, list]:
    """(Y_h, scale) for blocks (k, m, N) given gram_inverse = inverse of block_gram(blocks):
    Y_h (k, m, m) = A[:, :m]^T (A A^T)^-1 per block, and the rank scale, k floats ||(A A^T)^-1||_F^(1/2), which
    brackets ||A+||_2 = lambda_max((A A^T)^-1)^(1/2) within a factor m^(1/4) (see thesis_criteria_closed_form).

    gram_inverse = blockdiag(G_1 .. G_k) (the inverse of a block-diagonal matrix is block-diagonal; LU with
    partial pivoting, as numpy.linalg.inv and small_linear_algebra.inverse use, leaves exact zeros off the
    blocks), so [A_1[:, :m]^T ... A_k[:, :m]^T] times it is [Y_h,1 ... Y_h,k], one product for all blocks, and
    the squares of its row block i sum to ||G_i||_F^2."""
    k, m, n = blocks.shape
    yh = blocks.reshape(k * m, n)[:, :m].T.dot(gram_inverse).reshape(m, k, m).transpose(1, 0, 2)
    squares = gram_inverse * gram_inverse
    return yh, [math.sqrt(math.sqrt(x)) for x in squares.reshape(k, m * k * m).dot(_ones(m * k * m)).tolist()]


def thesis_criteria_closed_form(blocks: np.ndarray, rank_rtol: float) -> list[YhResult]:
    """thesis_criterion(A, rank_rtol, "closed_form") for each A in `blocks` (k, m, N), computed together.

    The monitor computes the linear and the angular rows of B this way every cycle (block_gram and
    closed_form_from_gram_inverse, with the inversion and the singular values batched with its other
    matrices). The rank threshold uses the Frobenius norm of (A A^T)^-1 for ||A+||^2 (within a factor sqrt(m)
    of it: irrelevant for a threshold set eight orders of magnitude away from both the zero and the non-zero
    singular values).
    """
    yh, scale = closed_form_from_gram_inverse(blocks, np.linalg.inv(block_gram(blocks)))
    sv = np.linalg.svd(yh, compute_uv=False)
    threshold = rank_rtol * np.array(scale)
    ranks = np.count_nonzero(sv > threshold[:, None], axis=1)
    return [YhResult(yh[k], sv[k], int(ranks[k]), float(threshold[k])) for k in range(len(blocks))]
