"""Real-time factor of every shipped scenario in the standalone runtime with its bag, and a campaign's throughput.

Per scenario: SimulationRun.run() with its MCAP bag written to a temporary directory (no plots), for the scenario's
duration or `--duration` s simulated, whichever is shorter (the first seconds of a long scenario: capture's grasp at
~11 s is inside the default 20 s, envisat_capture's at 56 s is not; `--duration 0` runs each in full). The factor
is the one space-robot-sim prints (summary.json's real_time_factor: the run's loop with the bag's messages); the
`run()` column is the whole call's (bag index, summary, a comparison run). Goals (issue of the Monte Carlo
speed, docs/performance.md): the default scenario >= 15x, every other >= 10x; floor 5x for any (exit status 1
below it).

Campaign: the first `--campaign-runs` runs of `--campaign` (each cut to the same duration) on two worker processes
(spawned, imports warmed up first), as the campaign's executors run them without Ray's start-up: wall time, runs per
second, and simulated seconds per wall second (the campaign's factor; the closing note of a speed change compares
it before and after in one session, same seeds, same rows).

    python bench/bench_scenarios.py [--duration 20] [--only NAME ...] [--campaign capture_robustness]
                                    [--campaign-runs 4]
"""
from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

from space_robot_campaign.campaign_config import load_campaign
from space_robot_campaign.run_plan import plan
from space_robot_campaign.run_task import run_one
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import DEFAULT_SCENARIO, load_scenario
from space_robot_scenario.scenario import shipped_scenarios

FLOOR, GOAL, DEFAULT_GOAL = 5.0, 10.0, 15.0


def scenario_factor(name: str, cap: float) -> tuple[float, float, float]:
    """(simulated s, real-time factor, factor of the whole run()) of one scenario run with its bag. The real-time
    factor is the one space-robot-sim prints and summary.json keeps: simulated time over the wall time of the run's
    loop (every node, the bag's messages); the whole run() adds the bag's index, the summary and, for a scenario
    with a `comparison:` (seed000_flexible_link, servicer_flexible), its comparison run."""
    scenario = load_scenario(name)
    duration = scenario.duration if cap <= 0 else min(cap, scenario.duration)
    run = SimulationRun(scenario)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run.run(duration=duration, out_dir=os.path.join(tmp, "out"), plots=False, progress=False)
        wall = time.perf_counter() - start
    if not result.complete:
        raise RuntimeError(f"{name}: the run did not complete ({result.status.reason})")
    return duration, result.summary["real_time_factor"], duration / wall


def campaign_throughput(name: str, runs: int, cap: float) -> tuple[float, int, float]:
    """(wall s, runs, simulated s) of the campaign's first runs on two spawned worker processes."""
    campaign = load_campaign(name)
    specs = plan(campaign, runs)
    if cap > 0:
        specs = [dataclasses.replace(s, overrides=(*s.overrides, f"duration={cap}")) for s in specs]
    warm_up = [dataclasses.replace(s, overrides=(*s.overrides, "duration=0.05")) for s in specs[:2]]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(run_one, warm_up, chunksize=1))            # each worker's imports and first build
        start = time.perf_counter()
        rows = list(pool.map(run_one, specs, chunksize=1))
        wall = time.perf_counter() - start
    bad = [r for r in rows if r["outcome"] in ("error", "bad_input", "diverged")]
    if bad:
        raise RuntimeError(f"campaign run {bad[0]['run']}: {bad[0]['outcome']}: {bad[0]['error']}")
    return wall, len(rows), sum(r["simulated_time_s"] for r in rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0, help="simulated s per scenario at most (0: full)")
    parser.add_argument("--only", nargs="*", help="these scenarios only")
    parser.add_argument("--campaign", default="capture_robustness")
    parser.add_argument("--campaign-runs", type=int, default=4, help="0: no campaign")
    args = parser.parse_args(argv)
    default = load_scenario(DEFAULT_SCENARIO).name
    names = args.only or shipped_scenarios()
    print(f"bench_scenarios: standalone runtime with the bag, at most {args.duration:g} s simulated each "
          f"(floor {FLOOR:g}x; goals {DEFAULT_GOAL:g}x for {default}, {GOAL:g}x for the others)")
    print(f"  {'scenario':28s} {'simulated':>9s} {'factor':>8s} {'run()':>8s}  verdict (on the factor)")
    below = []
    for name in names:
        duration, factor, whole = scenario_factor(name, args.duration)
        goal = DEFAULT_GOAL if name == default else GOAL
        verdict = "goal met" if factor >= goal else "BELOW FLOOR" if factor < FLOOR else f"below the {goal:g}x goal"
        if factor < FLOOR:
            below.append(name)
        print(f"  {name:28s} {duration:8.1f}s {factor:7.2f}x {whole:7.2f}x  {verdict}", flush=True)
    if args.campaign_runs > 0:
        wall, runs, simulated = campaign_throughput(args.campaign, args.campaign_runs, args.duration)
        print(f"  campaign {args.campaign}: {runs} runs of {simulated / runs:g} s on 2 workers in {wall:.1f} s: "
              f"{runs / wall:.3f} runs/s, {simulated / wall:.2f} simulated s per wall s")
    print(f"  load average (1 min) {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if below:
        print(f"  below the {FLOOR:g}x floor: {', '.join(below)}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
