"""Thesis studies run by `space-robot-sim NAME` (config/studies/*.yaml): the seed 004 ch. 6 and ch. 7 cases.

A study is not a scenario of the node graph: it runs its ROS-free core (space_robot_control.thesis_studies:
force_motion_study, adaptive_study) on its own constrained plant, the hand held on the target by a rigid 6D contact
from t = 0 as the thesis assumes, with the exact state and contact force: the oracle that the node-graph scenarios
thesis_force_motion_graph and hubble_adaptive_graph (the same cases on the simulator's grasp) are tested against.
It writes summary.json (its figures, the thesis's figure beside them, each requirement and whether it is
met) and PNG figures into an output directory owned as space-robot-sim's (output_directory.py); no bag.
Exit status as space-robot-sim's: 0 when every requirement is met, 1 otherwise.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from space_robot_dynamics.config_reader import load_yaml_file
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.package_share import find_in_share, resolve

from .output_directory import OutputDirectory
from .requirement_verdicts import overall, unreached_time_limit
from .run_summary import to_json

STUDY_FOLDER = "config/studies"
SUMMARY_FILE = "summary.json"


def shipped_studies() -> list[str]:
    folder = resolve(STUDY_FOLDER)
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def find_study(text: str | Path) -> Path | None:
    """The study file `text` names (a shipped study's name, or a path to a YAML file with a `study` key); None if
    it is not a study (then it is a scenario)."""
    if str(text) in shipped_studies():
        return find_in_share(text, STUDY_FOLDER, "study")
    path = Path(text)
    if path.is_file() and path.suffix in (".yaml", ".yml"):
        try:
            return path if load_yaml_file(path).has("study") else None
        except ConfigError:
            return None
    return None


class StudyInterrupted(Exception):
    """SIGINT or SIGTERM during a study: its outputs are discarded (`t`: the simulated time reached, s)."""

    def __init__(self, t: float):
        super().__init__(f"interrupted at t = {t:.3f} s")
        self.t = t


@dataclass
class StudyOutcome:
    summary: dict
    out: Path
    plots: list


# study kind -> (core module, settings reader, study class, plot function of study_plots.py)
KINDS = {"hybrid_force_motion": ("space_robot_control.thesis_studies.force_motion_study", "read_force_motion_settings",
                                 "ForceMotionStudy", "plot_force_motion"),
         "adaptive_inverse_dynamics": ("space_robot_control.thesis_studies.adaptive_study", "read_adaptive_settings",
                                       "AdaptiveStudy", "plot_adaptive")}


def _kind(kind: str):
    """(settings reader, study class, plot function) of a study kind, imported when used."""
    import importlib

    from . import study_plots

    module_name, read, study_class, plot = KINDS[kind]
    module = importlib.import_module(module_name)
    return getattr(module, read), getattr(module, study_class), getattr(study_plots, plot)


def prepare_study(path: Path):
    """(name, kind, reader, evaluation reader, study object) for the study file; ConfigError naming a bad
    field."""
    reader = load_yaml_file(path)
    kind = reader.string("study", choices=tuple(KINDS))
    read, study_class, _ = _kind(kind)
    name = reader.string("name")
    reader.string("description", "")
    settings = read(reader)
    evaluation = reader.sub("evaluation")
    return name, kind, reader, evaluation, study_class(settings)


def run_study(path: Path, duration: float | None, out: Path | None, overwrite: bool, plots: bool,
              stop=None) -> StudyOutcome:
    """Run the study file at `path` and write its outputs; SpaceRobotError (bad input) before anything runs.
    stop: an object whose `requested` turns true to stop (runtime/interruption.py): StudyInterrupted then, with
    nothing written."""
    name, kind, reader, evaluation, study = prepare_study(path)
    thesis_settling = evaluation.number("thesis_settling_time_s", exclusive_minimum=0.0)
    limits = evaluation.sub("requirements")
    requirement_limits = {}
    for key in limits.data:
        if key not in study.REQUIREMENTS:
            raise limits.error(key, f"not a figure this study checks (it checks: {', '.join(study.REQUIREMENTS)})")
        requirement_limits[key] = limits.number(key, minimum=0.0)
    evaluation.raw("bands", None)          # read by the study's settings
    evaluation.reject_unknown()
    reader.reject_unknown()
    if duration is not None and not (np.isfinite(duration) and duration > 0.0):
        raise ConfigError("--duration", f"must be a finite number of seconds > 0, got {duration!r}")
    output = OutputDirectory(out or Path("out") / name, overwrite)
    start = time.monotonic()

    def check_stop(t: float) -> None:
        if stop is not None and stop.requested:
            raise StudyInterrupted(t)

    try:
        result = study.run(duration, progress=check_stop)
    except StudyInterrupted:
        output.discard()
        raise
    wall = time.monotonic() - start
    summary = {"scenario": name, "study": kind, "description": reader.raw("description", ""),
               "simulated_time_s": float(result.series["t"][-1]), "wall_time_s": wall,
               "thesis_settling_time_s": thesis_settling, **result.summary}
    checks = {}
    for key, limit in requirement_limits.items():
        value, why = summary.get(key), None
        if value is not None:
            met = bool(value <= limit)
        elif key == "settling_time_s":           # counted from the study's start
            met, why = unreached_time_limit(limit, 0.0, summary["simulated_time_s"], "settled")
        else:
            met, why = None, f"{key} is null (never reached)"
        checks[key] = {"value": value, "limit": limit, "met": met, **({"not_evaluated_because": why} if why else {})}
    summary["requirements"] = checks
    summary["requirements_met"] = overall(c["met"] for c in checks.values())
    (output.staging / SUMMARY_FILE).write_text(to_json(summary))
    written = []
    if plots:
        written = [p.name for p in _kind(kind)[2](result, output.staging, name, summary)]
    final = output.commit({"scenario": name, "study": kind})
    return StudyOutcome(summary, final, [final / p for p in written])


def report(outcome: StudyOutcome) -> None:
    s = outcome.summary
    print(f"study {s['scenario']}: {s['simulated_time_s']:.3f} s simulated in {s['wall_time_s']:.2f} s")
    settling = s.get("settling_time_s")
    print(f"  settling time {'not reached' if settling is None else f'{settling:.3g} s'} "
          f"(thesis: {s['thesis_settling_time_s']:.3g} s)")
    print(f"  summary {outcome.out / SUMMARY_FILE}")
    for path in outcome.plots:
        print(f"  plot {path}")
    for key, check in s["requirements"].items():
        if check["met"] is False:
            value = "not reached" if check["value"] is None else f"{check['value']:.4g}"
            print(f"  requirement {key} NOT met: {value} > limit {check['limit']:.4g}")
        elif check["met"] is None:
            print(f"  requirement {key} not evaluated: {check['not_evaluated_because']}")

