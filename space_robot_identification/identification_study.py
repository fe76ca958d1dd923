"""Running an identification over datasets and summing it up (the content of summary.json).

Each dataset (a case of synthetic data, noise-free or with one noise seed, or the user's recording) is fitted by
each problem (the main one and the cross-check) with each method, from every start point (fitting.py). A record
per (dataset, problem, method) keeps the best fit's estimates with their Cramer-Rao sigma and multi-start spread,
the correlation matrix, the cost at the start and at the optimum, and, where the truth is known, the errors.
The table sums the records per (problem, case, method) over the noise seeds; the headline figures are the
configured metrics of the main case, main problem and main method (mean over the noise seeds).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from . import body_inertia
from .fitting import MultiStartFit, fit_from_starts, start_points
from .identification_config import IdentificationConfig
from .recorded_signals import RecordedSignals

SIGMA_BOUND = 3.0          # an estimate within this many Cramer-Rao sigmas of the truth counts as "within"


@dataclass
class Dataset:
    case: str
    noise_seed: int | None          # None: noise-free (or the user's data)
    signals: RecordedSignals
    truth: dict | None = None       # parameter name -> value, every parameter of the problem; None: unknown


@dataclass
class FittedProblem:
    """What the plots need of one fit: the bound problem and the parameters at the start and the optimum."""

    case: str
    noise_seed: int | None
    role: str
    method: str
    problem: object
    start: np.ndarray
    estimate: np.ndarray


def _float(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


@dataclass
class Study:
    config: IdentificationConfig
    records: list = field(default_factory=list)
    fitted: list = field(default_factory=list)       # FittedProblem of one dataset per case (fit_dataset)

    def roles(self) -> list[tuple[str, object]]:
        roles = [("problem", self.config.problem)]
        if self.config.cross_check is not None:
            roles.append(("cross_check", self.config.cross_check))
        return roles

    def start_count(self, noise_seed: int | None) -> int:
        """Start points per fit of a dataset (multi_start.datasets: noisy ones may get the configured start only)."""
        config = self.config
        if noise_seed is not None and config.multi_start_datasets == "noise_free":
            return 1
        return config.multi_start_count

    def fits_per_dataset(self, noise_seed: int | None = None) -> int:
        return len(self.roles()) * len(self.config.methods) * self.start_count(noise_seed)

    def fit_dataset(self, dataset: Dataset, after_each: Callable[[], None] | None = None) -> None:
        config = self.config
        starts = start_points(config.space, self.start_count(dataset.noise_seed), config.multi_start_seed,
                              config.multi_start_spread)
        shown = [f for f in self.fitted if f.case == dataset.case]
        plot = not shown or (shown[0].noise_seed is None and dataset.noise_seed is not None)
        if plot:        # the first noisy dataset of a case, else its noise-free one: fit against data as measured
            self.fitted = [f for f in self.fitted if f.case != dataset.case]
        for role, spec in self.roles():
            problem = spec.bind(dataset.signals, config.space, *config.window)
            for method in config.methods:
                result = fit_from_starts(problem, config.space, method, config.fit_options, starts, after_each)
                self.records.append(self._record(dataset, role, spec, method, result))
                if plot:
                    self.fitted.append(FittedProblem(dataset.case, dataset.noise_seed, role, method, problem,
                                                     config.space.start, result.best.theta))

    def _record(self, dataset: Dataset, role: str, spec, method: str, result: MultiStartFit) -> dict:
        space, best = self.config.space, result.best
        spread = result.spread
        truth = dataset.truth
        estimates = {}
        for i, p in enumerate(space.parameters):
            value, sigma = float(best.theta[i]), _float(best.sigma[i])
            entry = {"value": value, "unit": p.unit, "sigma": sigma, "multi_start_spread": _float(spread[i]),
                     "start": p.start, "lower": p.lower, "upper": p.upper}
            if truth is not None:
                true = float(truth[p.name])
                entry.update(truth=true, error=value - true,
                             relative_error=abs(value - true) / abs(true) if true != 0 else None,
                             within_3_sigma=None if sigma is None else bool(abs(value - true) <= SIGMA_BOUND * sigma))
            estimates[p.name] = entry
        full = {name: known.value for name, known in spec.known_parameters().items()}
        full.update(zip(space.names, (float(x) for x in best.theta)))
        return {
            "case": dataset.case, "noise_seed": dataset.noise_seed, "problem": role, "kind": spec.kind,
            "method": method, "estimates": estimates,
            "correlation": {"parameters": list(space.names),
                            "matrix": [[_float(x) for x in row] for row in best.correlation]},
            "cost_start": best.cost_start, "cost": best.cost, "residual_count": best.residual_count,
            "evaluations": best.evaluations, "success": best.success, "message": best.message,
            "at_bounds": best.at_bounds, "jacobian_rank": best.jacobian_rank,
            "starts": [{"start": [float(x) for x in f.start], "estimate": [float(x) for x in f.theta],
                        "cost": f.cost, "success": f.success} for f in result.fits],
            "metrics": self._metrics(full, truth),
            **self._body_checks(full),
        }

    def _metrics(self, full: dict, truth: dict | None) -> dict:
        out = {}
        for h in self.config.headline:
            out[h.key] = None if truth is None else metric_value(h.metric, h.target, full, truth)
        return out

    def _body_checks(self, full: dict) -> dict:
        bodies = sorted({name.rsplit(".", 1)[0] for name in self.config.space.names
                         if name.rsplit(".", 1)[-1] in body_inertia.PARAMETERS})
        if not bodies:
            return {}
        return {"physically_consistent": {b: body_inertia.physically_consistent(_body_theta(b, full))
                                          for b in bodies}}

    def table(self) -> list[dict]:
        """Per (problem, case, method): the noise-free figures and the mean and worst over the noise seeds."""
        rows = []
        keys = []
        for r in self.records:
            key = (r["problem"], r["case"], r["method"])
            if key not in keys:
                keys.append(key)
        for role, case, method in keys:
            group = [r for r in self.records if (r["problem"], r["case"], r["method"]) == (role, case, method)]
            clean = [r for r in group if r["noise_seed"] is None]
            noisy = [r for r in group if r["noise_seed"] is not None]
            row = {"problem": role, "case": case, "method": method, "noise_seeds": len(noisy),
                   "noise_free": _figures(clean[0]) if clean else None,
                   "noisy_mean": _mean_figures(noisy) if noisy else None,
                   "noisy_worst": _worst_figures(noisy) if noisy else None}
            if noisy and noisy[0]["estimates"] and "within_3_sigma" in next(iter(noisy[0]["estimates"].values())):
                flags = [e["within_3_sigma"] for r in noisy for e in r["estimates"].values()
                         if e.get("within_3_sigma") is not None]
                row["fraction_within_3_sigma"] = sum(flags) / len(flags) if flags else None
            rows.append(row)
        return rows

    def headline(self) -> dict:
        config = self.config
        main_case = config.synthetic.main_case.name if config.synthetic is not None else None
        group = [r for r in self.records if r["problem"] == "problem" and r["method"] == config.methods[0]
                 and (main_case is None or r["case"] == main_case)]
        noisy = [r for r in group if r["noise_seed"] is not None]
        chosen = noisy or group
        out = {}
        for h in config.headline:
            values = [r["metrics"][h.key] for r in chosen if r["metrics"][h.key] is not None]
            out[h.key] = float(np.mean(values)) if values and len(values) == len(chosen) else None
        return out


def metric_value(metric: str, target: str, estimate: dict, truth: dict) -> float | None:
    if metric == "relative_error":
        true = truth[target]
        return abs(estimate[target] - true) / abs(true) if true != 0 else None
    theta_hat, theta = _body_theta(target, estimate), _body_theta(target, truth)
    if metric == "inertia_relative_error":
        return body_inertia.inertia_relative_error(theta_hat, theta)
    return body_inertia.com_error(theta_hat, theta)


def _body_theta(body: str, values: dict) -> np.ndarray:
    return np.array([values[f"{body}.{name}"] for name in body_inertia.PARAMETERS])


def _figures(record: dict) -> dict:
    return {"metrics": record["metrics"],
            "relative_error": {n: e.get("relative_error") for n, e in record["estimates"].items()},
            "sigma": {n: e["sigma"] for n, e in record["estimates"].items()},
            "cost": record["cost"], "success": record["success"]}


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _max(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.max(values)) if values else None


def _mean_figures(records: list) -> dict:
    names = list(records[0]["estimates"])
    return {"metrics": {k: _mean([r["metrics"][k] for r in records]) for k in records[0]["metrics"]},
            "relative_error": {n: _mean([r["estimates"][n].get("relative_error") for r in records]) for n in names},
            "sigma": {n: _mean([r["estimates"][n]["sigma"] for r in records]) for n in names},
            "estimate": {n: _mean([r["estimates"][n]["value"] for r in records]) for n in names},
            "estimate_std": {n: float(np.std([r["estimates"][n]["value"] for r in records], ddof=1))
                             if len(records) > 1 else None for n in names},
            "all_converged": all(r["success"] for r in records)}


def _worst_figures(records: list) -> dict:
    names = list(records[0]["estimates"])
    return {"metrics": {k: _max([r["metrics"][k] for r in records]) for k in records[0]["metrics"]},
            "relative_error": {n: _max([r["estimates"][n].get("relative_error") for r in records]) for n in names}}
