"""Statistics of a campaign's rows: success, its rate with a confidence interval, percentiles, worst runs.

Rows are the result table as columns (`table.to_pydict()`: column -> list).

- Success of a run: with `success: requirements` (the default) its outcome is `met` (every requirement of
  the scenario met); with `success: {figure: maximum}` it ran to the end (outcome met, not_met or
  not_evaluated) and every listed figure is a number <= its maximum. Every recorded run counts in the rate:
  a run that diverged or failed is not a success.
- Success rate: k successes in n runs, with the Clopper-Pearson ("exact") two-sided interval at the
  campaign's confidence (scipy.stats.binomtest(k, n).proportion_ci(method="exact")): it never covers less
  than the stated confidence, where Wilson's can (slightly) for small n or rates near 0 or 1, which is
  where a robustness campaign lives.
- Percentiles: numpy.percentile with linear interpolation between order statistics (Hyndman-Fan type 7,
  numpy's default) over the runs that have the figure; `missing` counts the others.
- Worst runs: the unsuccessful ones first, then by `worst_by` from the largest; within each, runs without the
  figure (failed runs) first, then by run index.
"""
from __future__ import annotations

import math

import numpy as np

from .campaign_config import Campaign

COMPLETED = ("met", "not_met", "not_evaluated")
CI_METHOD = "Clopper-Pearson (exact binomial), two-sided"


def is_success(campaign: Campaign, outcome: str, figures: dict) -> bool:
    """Whether a run with this outcome and these figures (figure -> value or None) is a success."""
    if campaign.success is None:
        return outcome == "met"
    return outcome in COMPLETED and all(
        figures.get(f) is not None and math.isfinite(figures[f]) and figures[f] <= maximum
        for f, maximum in campaign.success.items())


def successes(rows: dict, campaign: Campaign) -> list[bool]:
    """Per row of the table (as columns), whether the run is a success (see the module docstring)."""
    return [is_success(campaign, outcome, {f: rows[f][i] for f in campaign.figures})
            for i, outcome in enumerate(rows["outcome"])]


def success_rate(k: int, n: int, confidence: float) -> dict:
    """{successes, runs, rate, low, high, confidence, method}; rate and bounds None for n = 0."""
    if n == 0:
        return {"successes": 0, "runs": 0, "rate": None, "low": None, "high": None, "confidence": confidence,
                "method": CI_METHOD}
    from scipy.stats import binomtest

    interval = binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    return {"successes": k, "runs": n, "rate": k / n, "low": float(interval.low), "high": float(interval.high),
            "confidence": confidence, "method": CI_METHOD}


def figure_statistics(values, percentiles) -> dict:
    """{count, missing, min, max, mean, std, percentiles: {p: value}} of the finite values (None elsewhere)."""
    data = np.array([v for v in values if v is not None and math.isfinite(v)], float)
    out = {"count": int(len(data)), "missing": int(len(values) - len(data))}
    if not len(data):
        return {**out, "min": None, "max": None, "mean": None, "std": None,
                "percentiles": {_key(p): None for p in percentiles}}
    return {**out, "min": float(data.min()), "max": float(data.max()), "mean": float(data.mean()),
            "std": float(data.std(ddof=1)) if len(data) > 1 else 0.0,
            "percentiles": {_key(p): float(np.percentile(data, p)) for p in percentiles}}


def _key(p: float) -> str:
    return f"p{p:g}"


def outcome_counts(rows: dict) -> dict:
    counts: dict = {}
    for outcome in rows["outcome"]:
        counts[outcome] = counts.get(outcome, 0) + 1
    return dict(sorted(counts.items()))


def worst_runs(rows: dict, success: list[bool], by: str, count: int) -> list[int]:
    """Row positions of the `count` worst runs (see the module docstring)."""
    values = rows[by]

    def rank(i: int):
        value = values[i]
        missing = value is None or not math.isfinite(value)
        return (success[i], not missing, -(value if not missing else 0.0), rows["run"][i])

    return sorted(range(len(success)), key=rank)[:count]
