"""One rule for every requirement a run or a study checks (README "Requirements").

- A requirement is met (true), not met (false) or not evaluated (null, with the reason).
- A time limit ("settled within 40 s", "detumbled within 60 s of the grasp") that was not reached is judged only
  if the run lasted until the limit's end: a shorter run cannot tell, so the requirement is not evaluated (the
  reason says how long to run), never failed.
- `requirements_met` of the run: false if any requirement is not met, else null if any is not evaluated, else
  true. The command line exits with status 1 only when it is false.
"""
from __future__ import annotations

# s of slack when comparing the run's end with a limit's end: both are sums of physics steps
END_SLACK = 1e-9


def overall(verdicts) -> bool | None:
    """requirements_met from the requirements' verdicts (true, false or None each)."""
    verdicts = list(verdicts)
    return False if False in verdicts else None if None in verdicts else True


def unreached_time_limit(limit: float, origin: float, run_end: float, what: str) -> tuple[bool | None, str | None]:
    """(met, not_evaluated_because) of a time limit (s) counted from `origin` (s of simulated time) that the
    run never reached (`what`: "settled", "detumbled"): false if the run lasted until origin + limit, else
    not evaluated."""
    deadline = origin + limit
    if run_end >= deadline - END_SLACK:
        return False, None
    return None, (f"not {what} when the run ended at {run_end:.3f} s, before the limit's end at {deadline:.3f} s "
                  f"({origin:.3f} s + {limit:.4g} s): run at least that long to judge it")
