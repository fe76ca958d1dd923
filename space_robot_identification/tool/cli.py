"""space-robot-identify: fit a model's named parameters to a recorded run, or run a study on synthetic data.

    space-robot-identify CONFIG [--data BAG_OR_CSV] [--out DIR] [--overwrite] [--progress|--no-progress]
                         [--no-plots]

CONFIG: an identification file (config/identification/*.yaml; a path, or relative to the package share).
--data: a rosbag2 directory (recorded by space-robot-sim or `ros2 bag record`) or a CSV file; without it, the
config's synthetic_data section makes the data (scenario runs or the problem's simulation, with its noise seeds).
Writes DIR (default out/<config name>): summary.json (strict JSON), fit_*.png and residuals_*.png, and for
scenario cases the recorded runs in synthetic/<case>/.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from space_robot_dynamics.errors import ConfigError, SpaceRobotError
from space_robot_runtime.command_line import EXIT_INTERNAL, CommandLine  # noqa: F401 - this tool's status 4

TOOL = "space-robot-identify"
IDENTIFY = CommandLine(TOOL)
EXIT_OK, EXIT_NOT_CONVERGED, EXIT_BAD_INPUT, EXIT_RUN_FAILED = 0, 1, 2, 3
EXIT_STATUS_HELP = """exit status:
  0    every fit converged (summary.json and the table on stdout give the estimates)
  1    a fit of the main case (the headline figures' data) did not converge (named on the last lines; its
       estimate is still written); fits of other cases that did not converge are listed without this status
  2    bad input (config, --data, --out...): one line names the field and the fix; nothing was written
  3    a scenario run making synthetic data did not complete (diverged): nothing was written
  4    internal error (a bug; please report it with the traceback)
  130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: nothing was written"""


class _Interrupted(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Identify named model parameters (bounds, start values, matched signals, Nelder-Mead or bounded\n"
                    "least squares) from a recorded run, with Cramer-Rao and multi-start uncertainty.",
        epilog=EXIT_STATUS_HELP)
    parser.add_argument("config", help="identification YAML file (e.g. config/identification/target_inertia.yaml)")
    parser.add_argument("--data", type=Path, help="rosbag2 directory or CSV file (default: the config's "
                        "synthetic_data)")
    parser.add_argument("--out", type=Path, help="output directory (default: out/<config name>)")
    parser.add_argument("--overwrite", action="store_true", help="replace the outputs of an earlier "
                        f"{TOOL} run in --out")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help="progress bar on stderr even when it is not a terminal")
    progress.add_argument("--no-progress", dest="progress", action="store_false")
    return parser


def identify_main(argv: list[str] | None = None, interruption=None) -> int:
    # The fits multiply matrices of a few rows (5 x 5 transition matrices, 6 x 10 regressors): BLAS threads only
    # cost there (50x slower for scipy's expm on a loaded 2-core machine). Set before NumPy loads (the console
    # script's process; called from a program that already loaded NumPy it would change nothing but the
    # environment of its children, so it is left alone); a user's own setting wins.
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = _parser().parse_args(argv)
    return IDENTIFY.run(lambda interruption: _identify(args, interruption), interruption=interruption)


def _identify(args, interruption) -> int:
    from space_robot_identification.identification_config import load_identification_config
    from space_robot_identification.identification_study import Dataset, Study
    from space_robot_runtime.output_directory import OutputDirectory

    from .fit_progress import FitProgress
    from .recorded_data import read_recording
    from .synthetic_data import RunFailed, SyntheticDatasets

    started = time.perf_counter()
    try:
        config = load_identification_config(args.config)
        if args.data is not None:
            signals = read_recording(args.data)
            data_sets = [Dataset("data", None, signals, None)]
            for _role, spec in Study(config).roles():        # every signal and the window, before any output
                spec.bind(signals, config.space, *config.window)
            maker = None
        elif config.synthetic is None:
            raise ConfigError("synthetic_data", "the config has no synthetic_data section: give --data BAG_OR_CSV")
        else:
            maker = SyntheticDatasets(config)
            data_sets = None
        output = OutputDirectory(args.out or Path("out") / config.name, args.overwrite, tool=TOOL)
    except SpaceRobotError as exc:
        IDENTIFY.say(f"error: {exc}")
        return EXIT_BAD_INPUT
    study = Study(config)
    if maker is None:
        total = len(data_sets) * study.fits_per_dataset()
    else:
        clean, noisy = maker.dataset_counts()
        total = clean * study.fits_per_dataset() + noisy * study.fits_per_dataset(noise_seed=1)
    bar = FitProgress(total, args.progress)

    def after_each() -> None:
        bar.step()
        if interruption.requested:
            raise _Interrupted

    try:
        if maker is None:
            for dataset in data_sets:
                study.fit_dataset(dataset, after_each)
        else:
            for case in config.synthetic.cases:
                bar.label = f"case {case.name}: " + ("recording the scenario" if case.scenario else "simulating")
                bar.draw(force=True)
                for dataset in maker.datasets(case, output.staging, interruption):
                    if interruption.requested:
                        raise _Interrupted
                    bar.label = f"case {case.name}, " + ("noise-free" if dataset.noise_seed is None
                                                         else f"noise seed {dataset.noise_seed}")
                    study.fit_dataset(dataset, after_each)
    except RunFailed as exc:
        bar.close()
        output.discard()
        if interruption.requested:           # the scenario run stopped on the signal: an interruption, not a failure
            IDENTIFY.say(f"interrupted by {interruption.name} while recording synthetic data; nothing written")
            return interruption.exit_status
        IDENTIFY.say(f"error: {exc}; nothing written")
        return EXIT_RUN_FAILED
    except _Interrupted:
        bar.close()
        output.discard()
        IDENTIFY.say(f"interrupted by {interruption.name}; nothing written")
        return interruption.exit_status
    except SpaceRobotError as exc:
        bar.close()
        output.discard()
        IDENTIFY.say(f"error: {exc}")
        return EXIT_BAD_INPUT
    bar.close()
    summary = _summary(config, study, args, time.perf_counter() - started)
    plots = []
    if not args.no_plots:
        from .identification_plots import plot_fit

        for fitted in study.fitted:
            if fitted.method == config.methods[0]:
                plots += [p.name for p in plot_fit(fitted, output.staging)]
    summary["plots"] = plots
    from space_robot_runtime.run_summary import to_json

    (output.staging / "summary.json").write_text(to_json(summary))
    final = output.commit({"config": str(config.source), "complete": True})
    failed = [r for r in study.records if not r["success"]]
    main_case = summary["headline_case"]
    _say_unconverged(failed, len(study.records), main_case)
    _report(summary, final)              # the result last
    return EXIT_NOT_CONVERGED if any(r["case"] == main_case for r in failed) else EXIT_OK


def _say_unconverged(failed: list, total: int, main_case: str) -> None:
    """The fits that stopped before converging, grouped (one line per problem, case, method and reason, with its
    noise seeds), and what that means for the result: such a fit's estimate is its last iterate; it is kept in
    summary.json (success false) and counted in that case's spread."""
    if not failed:
        return
    groups: dict[tuple, list] = {}
    for r in failed:
        groups.setdefault((r["problem"], r["case"], r["method"], r["message"]), []).append(r["noise_seed"])
    headline = any(r["case"] == main_case for r in failed)
    IDENTIFY.say(f"{len(failed)} of {total} fits stopped before converging: their estimates are the last iterate, "
                 f"kept in summary.json with success false; "
                 + (f"the headline case {main_case} is among them (exit status {EXIT_NOT_CONVERGED})" if headline
                    else f"the headline case {main_case} is not among them"))
    for (problem, case, method, message), seeds in groups.items():
        named = ", ".join("noise-free" if s is None else str(s) for s in seeds)
        IDENTIFY.say(f"  {problem} {case} {method} (noise seeds {named}): {message}")


