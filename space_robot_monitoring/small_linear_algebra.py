"""Inverse, singular values and symmetric eigenvalues of the monitor's small dense matrices (at most 24 x 24),
through LAPACK directly (scipy.linalg.lapack).

Why not numpy.linalg: each of its calls adds ~4 us of Python-level checks and error-state handling, more than
LAPACK's own work at these sizes; a monitor pass makes half a dozen such calls (the graph's time budget: a 1 kHz
control period). The
routines are the ones numpy.linalg uses (getrf/getri for inv, gesdd for svd, syev-type for eigvalsh), so the
results agree with numpy's to round-off (test_holonomy_linear_algebra.py).

LAPACK works on Fortran-ordered arrays; the transpose of a C-ordered array is one, so the inverse is computed
as that of a^T (transposed back) and the symmetric eigenvalues from a^T (the same matrix), without a copy. The
SVD takes the matrix as it is, as numpy does, so that the two agree bit for bit.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

# Largest s_max / s_min for which singular values are taken from a Gram matrix (error ~ ratio^2 eps < 1e-13).
GRAM_CONDITION_LIMIT = 30.0


def inverse(a: np.ndarray) -> np.ndarray:
    """a^-1 for a square matrix (LU with partial pivoting); numpy.linalg.LinAlgError when a is singular.

    The LU factors of a^T are computed in place of a copy of it (inv(a^T)^T = inv(a)), so the result is
    C-ordered like a."""
    lu, pivots, info = lapack.dgetrf(a.T)
    if info == 0:
        inv_t, info = lapack.dgetri(lu, pivots, overwrite_lu=1)
        if info == 0:
            return inv_t.T
    raise np.linalg.LinAlgError(f"singular matrix (LAPACK getrf/getri info {info})")


def singular_values(a: np.ndarray) -> np.ndarray:
    """Singular values of a (m x n), decreasing, min(m, n) of them (LAPACK gesdd, as numpy.linalg.svd with
    compute_uv=False); numpy.linalg.LinAlgError when LAPACK reports an error (no convergence, a NaN in a)."""
    _, values, _, info = lapack.dgesdd(a, compute_uv=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"SVD did not converge (LAPACK gesdd info {info})")
    return values


def symmetric_eigenvalues(a: np.ndarray) -> np.ndarray:
    """Eigenvalues of the symmetric matrix a, increasing (LAPACK syev on its lower triangle, as
    numpy.linalg.eigvalsh); numpy.linalg.LinAlgError when the iteration does not converge."""
    values, _, info = lapack.dsyev(a.T, compute_v=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"eigenvalues did not converge (LAPACK syev info {info})")
    return values


def singular_values_from_gram(a: np.ndarray, gram_values: np.ndarray) -> np.ndarray:
    """Singular values of a, decreasing, from gram_values: the min(m, n) largest eigenvalues (= singular values)
    of its Gram matrix a a^T or a^T a, decreasing, as s = sqrt(gram value).

    Squaring costs relative accuracy (s_max / s_min)^2 eps, so beyond a ratio GRAM_CONDITION_LIMIT (error below
    1e-13) they come from the SVD of a itself, whose small values (the ones that decide a rank) are accurate to
    eps s_max; so does a zero or negative round-off eigenvalue (checked first: no NaN, no RuntimeWarning)."""
    if gram_values[-1] > 0.0:
        values = np.sqrt(gram_values)
        if values[-1] * GRAM_CONDITION_LIMIT > values[0]:
            return values
    return singular_values(a)
