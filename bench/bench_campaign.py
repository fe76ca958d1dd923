"""Campaign throughput on Ray against the number of workers, and the overhead per run against the same runs
alone, as ratios measured in the same run:

  alone        run_task.run_one of each run in this process, one after another (load the scenario, build the
               model and the graph, run it, summarize: what a worker does for one run, without Ray);
  Ray, 1       the same runs as Ray tasks on a local Ray with 1 worker (the executor's loop: 2 runs in flight);
  Ray, 2       the same on a local Ray with 2 workers;
  2 processes  the same runs split over two plain worker processes (concurrent.futures, no Ray): how much
               parallelism the machine offers right now. On a machine shared with other work, 2 workers cannot
               beat it; Ray's 2-worker throughput is also given as a fraction of it.

`repeats` rounds, each of the three in turn (so a machine whose load changes slows all three alike): the
`runs` first runs of the campaign alone, then on a freshly started Ray with 1 worker, then with 2, each Ray
warmed up by one short run per worker first (a worker process imports Pinocchio and the runtime on its first
run, ~1-2 s) and timed from the first submission to the last result; Ray's start-up and the warm-up are
reported apart. Best of the rounds for each (the least disturbed one on a shared machine; the medians are
printed too), and the load average of the machine before and after. The rows of the three are checked to be
identical.

Goals: 2 workers >= 1.8x the throughput of 1 on 2 cores; < 5 % overhead per run for runs of a
few
seconds. Exit status 1 when a goal is missed or the rows differ.

    python bench/bench_campaign.py [--campaign pregrasp_robustness] [--runs 10] [--repeats 3]
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from space_robot_campaign.campaign_config import load_campaign
from space_robot_campaign.executors import RayExecutor
from space_robot_campaign.run_plan import plan
from space_robot_campaign.run_task import run_one

SPEED_UP_GOAL, OVERHEAD_GOAL = 1.8, 0.05
SAME = ("figures", "outcome", "requirements_met", "simulated_time_s", "overrides", "values")


def on_executor(executor, specs) -> tuple[float, list]:
    """(wall time s, rows in run order) of `specs` on `executor`, fed as the campaign feeds it."""
    queue, rows = deque(specs), []
    start = time.perf_counter()
    while queue or executor.busy:
        while queue and executor.busy < executor.capacity:
            executor.submit(queue.popleft())
        rows += executor.finished(0.05)
    elapsed = time.perf_counter() - start
    return elapsed, [row for _spec, row in sorted(rows, key=lambda pair: pair[0].index)]


def alone(specs) -> tuple[float, list]:
    start = time.perf_counter()
    rows = [run_one(spec) for spec in specs]
    return time.perf_counter() - start, rows


def on_processes(pool, specs) -> tuple[float, list]:
    start = time.perf_counter()
    rows = list(pool.map(run_one, specs, chunksize=1))
    return time.perf_counter() - start, rows


def same_rows(a: list, b: list) -> bool:
    return [{k: r[k] for k in SAME} for r in a] == [{k: r[k] for k in SAME} for r in b]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaign", default="pregrasp_robustness")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    campaign = load_campaign(args.campaign)
    specs = plan(campaign, args.runs)
    warm_up = [replace(s, overrides=(*s.overrides, "duration=0.05")) for s in specs[:2]]
    print(f"bench_campaign: {len(specs)} runs of {campaign.name} ({campaign.scenario_argument}), {args.repeats} "
          "rounds each, best (median)")
    alone(warm_up[:1])                                          # this process's own imports and first build
    times: dict = {"alone": [], 1: [], 2: [], "processes": []}
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    list(pool.map(run_one, warm_up, chunksize=1))               # each process's imports and first build
    start_up: dict = {1: [], 2: []}
    reference = None
    load_before = os.getloadavg()[0]
    for _round in range(args.repeats):
        elapsed, rows = alone(specs)
        times["alone"].append(elapsed)
        reference = reference or rows
        if not same_rows(rows, reference):
            print("  ROWS DIFFER between rounds alone")
            return 1
        elapsed, rows = on_processes(pool, specs)
        times["processes"].append(elapsed)
        if not same_rows(rows, reference):
            print("  ROWS DIFFER in plain processes from the runs alone")
            return 1
        for workers in (1, 2):
            start = time.perf_counter()
            executor = RayExecutor(workers=workers)
            try:
                started = time.perf_counter() - start
                warm, _ = on_executor(executor, warm_up[:workers])
                start_up[workers].append((started, warm))
                elapsed, rows = on_executor(executor, specs)
                times[workers].append(elapsed)
            finally:
                executor.close()
            if not same_rows(rows, reference):
                print(f"  ROWS DIFFER on Ray with {workers} worker(s) from the runs alone")
                return 1
    pool.shutdown()
    for workers in (1, 2):
        started, warm = min(start_up[workers])
        print(f"  Ray with {workers} worker(s): start-up {started:.1f} s, first (warm-up) run per worker {warm:.1f} s "
              "(best)")
    best = {k: min(v) for k, v in times.items()}
    median = {k: statistics.median(v) for k, v in times.items()}
    n = len(specs)
    overhead = best[1] / best["alone"] - 1
    speed_up = best[1] / best[2]
    print(f"  alone, in this process  {best['alone']:6.2f} s ({median['alone']:.2f})  {best['alone'] / n:.3f} s per "
          f"run, {n / best['alone']:.3f} runs/s   baseline")
    print(f"  Ray, 1 worker           {best[1]:6.2f} s ({median[1]:.2f})  {n / best[1]:.3f} runs/s   overhead per run "
          f"{100 * overhead:+.1f} % ({100 * (median[1] / median['alone'] - 1):+.1f} % on medians)   "
          f"goal < {100 * OVERHEAD_GOAL:.0f} %")
    print(f"  Ray, 2 workers          {best[2]:6.2f} s ({median[2]:.2f})  {n / best[2]:.3f} runs/s   {speed_up:.2f}x "
          f"1 worker ({median[1] / median[2]:.2f}x on medians)   goal >= {SPEED_UP_GOAL}x")
    machine = best["alone"] / best["processes"]
    print(f"  2 plain processes       {best['processes']:6.2f} s ({median['processes']:.2f})  "
          f"{n / best['processes']:.3f} runs/s   {machine:.2f}x alone: the parallelism this machine gives now; Ray "
          f"with 2 workers reaches {100 * best['processes'] / best[2]:.0f} % of it")
    print("  rows identical alone, in plain processes, on 1 and on 2 workers: yes")
    print(f"  load average (1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores")
    return 0 if speed_up >= SPEED_UP_GOAL and overhead < OVERHEAD_GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
