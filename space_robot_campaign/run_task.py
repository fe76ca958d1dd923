"""One run of a campaign, as a worker executes it: scenario + overrides -> one row of the result table.

`run_one` never raises for anything a run can do: bad input (e.g. a drawn inertia that is not physical), a
diverging simulation and an internal error each give a row with its outcome and error text. Only an
interruption of the worker itself (KeyboardInterrupt) gives the outcome `interrupted`, which the campaign
never records (the run is missing, and --resume runs it).

Outcomes: met (the scenario's requirements all met), not_met (one not met), not_evaluated (none failed but
some could not be evaluated, or the scenario states none), diverged, bad_input, error (a bug, or a worker
that died), interrupted.
"""
from __future__ import annotations

import os
import socket
import time
import traceback

from .run_plan import RunSpec

OUTCOMES = ("met", "not_met", "not_evaluated", "diverged", "bad_input", "error")
INTERRUPTED = "interrupted"
_ERROR_TEXT = 4000          # characters of an error text kept in the table (the end of a traceback)


class NeverStop:
    """The `stop` of a run inside a campaign: the campaign, not the run, handles signals."""

    requested = False
    name = None


def figure_value(summary: dict, path: str) -> float | None:
    """The number at dotted `path` in a run summary; None where it is absent, null or not a number."""
    value = summary
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def empty_row(spec: RunSpec) -> dict:
    return {"run": spec.index, "seed": spec.seed, "outcome": None, "complete": False, "requirements_met": None,
            "simulated_time_s": 0.0, "wall_time_s": 0.0, "error": None, "overrides": list(spec.overrides),
            "host": f"{socket.gethostname()}:{os.getpid()}", "values": dict(spec.values),
            "figures": dict.fromkeys(spec.figures)}


def failed_row(spec: RunSpec, outcome: str, error: str) -> dict:
    """The row of a run that produced nothing (e.g. its worker died)."""
    row = empty_row(spec)
    row.update(outcome=outcome, error=error[-_ERROR_TEXT:])
    return row


def run_one(spec: RunSpec, stop=None) -> dict:
    """Run `spec` in this process and return its row (see result_table.py for the columns). `stop` (an object
    with `requested` and `name`) is polled between steps: a run stopped by it is `interrupted`."""
    from space_robot_dynamics.errors import SpaceRobotError
    from space_robot_runtime.simulation_run import SimulationRun
    from space_robot_scenario import load_scenario, parse_overrides
    from space_robot_scenario.overrides import blamed

    start = time.perf_counter()
    row = empty_row(spec)
    try:
        scenario = load_scenario(spec.scenario, parse_overrides(spec.overrides))
        with blamed(list(scenario.overrides)):     # e.g. an initial_state entry refused: name the --set
            run = SimulationRun(scenario)
        result = run.run(out_dir=spec.bag_dir, plots=spec.bag_dir is not None, progress=False, overwrite=True,
                         stop=stop or NeverStop())
    except SpaceRobotError as exc:
        row.update(outcome="bad_input", error=str(exc)[-_ERROR_TEXT:])
    except KeyboardInterrupt:
        row.update(outcome=INTERRUPTED, error="the worker was interrupted")
    except Exception as exc:  # noqa: BLE001 - a bug in a run is that run's row, never the campaign's end
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        row.update(outcome="error", error=f"internal error: {type(exc).__name__}: {exc}\n{text}"[-_ERROR_TEXT:])
    else:
        summary, status = result.summary, result.status
        row["figures"] = {path: figure_value(summary, path) for path in spec.figures}
        row["complete"] = bool(summary.get("complete", False))
        row["requirements_met"] = summary.get("requirements_met")
        row["simulated_time_s"] = float(status.simulated_time)
        if status.internal_error:
            row.update(outcome="error", error=f"internal error: {status.internal_error}\n{status.traceback}"
                       [-_ERROR_TEXT:])
        elif not status.complete and status.stopped_by not in ("diverged", ""):
            row.update(outcome=INTERRUPTED, error=status.reason)
        elif status.stopped_by == "diverged":
            row.update(outcome="diverged", error=status.reason)
        else:
            met = row["requirements_met"]
            row["outcome"] = "met" if met is True else "not_met" if met is False else "not_evaluated"
    row["wall_time_s"] = time.perf_counter() - start
    return row
