"""The benches' timing loop: a call repeated in runs, each run's mean time per call, best and median of the runs
(the best is the least disturbed run on a shared machine; the median says how much the machine disturbed)."""
from __future__ import annotations

import statistics
import time


def timed(fn, calls: int, repeats: int, setup=None) -> tuple[float, float]:
    """(best, median) over `repeats` runs of the mean time per call (us) in a run of `calls` calls of fn();
    setup() (untimed) before each run."""
    runs = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return min(runs), statistics.median(runs)
