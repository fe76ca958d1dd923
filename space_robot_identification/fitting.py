"""Fitting free parameters to recorded signals, and the uncertainty of the estimates.

A problem gives the weighted residuals r(theta) (model minus data, each signal times its weight) and, when it
can (`has_jacobian`), their Jacobian dr/dtheta (`jacobian(theta)`), and optionally the cost itself
(`cost(theta)`, faster than the residuals). The cost is S(theta) = sum r^2, seed 003's eq. 24 with weights.
Methods (SciPy):
- nelder_mead: `scipy.optimize.minimize(method="Nelder-Mead")` on S within the bounds (seed 003 sec. 4). SciPy
  keeps the simplex inside the bounds by clipping its points onto them, so a simplex can collapse onto a bound
  face and stop there although the cost falls away from it (seen on seed 003's damping, stopped at b = 0 with a
  cost 30 times the optimum's). `restarts: R` starts it again from its result with a fresh simplex, up to R times
  while a restart lowers the cost by more than the stopping rule's fatol (Press et al., Numerical Recipes,
  sec. 10.5: "restart it at a point where it claims to have found a minimum"); max_evaluations counts them all;
- least_squares: `scipy.optimize.least_squares(method="trf")`, bounded, with the problem's Jacobian when it
  has one (2-point finite differences otherwise).
Both run in the scaled coordinates u of free_parameters.py.

Uncertainty at the optimum theta_hat (a Cramer-Rao style, i.e. linearised, covariance):
    s^2 = S(theta_hat) / (n - p),   C = s^2 (J^T J)^-1,   sigma_i = sqrt(C_ii),   rho_ij = C_ij / (sigma_i sigma_j),
with J the Jacobian at theta_hat (the problem's, or central differences in u), n residuals and p parameters;
valid for residuals that are independent with a common variance after weighting, and for an optimum off the
bounds (a parameter on a bound is named in `at_bounds`). The pseudo-inverse is used: a direction J does not
see (singular value below `RANK_TOLERANCE` of the largest) makes the parameters in it unidentifiable (sigma
None). Repeated fits from several start points give the spread of the estimates (multi_start).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader

from .free_parameters import ParameterSpace

METHODS = ("nelder_mead", "least_squares")
RANK_TOLERANCE = 1e-10          # singular values of J below this fraction of the largest: not identifiable
_BOUND_TOLERANCE = 1e-8         # in u: an estimate this close to a bound is "at the bound"


@dataclass(frozen=True)
class FitOptions:
    """Stopping rules. nelder_mead: simplex size xatol in u and spread of the costs fatol_relative times the
    start cost, and up to `restarts` restarts (module docstring); least_squares: xtol = ftol = gtol = tolerance;
    both: at most max_evaluations of the residuals.
    finite_difference_step: in u, for Jacobians the problem does not give."""

    nelder_mead_xatol: float = 1e-10
    nelder_mead_fatol_relative: float = 1e-15
    nelder_mead_max_evaluations: int = 20000
    nelder_mead_restarts: int = 0
    least_squares_tolerance: float = 1e-12
    least_squares_max_evaluations: int = 1000
    finite_difference_step: float = 1e-6


def read_fit_options(reader: ConfigReader) -> FitOptions:
    nm = reader.sub("nelder_mead", {})
    ls = reader.sub("least_squares", {})
    defaults = FitOptions()
    options = FitOptions(
        nelder_mead_xatol=nm.number("xatol", defaults.nelder_mead_xatol, exclusive_minimum=0.0),
        nelder_mead_fatol_relative=nm.number("fatol_relative", defaults.nelder_mead_fatol_relative, minimum=0.0),
        nelder_mead_max_evaluations=nm.integer("max_evaluations", defaults.nelder_mead_max_evaluations, minimum=1),
        nelder_mead_restarts=nm.integer("restarts", defaults.nelder_mead_restarts, minimum=0),
        least_squares_tolerance=ls.number("tolerance", defaults.least_squares_tolerance, minimum=2.3e-16),
        least_squares_max_evaluations=ls.integer("max_evaluations", defaults.least_squares_max_evaluations,
                                                 minimum=1),
        finite_difference_step=reader.number("finite_difference_step", defaults.finite_difference_step,
                                             exclusive_minimum=0.0, maximum=0.1),
    )
    nm.reject_unknown()
    ls.reject_unknown()
    reader.reject_unknown()
    return options


@dataclass
class Fit:
    """One fit from one start point. theta, sigma in the parameters' units (ParameterSpace order)."""

    method: str
    start: np.ndarray
    theta: np.ndarray
    cost_start: float
    cost: float
    success: bool
    message: str
    evaluations: int
    residual_count: int
    sigma: np.ndarray                   # NaN where not identifiable
    covariance: np.ndarray
    correlation: np.ndarray
    at_bounds: list = field(default_factory=list)
    jacobian_rank: int = 0


@dataclass
class MultiStartFit:
    """The fits from every start point; `best` has the lowest cost (the configured start on ties)."""

    fits: list
    best: Fit

    @property
    def spread(self) -> np.ndarray:
        """Sample standard deviation of the estimates over the fits that converged (NaN with fewer than 2)."""
        thetas = np.array([f.theta for f in self.fits if f.success])
        if len(thetas) < 2:
            return np.full(len(self.best.theta), np.nan)
        return thetas.std(axis=0, ddof=1)


def cost_of(residuals: np.ndarray) -> float:
    return float(residuals @ residuals)


