"""Filter consistency: normalised estimation error squared (NEES) and its chi-square acceptance interval.

For an error e of dimension n with claimed covariance P, NEES = e^T P^-1 e. A consistent filter's NEES is
chi-square with n degrees of freedom; averaged over M independent runs it is chi-square(n M) / M (Bar-Shalom, Li
and Kirubarajan, Estimation with Applications to Tracking and Navigation, 2001, sec. 5.4.2). The same holds for the
normalised innovation squared (NIS) with the innovation and its covariance.
"""
from __future__ import annotations

import numpy as np


def nees(error: np.ndarray, covariance: np.ndarray) -> float:
    """e^T P^-1 e (solved, not inverted)."""
    error = np.asarray(error, float)
    return float(error @ np.linalg.solve(covariance, error))


def chi_square_interval(dof: int, runs: int, probability: float = 0.95) -> tuple[float, float]:
    """The two-sided `probability` interval of the average of `runs` independent chi-square(`dof`) values."""
    from scipy.stats import chi2

    tail = (1.0 - probability) / 2.0
    total = dof * runs
    return chi2.ppf(tail, total) / runs, chi2.ppf(1.0 - tail, total) / runs