def _summary(config, study, args, wall_time: float) -> dict:
    synthetic = config.synthetic
    notes = []
    if args.data is not None:
        data = {"source": str(args.data)}
        notes.append("real data: the truth is unknown, so errors and the headline figures are null")
    else:
        data = {"source": "synthetic",
                "cases": [{"name": c.name, "main": c is synthetic.main_case,
                           "scenario": str(c.scenario) if c.scenario else None, "set": c.overrides,
                           "duration_s": c.duration, "truth": c.truth or None} for c in synthetic.cases],
                "noise_free": synthetic.noise_free, "noise_seeds": list(synthetic.noise.seeds),
                "noise_sigma": synthetic.noise.sigma}
    main = {"problem": config.problem.kind, "method": config.methods[0],
            "case": synthetic.main_case.name if args.data is None else "data"}
    return {
        "tool": TOOL, "study": config.name, "description": config.description, "config": str(config.source),
        "complete": True, "wall_time_s": wall_time, "headline_case": main["case"],
        **study.headline(),
        "headline": {h.key: {"metric": h.metric, "of": h.target, **main,
                             "over": "mean over the noise seeds" if synthetic and synthetic.noise.seeds
                             and args.data is None else "the single dataset"} for h in config.headline},
        "data": data,
        "window_s": list(config.window),
        "methods": list(config.methods),
        "multi_start": {"count": config.multi_start_count, "seed": config.multi_start_seed,
                        "spread": config.multi_start_spread, "datasets": config.multi_start_datasets},
        "parameters": [{"name": p.name, "unit": p.unit, "start": p.start, "lower": p.lower, "upper": p.upper}
                       for p in config.space.parameters],
        "problems": {role: spec.kind for role, spec in study.roles()},
        "table": study.table(),
        "results": study.records,
        "notes": notes,
    }


def _number(value, digits: str = ".3g") -> str:
    return "n/a" if value is None else f"{value:{digits}}"


def _report(summary: dict, final: Path) -> None:
    print(f"{summary['study']}: {len(summary['results'])} fits in {summary['wall_time_s']:.1f} s")
    for key in summary["headline"]:
        print(f"  {key}: {_number(summary[key])}")
    for row in summary["table"]:
        for label in ("noise_free", "noisy_mean"):
            figures = row[label]
            if figures is None:
                continue
            metrics = ", ".join(f"{k} {_number(v)}" for k, v in figures["metrics"].items())
            errors = ", ".join(f"{n.rsplit('.', 1)[-1]} {_number(v)}" for n, v in figures["relative_error"].items())
            print(f"  {row['problem']:<11} {row['case']:<14} {row['method']:<13} {label:<10} {metrics}"
                  f"{'; ' if metrics else ''}relative errors: {errors}")
    print(f"  summary {final / 'summary.json'}")
    for name in summary["plots"]:
        print(f"  plot {final / name}")
