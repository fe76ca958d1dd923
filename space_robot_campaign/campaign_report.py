"""The report of a campaign: report.json (strict JSON), report.md and the PNGs, from the result table.

Contents: runs planned / recorded / missing, outcomes, success rate with its confidence interval (overall
and per value of each grid or list parameter), statistics and percentiles of every figure, the worst runs
with the space-robot-sim command that reproduces each alone, and the plots (report_plots.py). Everything
but the `execution` section is a function of the table's rows, so the same campaign gives the same report.
"""
from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

from space_robot_runtime.run_summary import to_json

from . import campaign_statistics as stats
from .campaign_config import Campaign
from .run_plan import reproduce_command

REPORT_JSON = "report.json"
REPORT_MD = "report.md"


def build_report(campaign: Campaign, rows: dict, requested: int, execution: dict | None = None) -> dict:
    """The report as a dict; `rows`: the table as columns; `requested`: how many runs were asked for."""
    success = stats.successes(rows, campaign)
    n, k = len(success), sum(success)
    confidence = campaign.report.confidence
    report = {
        "campaign": campaign.name, "description": campaign.description, "source": campaign.source,
        "scenario": campaign.scenario_argument,
        "runs": {"in_campaign": campaign.total_runs, "requested": requested, "recorded": n,
                 "missing": max(0, requested - sum(1 for r in rows["run"] if r < requested))},
        "outcomes": stats.outcome_counts(rows),
        "success_criterion": "every requirement of the scenario met" if campaign.success is None else
        "ran to the end and " + ", ".join(f"{f} <= {m:g}" for f, m in campaign.success.items()),
        "success_rate": stats.success_rate(k, n, confidence),
        "success_by_parameter": _success_by_parameter(campaign, rows, success, confidence),
        "figures": {f: stats.figure_statistics(rows[f], campaign.report.percentiles) for f in campaign.figures},
        "worst_runs": [_worst(campaign, rows, success, i)
                       for i in stats.worst_runs(rows, success, campaign.worst_by, campaign.report.worst_runs)],
        "worst_by": campaign.worst_by,
        "percentile_method": "numpy.percentile, linear interpolation (Hyndman-Fan type 7)",
    }
    if execution is not None:
        report["execution"] = execution
    return report


def _success_by_parameter(campaign: Campaign, rows: dict, success: list[bool], confidence: float) -> dict:
    out = {}
    for p in campaign.grid_parameters + campaign.list_parameters:
        if p.kind == "vector":
            continue
        column = rows[p.name]
        entries = []
        for value in dict.fromkeys(column):
            picked = [s for s, v in zip(success, column) if v == value]
            entries.append({"value": value, **stats.success_rate(sum(picked), len(picked), confidence)})
        out[p.name] = sorted(entries, key=lambda e: (isinstance(e["value"], str), e["value"]))
    return out


def _worst(campaign: Campaign, rows: dict, success: list[bool], i: int) -> dict:
    run = rows["run"][i]
    overrides = shlex.split(rows["overrides"][i] or "")
    error = rows["error"][i]
    return {"run": run, "outcome": rows["outcome"][i], "success": success[i],
            campaign.worst_by: rows[campaign.worst_by][i],
            "error": error.strip().splitlines()[0] if error else None,
            "command": reproduce_command(campaign, overrides, f"out/{campaign.name}/run-{run:06d}")}


def write_report(report: dict, directory: Path, campaign: Campaign, rows: dict, plots: bool = True) -> list[Path]:
    """report.json, report.md and (with `plots`) the PNGs into `directory`; returns the paths written."""
    directory = Path(directory)
    if plots:
        from .report_plots import plot_report

        plots = plot_report(campaign, rows, stats.successes(rows, campaign), directory)
    else:
        plots = []
    report = {**report, "plots": [p.name for p in plots]}
    (directory / REPORT_JSON).write_text(to_json(report))
    (directory / REPORT_MD).write_text(markdown(report, campaign))
    return [directory / REPORT_JSON, directory / REPORT_MD, *plots]


def _number(value, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def rate_text(rate: dict) -> str:
    if rate["runs"] == 0:
        return "no runs"
    return (f"{rate['successes']}/{rate['runs']} = {100 * rate['rate']:.1f} % "
            f"({100 * rate['confidence']:g} % interval {100 * rate['low']:.1f}-{100 * rate['high']:.1f} %)")


def markdown(report: dict, campaign: Campaign) -> str:
    runs = report["runs"]
    lines = [f"# Campaign {report['campaign']}", ""]
    if report["description"]:
        lines += [report["description"], ""]
    lines += [f"Scenario `{report['scenario']}`; {runs['recorded']} runs recorded of {runs['requested']} requested "
              f"({runs['in_campaign']} in the campaign)" + (f", {runs['missing']} missing (interrupted: run again "
                                                           "with --resume)" if runs["missing"] else "") + ".", ""]
    lines += ["## Success", "", f"Criterion: {report['success_criterion']}.", "",
              f"Success rate: **{rate_text(report['success_rate'])}**, {report['success_rate']['method']}.", "",
              "Outcomes: " + ", ".join(f"{k} {v}" for k, v in report["outcomes"].items()) + ".", ""]
    for name, entries in report["success_by_parameter"].items():
        unit = campaign.parameter(name).unit
        lines += [f"By {name}" + (f" ({unit})" if unit else "") + ":", "", "| value | success rate |", "|---|---|"]
        lines += [f"| {_number(e['value'])} | {rate_text(e)} |" for e in entries]
        lines.append("")
    percentiles = list(campaign.report.percentiles)
    lines += ["## Figures", "", f"Percentiles: {report['percentile_method']}.", "",
              "| figure | runs | missing | min | " + " | ".join(f"p{p:g}" for p in percentiles) + " | max | mean |",
              "|---" * (6 + len(percentiles)) + "|"]
    for figure, s in report["figures"].items():
        cells = [figure, str(s["count"]), str(s["missing"]), _number(s["min"])]
        cells += [_number(v) for v in s["percentiles"].values()] + [_number(s["max"]), _number(s["mean"])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"## Worst runs (by {report['worst_by']}, unsuccessful first)", ""]
    for w in report["worst_runs"]:
        lines += [f"- run {w['run']}: {w['outcome']}, {report['worst_by']} = {_number(w[report['worst_by']])}"
                  + (f"; {w['error']}" if w["error"] else ""), "", f"      {w['command']}", ""]
    if report.get("plots"):
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in report["plots"]] + [""]
    if "execution" in report:
        lines += ["## Execution", "", "```", json.dumps(report["execution"], indent=2, sort_keys=True), "```", ""]
    return "\n".join(lines)
