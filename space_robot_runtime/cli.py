"""Command-line entry points of the standalone runtime.

    space-robot-sim [SCENARIO] [--duration S] [--out DIR] [--set FILE.KEY=VALUE ...] [--overwrite]
                    [--progress|--no-progress] [--no-plots]
    space-robot-plot BAG [--out DIR]

SCENARIO is a path, or the name of a file in config/scenarios/ (default: servicer_pregrasp). --set overrides
one entry of a file the scenario names, e.g. --set controller.controller.modes=[joint_tracking] (the value
is YAML). Exit status: 0 done (and the scenario's requirements met), 1 requirements not met, 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from space_robot_dynamics.errors import SpaceRobotError
from space_robot_dynamics.package_share import resolve
from space_robot_nodes.scenario import DEFAULT_SCENARIO, load_scenario, parse_overrides

EXIT_OK, EXIT_REQUIREMENTS, EXIT_BAD_INPUT = 0, 1, 2


def scenario_path(text: str) -> Path:
    """A scenario given as a path (absolute, or relative to the working directory) or a name in the share."""
    path = Path(text)
    if path.is_file():
        return path.resolve()
    for candidate in (resolve(text), resolve(f"config/scenarios/{text}"), resolve(f"config/scenarios/{text}.yaml")):
        if candidate.is_file():
            return candidate
    raise SpaceRobotError(f"scenario {text!r}: no such file (looked in the working directory and in "
                          f"{resolve('config/scenarios')})")


def sim_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="space-robot-sim", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="scenario file or name")
    parser.add_argument("--duration", type=float, help="simulated seconds (default: the scenario's)")
    parser.add_argument("--out", type=Path, help="output directory (default: out/<scenario name>)")
    parser.add_argument("--set", action="append", default=[], metavar="FILE.KEY=VALUE",
                        help="override an entry of the model/nodes/controller/monitor file")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a bag that space-robot-sim wrote earlier in --out")
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help="progress bar on stderr even when it is not a terminal")
    progress.add_argument("--no-progress", dest="progress", action="store_false")
    args = parser.parse_args(argv)
    from space_robot_runtime.simulation_run import SimulationRun

    try:
        scenario = load_scenario(scenario_path(args.scenario), parse_overrides(args.set))
        out = args.out or Path("out") / scenario.name
        run = SimulationRun(scenario)
        result = run.run(duration=args.duration, out_dir=out, plots=not args.no_plots, progress=args.progress,
                         overwrite=args.overwrite)
    except (SpaceRobotError, FileExistsError) as exc:
        print(f"space-robot-sim: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    s = result.summary
    print(f"scenario {s['scenario']}: {s['duration_s']:.3f} s simulated in {s['wall_time_s']:.2f} s "
          f"({s['real_time_factor']:.2f}x real time)")
    attitude = "n/a" if s["max_attitude_error_rad"] is None else f"{s['max_attitude_error_rad']:.3g} rad"
    print(f"  final goal error {s['final_goal_error_rad']:.3g} rad, max bus attitude error {attitude}, "
          f"momentum drift {s['momentum_drift']['max_angular_kg_m2_s']:.3g} N m s")
    if "pregrasp" in s:
        print(f"  pre-grasp distance {s['pregrasp']['distance_m']:.4g} m, angle {s['pregrasp']['angle_rad']:.3g} rad")
    print(f"  bag {result.bag}\n  summary {out / 'summary.json'}")
    for path in result.plots:
        print(f"  plot {path}")
    if s.get("requirements_met") is False:
        failed = [name for name, c in s["requirements"].items() if not c["met"]]
        print(f"  requirements NOT met: {failed}")
        return EXIT_REQUIREMENTS
    return EXIT_OK


def plot_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="space-robot-plot", description="Plot a bag written by space-robot-sim.")
    parser.add_argument("bag", type=Path, help="rosbag2 directory")
    parser.add_argument("--out", type=Path, help="directory for the PNGs (default: next to the bag)")
    args = parser.parse_args(argv)
    from space_robot_runtime.run_plots import plot_run
    from space_robot_runtime.run_trace import read_bag

    if not (args.bag / "metadata.yaml").is_file():
        print(f"space-robot-plot: error: {args.bag} is not a rosbag2 directory (no metadata.yaml)", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        trace, info = read_bag(args.bag)
    except Exception as exc:  # noqa: BLE001 - any reader failure means an unreadable bag: say so, do not crash
        print(f"space-robot-plot: error: cannot read {args.bag}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = args.out or args.bag.resolve().parent
    paths = plot_run(trace, out, info.get("scenario", args.bag.name), attitude_limit=info.get("attitude_limit"),
                     wheel_max_speed=info.get("wheel_max_speed"))
    t, angle = trace.attitude_error()
    print(json.dumps({"samples": len(t), "max_attitude_error_rad": float(angle.max()) if len(angle) else None}))
    for path in paths:
        print(f"plot {path}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(sim_main())
