"""Filter consistency: normalised estimation error squared (NEES) and its chi-square acceptance interval.

For an error e of dimension n with claimed covariance P, NEES = e^T P^-1 e. A consistent filter's NEES is
chi-square with n degrees of freedom; averaged over M independent runs it is chi-square(n M) / M (Bar-Shalom, Li
and Kirubarajan, Estimation with Applications to Tracking and Navigation, 2001, sec. 5.4.2). The same holds for the
normalised innovation squared (NIS) with the innovation and its covariance.
"""
from __future__ import annotations

import numpy as np


def nees(error: np.ndarray, covariance: np.ndarray) -> float | None:
    """e^T P^-1 e (by a Cholesky factor, not an inverse); None when P is not positive definite (a filter that claims
    an exact component, e.g. one started on a noise-free measurement: its NEES is undefined)."""
    error = np.asarray(error, float)
    try:
        factor = np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:
        return None
    whitened = np.linalg.solve(factor, error)
    return float(whitened @ whitened)


def chi_square_interval(dof: int, runs: int, probability: float = 0.95) -> tuple[float, float]:
    """The two-sided `probability` interval of the average of `runs` independent chi-square(`dof`) values."""
    from scipy.stats import chi2

    tail = (1.0 - probability) / 2.0
    total = dof * runs
    return chi2.ppf(tail, total) / runs, chi2.ppf(1.0 - tail, total) / runs
