"""An identification configuration (config/identification/*.yaml), validated at load.

name: NAME                          # default output directory out/NAME
description: TEXT
problem: {kind: KIND, ...}          # what predicts the matched signals from the parameters (PROBLEM_KINDS)
cross_check: {kind: KIND, ...}      # optional: a second problem fitted to the same data with the same parameters
parameters: {NAME: {start, lower, upper}}          # free_parameters.py
window: {start: S, end: E}          # s from the start of the recording; the data must cover it
methods: [nelder_mead, least_squares]              # fitting.py; the first is the main one
fit: {nelder_mead: {...}, least_squares: {...}}    # stopping rules (fitting.FitOptions)
multi_start: {count: N, seed: S, spread: F}        # N fits per dataset and method: the configured start and
                                                   # N - 1 drawn around it (fitting.start_points)
  datasets: all                     # or noise_free: only the noise-free datasets (and --data) get the N starts,
                                    # the noisy ones the configured start (the spread over starts is a property of
                                    # the cost's shape, which noise hardly changes; a study with slow fits saves time)
synthetic_data:                     # the data when none is given (--data): one dataset per case, noise-free
  noise_free: true                  # and one noisy copy per noise seed
  cases:
    - name: NAME
      main: true                    # the case of the summary's top-level figures (default: the first)
      scenario: FILE                # recorded by running this scenario (space-robot-sim's runtime)
      set: {KEY: VALUE}             # its overrides, as space-robot-sim --set
      duration: S                   # default: the window's end
      truth: {PARAMETER: VALUE}     # or: the problem's simulation at these values (the rest: synthetic_data.truth,
                                    # then the simulation's nominal values), sampled at `sample_rate`
  truth: {PARAMETER: VALUE}
  sample_rate: HZ                   # a simulated case's duration x sample_rate: at most MAX_SAMPLES (1e7)
  noise: {seeds: [...], sigma: {...}}              # synthetic_noise.py
headline:                           # top-level figures of summary.json: over the main case's noisy datasets
  KEY: {metric: relative_error, parameter: NAME}   # (their mean; the noise-free one without noise seeds),
  KEY: {metric: inertia_relative_error, body: LINK}  # main problem and method. Metrics: relative_error
                                                   # (|x_hat - x| / |x|), inertia_relative_error (relative
                                                   # Frobenius error about the CoM), com_error (m)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from space_robot_dynamics.config_reader import ConfigReader, load_config_file

from . import body_inertia
from .body_problems import read_body_problem
from .elastic_joint_problem import read_elastic_joint_problem
from .fitting import METHODS, FitOptions, read_fit_options
from .free_parameters import ParameterSpace, read_free_parameters
from .parameterized_simulation import SimulationProblemSpec
from .synthetic_noise import NoiseModel, read_noise

METRICS = ("relative_error", "inertia_relative_error", "com_error")
# The most samples one simulated case (no scenario) may have, duration x sample_rate: each matched signal is a
# float64 series of that length (8e7 B at the bound), held for every dataset (noise-free and one per noise seed)
# and evaluated at every fit evaluation; 1e7 is 1e5 s at 100 Hz, far beyond an identification manoeuvre (the
# shipped ones are 10-40 s), and a bound that still fits in memory (above it, the allocation failed half-way)
MAX_SAMPLES = 10**7
MULTI_START_DATASETS = ("all", "noise_free")


# kind -> reader(ConfigReader of the problem section, kind) -> spec with known_parameters(), bind(), and for body
# problems parameter_values(system)
PROBLEM_KINDS = {
    "body_momentum": read_body_problem,
    "body_joint_torques": read_body_problem,
    "elastic_joint": read_elastic_joint_problem,
}


@dataclass(frozen=True)
class Case:
    name: str
    main: bool = False
    scenario: Path | None = None
    overrides: dict = field(default_factory=dict)
    duration: float | None = None
    truth: dict = field(default_factory=dict)
    field: str = ""


@dataclass(frozen=True)
class SyntheticData:
    cases: tuple
    noise: NoiseModel
    noise_free: bool = True
    truth: dict = field(default_factory=dict)
    sample_rate: float = 100.0

    @property
    def main_case(self) -> Case:
        return next((c for c in self.cases if c.main), self.cases[0])


@dataclass(frozen=True)
class Headline:
    key: str
    metric: str
    target: str           # the parameter (relative_error) or the body (inertia_relative_error, com_error)


@dataclass
class IdentificationConfig:
    name: str
    description: str
    problem: object
    cross_check: object | None
    space: ParameterSpace
    window: tuple
    methods: tuple
    fit_options: FitOptions
    multi_start_count: int
    multi_start_seed: int
    multi_start_spread: float
    multi_start_datasets: str
    synthetic: SyntheticData | None
    headline: tuple
    source: str | None = None


def _read_problem(reader: ConfigReader, key: str):
    section = reader.sub(key)
    kind = section.string("kind", choices=tuple(PROBLEM_KINDS))
    return PROBLEM_KINDS[kind](section, kind)


def read_identification_config(reader: ConfigReader) -> IdentificationConfig:
    name = reader.string("name")
    description = reader.string("description", "")
    problem = _read_problem(reader, "problem")
    cross_check = _read_problem(reader, "cross_check") if reader.has("cross_check") else None
    space = read_free_parameters(reader, problem.known_parameters())
    if cross_check is not None:
        known = cross_check.known_parameters()
        for parameter in space.parameters:
            if parameter.name not in known:
                raise reader.error("cross_check", f"has no parameter {parameter.name!r} (the cross-check fits the "
                                                  "same parameters)")
    window_reader = reader.sub("window")
    start = window_reader.number("start", 0.0, minimum=0.0)
    end = window_reader.number("end", exclusive_minimum=start)
    window_reader.reject_unknown()
    methods = tuple(reader.string_list("methods", ["least_squares"]))
    if not methods:
        raise reader.error("methods", f"must name at least one of {list(METHODS)}")
    for i, method in enumerate(methods):
        if method not in METHODS:
            raise reader.error(f"methods[{i}]", f"must be one of {list(METHODS)}, got {method!r}")
    fit_options = read_fit_options(reader.sub("fit", {}))
    multi = reader.sub("multi_start", {})
    count = multi.integer("count", 1, minimum=1)
    seed = multi.integer("seed", 0, minimum=0)
    spread = multi.number("spread", 0.5, exclusive_minimum=0.0, maximum=2.0)
    multi_datasets = multi.string("datasets", "all", choices=MULTI_START_DATASETS)
    multi.reject_unknown()
    synthetic = _read_synthetic(reader.sub("synthetic_data"), problem, space, end) \
        if reader.has("synthetic_data") else None
    headline = _read_headline(reader, space, problem)
    reader.reject_unknown()
    return IdentificationConfig(name, description, problem, cross_check, space, (start, end), methods, fit_options,
                                count, seed, spread, multi_datasets, synthetic, headline, reader.source)


def _read_truth(reader: ConfigReader, key: str, known: dict) -> dict:
    values = reader.number_map(key, {})
    for name in values:
        if name not in known:
            raise reader.error(f"{key}.{name}", f"unknown parameter (the problem has: {', '.join(sorted(known))})")
    return values


def _read_synthetic(reader: ConfigReader, problem, space: ParameterSpace, window_end: float) -> SyntheticData:
    known = problem.known_parameters()
    simulated = isinstance(problem, SimulationProblemSpec)
    truth = _read_truth(reader, "truth", known)
    cases = []
    for sub in reader.sub_list("cases"):
        has_scenario = sub.has("scenario")
        if not isinstance(sub.raw("set", {}) or {}, dict):
            raise sub.error("set", "must be a mapping KEY -> VALUE (as space-robot-sim --set KEY=VALUE)")
        case = Case(
            name=sub.string("name"),
            main=sub.boolean("main", False),
            scenario=sub.file_path("scenario") if has_scenario else None,
            overrides=dict(sub.raw("set", {}) or {}),
            duration=sub.number("duration", window_end, exclusive_minimum=0.0),
            truth=_read_truth(sub, "truth", known),
            field=sub.path,
        )
        if has_scenario and case.truth:
            raise sub.error("truth", "a scenario's data has its model's parameters as truth: give scenario or truth")
        if has_scenario and not hasattr(problem, "parameter_values"):
            raise sub.error("scenario", f"a {problem.kind} problem cannot read its parameters' truth from a "
                                        "scenario's model: give `truth` (its simulation makes the data)")
        if not has_scenario and not simulated:
            raise sub.error("scenario", f"is required: a {problem.kind} problem has no simulation of its own to "
                                        "make data")
        if case.duration < window_end:
            raise sub.error("duration", f"{case.duration} s is shorter than the window's end ({window_end} s)")
        sub.reject_unknown()
        cases.append(case)
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise reader.error("cases", f"case names must be unique, got {names}")
    if sum(c.main for c in cases) > 1:
        raise reader.error("cases", "at most one case is main: true")
    noise = read_noise(reader.sub("noise", {}))
    noise_free = reader.boolean("noise_free", True)
    if not noise_free and not noise.seeds:
        raise reader.error("noise_free", "is false and there are no noise seeds: no dataset to fit")
    sample_rate = reader.frequency("sample_rate", 100.0)
    for case in cases:
        samples = case.duration * sample_rate               # inf for a duration near 1e308: refused too
        if case.scenario is None and not samples <= MAX_SAMPLES:
            raise reader.error("sample_rate", f"{sample_rate:g} Hz over the {case.duration:g} s of case "
                               f"{case.name!r} is {samples:.3g} samples, more than {MAX_SAMPLES:.0e}, the most one "
                               "case takes (each signal is held in memory for every dataset): lower sample_rate or "
                               "the duration")
    reader.reject_unknown()
    return SyntheticData(tuple(cases), noise, noise_free, truth, sample_rate)


def _read_headline(reader: ConfigReader, space: ParameterSpace, problem) -> tuple:
    section = reader.sub("headline", {})
    headline = []
    for key in list(section.data):
        entry = section.sub(key)
        metric = entry.string("metric", choices=METRICS)
        if metric == "relative_error":
            target = entry.string("parameter")
            if target not in space.names:
                raise entry.error("parameter", f"is not a free parameter (free: {', '.join(space.names)})")
        else:
            target = entry.string("body")
            needed = [f"{target}.{n}" for n in (body_inertia.PARAMETERS[4:] if metric == "inertia_relative_error"
                                                 else body_inertia.PARAMETERS[1:4])]
            if not all(n in problem.known_parameters() for n in needed):
                raise entry.error("body", f"{target!r} is not a body of the problem")
        entry.reject_unknown()
        headline.append(Headline(str(key), metric, target))
    return tuple(headline)


def load_identification_config(path: str | Path) -> IdentificationConfig:
    """Read and validate an identification file: a path, or relative to the package share
    ('config/identification/target_inertia.yaml')."""
    return read_identification_config(load_config_file(path))
