"""Command-line entry points of the standalone runtime.

    space-robot-sim [SCENARIO] [--duration S] [--out DIR] [--set KEY=VALUE ...] [--overwrite]
                    [--progress|--no-progress] [--no-plots]
    space-robot-plot BAG [--out DIR]

SCENARIO is a path, or the name of a shipped scenario (default: servicer_pregrasp).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from space_robot_dynamics.config_reader import parse_yaml
from space_robot_dynamics.errors import ConfigError, SpaceRobotError
from space_robot_runtime.command_line import EXIT_INTERNAL, CommandLine  # noqa: F401 - this tool's status 4
from space_robot_scenario import find_scenario, load_scenario, parse_overrides, shipped_scenarios

SIM, PLOT = CommandLine("space-robot-sim"), CommandLine("space-robot-plot")
EXIT_OK, EXIT_REQUIREMENTS, EXIT_BAD_INPUT, EXIT_RUN_FAILED = 0, 1, 2, 3
EXIT_SIGINT, EXIT_SIGTERM = 130, 143
EXIT_STATUS_HELP = """exit status:
  0    the run completed and no requirement of the scenario was found unmet
  1    the run completed and a requirement was not met (summary.json and the last lines say which)
  2    bad input (scenario, --set, --duration, --out...): one line names it and the fix; nothing was run
  3    the simulation diverged: outputs up to the last finite state are written (summary "complete": false)
  4    internal error (a bug; please report it with the traceback): what was recorded is written
  130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: the bag, summary ("complete": false) and plots of
       the run so far are written"""


def scenario_path(text: str) -> Path:
    """A scenario given as a path or a shipped name (space_robot_scenario.scenario.find_scenario)."""
    return find_scenario(text)


def _duration(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


def _scenario_list() -> str:
    """The shipped scenarios and thesis studies (config/studies, study_run.py), each with its description."""
    from space_robot_runtime.study_run import find_study, shipped_studies

    lines = []
    for names, find in ((shipped_scenarios(), find_scenario), (shipped_studies(), find_study)):
        for name in names:
            try:
                description = parse_yaml(find(name).read_text()).get("description", "")
            except Exception:  # noqa: BLE001 - a help text must not fail on one unreadable file
                description = ""
            lines.append(f"  {name:<22} {description}")
    return "shipped scenarios (give the name, or a path to your own file):\n" + "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=SIM.tool, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a scenario in the standalone runtime (lockstep simulated time, no ROS 2 needed) and\n"
                    "write a rosbag2 (MCAP), summary.json and plots into an output directory that the run owns.",
        epilog=f"{_scenario_list()}\n\n{EXIT_STATUS_HELP}")
    parser.add_argument("scenario", nargs="?", default="servicer_pregrasp", help="scenario name or YAML file")
    parser.add_argument("--duration", type=_duration, help="simulated seconds (default: the scenario's)")
    parser.add_argument("--out", type=Path, help="output directory (default: out/<scenario name>); a directory "
                        "holding anything but an earlier run of this tool is refused")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override an entry (VALUE is YAML): FILE.KEY for the files the scenario names "
                             "(model., nodes., controller., monitor.), any other KEY for the scenario itself, "
                             "e.g. --set simulation.dt=0.0005 --set controller.controller.modes=[joint_tracking] "
                             "--set model=config/models/servicer_target_pyramid.yaml "
                             "--set model.subtrees.target.mount.xyz=[0, 0, 1] (list entries by index or name)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the outputs of an earlier space-robot-sim run in --out")
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help="progress bar on stderr even when it is not a terminal")
    progress.add_argument("--no-progress", dest="progress", action="store_false")
    return parser


def sim_main(argv: list[str] | None = None, interruption=None) -> int:
    """`interruption`: the one the console script holds since its first instruction (console_scripts.py)."""
    args = _parser().parse_args(argv)
    return SIM.run(lambda interruption: _simulate(args, interruption), interruption=interruption)


def _simulate(args, interruption) -> int:
    from space_robot_runtime.output_directory import OutputDirectory
    from space_robot_runtime.simulation_run import SimulationRun
    from space_robot_runtime.study_run import find_study, shipped_studies

    study = find_study(args.scenario)
    if study is not None:
        return _study(study, args, interruption)
    try:
        try:
            path = find_scenario(args.scenario)
        except ConfigError as exc:          # name what --help lists: the studies too
            raise ConfigError(exc.field, f"{exc.problem}; or a thesis study: {', '.join(shipped_studies())}",
                              exc.source) from exc
        scenario = load_scenario(path, parse_overrides(args.set))
        run = SimulationRun(scenario)
        duration = scenario.duration if args.duration is None else args.duration
        run.ticks_for(duration, "duration" if args.duration is None else "--duration")
        output = OutputDirectory(args.out or Path("out") / scenario.name, args.overwrite)
    except SpaceRobotError as exc:
        SIM.say(f"error: {exc}")
        return EXIT_BAD_INPUT
    if interruption.requested:
        output.discard()
        SIM.say(f"interrupted by {interruption.name} before the run started; nothing written")
        return interruption.exit_status
    result = run.run(duration=duration, plots=not args.no_plots, progress=args.progress, stop=interruption,
                     output=output)
    _report(result)
    status = result.status
    if status.internal_error:
        print(status.traceback, file=sys.stderr)
        return SIM.internal_error(f"{status.internal_error}; what was recorded is in {result.out}")
    if status.stopped_by in ("SIGINT", "SIGTERM"):
        SIM.say(f"interrupted by {status.stopped_by} at t = {status.simulated_time:.3f} s of "
                f"{status.requested_duration:.3f} s; bag, summary (complete: false) and plots of the run so far "
                f"in {result.out}")
        return interruption.exit_status
    if status.stopped_by == "diverged":
        SIM.say(f"{status.reason.rstrip('.')}; outputs up to t = {status.simulated_time:.6f} s in {result.out}")
        return EXIT_RUN_FAILED
    return EXIT_REQUIREMENTS if result.summary.get("requirements_met") is False else EXIT_OK


def _study(path: Path, args, interruption) -> int:
    """A thesis study (config/studies, study_run.py): no node graph, no bag; --set is not supported; an
    interrupted study writes nothing."""
    from space_robot_runtime.study_run import StudyInterrupted, report, run_study

    if args.set:
        SIM.say(f"error: --set: not supported for the study {path.stem} (edit a copy of {path} instead)")
        return EXIT_BAD_INPUT
    try:
        outcome = run_study(path, args.duration, args.out, args.overwrite, not args.no_plots, interruption)
    except SpaceRobotError as exc:
        SIM.say(f"error: {exc}")
        return EXIT_BAD_INPUT
    except StudyInterrupted as exc:
        SIM.say(f"study {path.stem} {exc} by {interruption.name}; nothing written")
        return interruption.exit_status
    report(outcome)
    return EXIT_REQUIREMENTS if outcome.summary["requirements_met"] is False else EXIT_OK


def _figure(value, unit: str, digits: str = ".3g") -> str:
    return "n/a" if value is None else f"{value:{digits}} {unit}"


def _report(result) -> None:
    s = result.summary
    rtf = s.get("real_time_factor")
    print(f"scenario {s['scenario']}: {s['simulated_time_s']:.3f} s simulated in {s['wall_time_s']:.2f} s"
          + (f" ({rtf:.2f}x real time)" if rtf is not None else "")
          + ("" if s["complete"] else f" - INCOMPLETE: {s['incomplete_reason']}"))
    drift = s.get("momentum_drift")
    print(f"  final goal error {_figure(s.get('final_goal_error_rad'), 'rad')}, max bus attitude error "
          f"{_figure(s.get('max_attitude_error_rad'), 'rad')}, momentum drift "
          f"{_figure(drift['max_angular_kg_m2_s'] if drift else None, 'N m s')}, momentum balance residual "
          f"{_figure(s.get('momentum_balance_residual'), '(relative)')}")
    if "pregrasp" in s:
        print(f"  pre-grasp distance {s['pregrasp']['distance_m']:.4g} m, angle {s['pregrasp']['angle_rad']:.3g} rad")
    if "grasped" in s and (s["grasped"] or s["capture"]["contact_events"]):     # (a gripper nobody used: silent)
        print(f"  grasped {s['grasped']} at {_figure(s['grasp_time_s'], 's')}, momentum change across the grasp "
              f"{_figure(s['momentum_change_across_grasp'], '(relative)')}, detumbled after "
              f"{_figure(s['detumble_time_s'], 's')}, peak grasp wrench {_figure(s['peak_grasp_force_n'], 'N')} / "
              f"{_figure(s['peak_grasp_torque_nm'], 'N m')}"
              + (f", released at {_figure(s['capture']['release_time_s'], 's')}"
                 if s["capture"].get("release_time_s") is not None else ""))
    print(f"  bag {result.bag}\n  summary {result.out / 'summary.json'}")
    for path in result.plots:
        print(f"  plot {path}")
    for name, check in s.get("requirements", {}).items():
        if check["met"] is False:
            value, limit = check["value"], check["limit"]
            said = f"{value} != {limit}" if isinstance(limit, bool) else \
                f"{'none reached' if value is None else format(value, '.4g')} > limit {limit:.4g}"
            print(f"  requirement {name} NOT met: {said} ({check['applies']})")
        elif check["met"] is None:
            print(f"  requirement {name} not evaluated: {check['not_evaluated_because']}")


def plot_main(argv: list[str] | None = None, interruption=None) -> int:
    parser = argparse.ArgumentParser(prog=PLOT.tool, description="Plot a bag written by space-robot-sim.")
    parser.add_argument("bag", type=Path, help="rosbag2 directory")
    parser.add_argument("--out", type=Path, help="directory for the PNGs (default: next to the bag)")
    args = parser.parse_args(argv)
    # no safe point to stop at: a signal ends it at once
    return PLOT.run(lambda _none: _plot(args), interruptible=False, interruption=interruption)


def _plot(args) -> int:
    from space_robot_runtime.run_plots import plot_run
    from space_robot_runtime.run_trace import bag_error_text, read_bag

    if not (args.bag / "metadata.yaml").is_file():
        PLOT.say(f"error: {args.bag} is not a rosbag2 directory (no metadata.yaml)")
        return EXIT_BAD_INPUT
    try:
        trace, info = read_bag(args.bag)
    except Exception as exc:  # noqa: BLE001 - any reader failure means an unreadable bag: say so, do not crash
        PLOT.say(f"error: cannot read {args.bag}: {bag_error_text(exc)}")
        return EXIT_BAD_INPUT
    out = args.out or args.bag.resolve().parent
    try:
        paths = plot_run(trace, out, info.get("scenario", args.bag.name), attitude_limit=info.get("attitude_limit"),
                         wheel_max_speed=info.get("wheel_max_speed"),
                         momentum_conserved=info.get("momentum_conserved", True), capture=info.get("capture"),
                         momentum_axes=info.get("momentum_axes"),
                         force_motion=info.get("force_motion"))
    except OSError as exc:       # the PNGs' directory: not creatable, not writable, a name too long
        PLOT.say(f"error: --out {out}: cannot write the plots there: {exc.strerror or exc}; choose a directory "
                 "you can write")
        return EXIT_BAD_INPUT
    t, angle = trace.attitude_error()
    said = {"samples": len(t), "max_attitude_error_rad": float(angle.max()) if len(angle) else None}
    if not len(t):          # null with its reason, as summary.json's notes
        said["notes"] = [f"bus attitude: none in this bag (no base odometry: a fixed-base model; "
                         f"{len(trace.arm_positions)} joint_states samples plotted)"]
    print(json.dumps(said))
    for path in paths:
        print(f"plot {path}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(sim_main())
