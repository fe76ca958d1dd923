"""Settling time of a tracking run: when every error has entered its band for good (the thesis's "steady state at
around N sec", seed 004 sec. 6.3 and 7.4). Used by the thesis studies and by the runtime's summary of a node-graph
run (space_robot_runtime/run_summary.py)."""
from __future__ import annotations

import numpy as np


def settling_time(t: np.ndarray, inside: np.ndarray) -> float | None:
    """First time (s, from t) after which `inside` (bool per sample) stays true; None if it is false at the end."""
    if not inside[-1]:
        return None
    outside = np.flatnonzero(~inside)
    return 0.0 if outside.size == 0 else float(t[min(outside[-1] + 1, len(t) - 1)])