def fit(problem, space: ParameterSpace, method: str, options: FitOptions, start: np.ndarray | None = None) -> Fit:
    """Fit `problem` (residuals(theta); has_jacobian, jacobian(theta)) from `start` (default: the configured
    one)."""
    from scipy import optimize

    start = space.start if start is None else np.asarray(start, float)
    u0 = space.to_unit(start)
    width = space.width

    def residuals_u(u):
        return problem.residuals(space.from_unit(u))

    r0 = residuals_u(u0)
    cost_start = cost_of(r0)
    if method == "nelder_mead":
        cost = getattr(problem, "cost", None)       # a problem may evaluate sum r^2 faster than r itself

        def cost_u(u):
            theta = space.from_unit(u)
            return cost(theta) if cost is not None else cost_of(problem.residuals(theta))
        fatol = options.nelder_mead_fatol_relative * cost_start
        u_hat, evaluations, best = u0, 0, cost_start
        for attempt in range(options.nelder_mead_restarts + 1):
            result = optimize.minimize(cost_u, u_hat, method="Nelder-Mead", bounds=[(0.0, 1.0)] * len(space),
                                       options={"xatol": options.nelder_mead_xatol, "fatol": fatol,
                                                "maxfev": options.nelder_mead_max_evaluations - evaluations,
                                                "adaptive": len(space) > 2})
            evaluations += int(result.nfev)
            improved = attempt == 0 or best - float(result.fun) > fatol
            if float(result.fun) <= best:
                u_hat, best = np.clip(result.x, 0.0, 1.0), float(result.fun)
            success, message = bool(result.success), str(result.message)
            if not result.success or not improved or evaluations >= options.nelder_mead_max_evaluations:
                break
        if options.nelder_mead_restarts:
            message += f" ({attempt + 1} runs)"
    elif method == "least_squares":
        jac = "2-point"
        if problem.has_jacobian:
            def jac(u):
                return problem.jacobian(space.from_unit(u)) * width
        tol = options.least_squares_tolerance
        result = optimize.least_squares(residuals_u, u0, jac=jac, bounds=(0.0, 1.0), method="trf", xtol=tol,
                                        ftol=tol, gtol=tol, max_nfev=options.least_squares_max_evaluations)
        u_hat, evaluations = result.x, int(result.nfev)
        success, message = bool(result.status > 0), str(result.message)
    else:
        raise ValueError(f"unknown method {method!r} (have {METHODS})")
    theta = space.from_unit(u_hat)
    r = problem.residuals(theta)
    jacobian = jacobian_at(problem, space, theta, options.finite_difference_step)
    sigma, covariance, correlation, rank = linearised_covariance(jacobian, r)
    at_bounds = [name for name, u in zip(space.names, u_hat) if u < _BOUND_TOLERANCE or u > 1.0 - _BOUND_TOLERANCE]
    return Fit(method, start, theta, cost_start, cost_of(r), success, message, evaluations, len(r), sigma,
               covariance, correlation, at_bounds, rank)


def jacobian_at(problem, space: ParameterSpace, theta: np.ndarray, step: float) -> np.ndarray:
    """dr/dtheta at theta: the problem's, or central differences with `step` in u (one-sided at a bound)."""
    if problem.has_jacobian:
        return np.asarray(problem.jacobian(theta), float)
    u = space.to_unit(theta)
    columns = []
    for i in range(len(space)):
        up, down = u.copy(), u.copy()
        up[i] = min(u[i] + step, 1.0)
        down[i] = max(u[i] - step, 0.0)
        difference = problem.residuals(space.from_unit(up)) - problem.residuals(space.from_unit(down))
        columns.append(difference / ((up[i] - down[i]) * space.width[i]))
    return np.column_stack(columns)


def linearised_covariance(jacobian: np.ndarray, residuals: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(sigma, C, rho, rank of J) of the module docstring; sigma NaN and rho NaN for unidentifiable parameters."""
    n, p = jacobian.shape
    _, singular, vt = np.linalg.svd(jacobian, full_matrices=False)
    keep = singular > RANK_TOLERANCE * singular[0] if singular[0] > 0 else np.zeros(p, bool)
    rank = int(keep.sum())
    s2 = cost_of(residuals) / (n - p) if n > p else np.nan
    inverse = (vt[keep].T / singular[keep] ** 2) @ vt[keep]       # pseudo-inverse of J^T J
    covariance = s2 * inverse
    variance = np.diag(covariance).copy()
    if rank < p:        # a parameter with a share in an unseen direction has no finite variance
        unseen = vt[~keep]
        variance[np.abs(unseen).max(axis=0) > 1e-8] = np.nan
    sigma = np.sqrt(np.maximum(variance, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = covariance / np.outer(sigma, sigma)
    correlation[~np.isfinite(correlation)] = np.nan
    np.fill_diagonal(correlation, np.where(np.isfinite(sigma) & (sigma > 0), 1.0, np.nan))
    return sigma, covariance, correlation, rank


def start_points(space: ParameterSpace, count: int, seed: int, spread: float) -> list[np.ndarray]:
    """The configured start, then count - 1 points u0 + spread (U - 1/2) per coordinate (U uniform in [0, 1),
    numpy's default_rng(seed)), clipped to the bounds."""
    rng = np.random.default_rng(seed)
    u0 = space.to_unit(space.start)
    points = [space.start]
    for _ in range(count - 1):
        u = np.clip(u0 + spread * (rng.random(len(space)) - 0.5), 0.0, 1.0)
        points.append(space.from_unit(u))
    return points


def fit_from_starts(problem, space: ParameterSpace, method: str, options: FitOptions, starts: list,
                    after_each: Callable[[], None] | None = None) -> MultiStartFit:
    fits = []
    for start in starts:
        fits.append(fit(problem, space, method, options, start))
        if after_each is not None:
            after_each()
    best = min(fits, key=lambda f: f.cost)      # min keeps the first of equal costs: the configured start
    return MultiStartFit(fits, best)
