"""Synthetic data of an identification study: recorded runs of scenarios, or the problem's own simulation.

A case with a `scenario` is run by the standalone runtime exactly as `space-robot-sim` runs it (the scenario's
model is the truth), recorded in <out>/synthetic/<case>/ (a complete space-robot-sim output: bag, summary.json),
and read back from the bag as `--data` would be. A case with `truth` is the problem's ParameterizedSimulation
at those values, sampled at `synthetic_data.sample_rate`, its outputs named as the matched signals' data. Each
gives a noise-free dataset (unless noise_free: false) and one noisy copy per noise seed.
Every scenario is loaded and checked when this is built, before anything runs.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from space_robot_dynamics.errors import ConfigError
from space_robot_identification.identification_config import Case, IdentificationConfig
from space_robot_identification.identification_study import Dataset
from space_robot_identification.recorded_signals import RecordedSignals

from .recorded_data import read_bag_signals

SYNTHETIC_DIRECTORY = "synthetic"


class RunFailed(RuntimeError):
    """A scenario run did not complete (diverged, interrupted, internal error)."""


class SyntheticDatasets:
    """The datasets of a config's synthetic_data section, case by case."""

    def __init__(self, config: IdentificationConfig):
        from space_robot_runtime.simulation_run import SimulationRun
        from space_robot_scenario import load_scenario, parse_overrides

        self.config = config
        self.runs = {}
        synthetic = config.synthetic
        for case in synthetic.cases:
            if case.scenario is None:
                continue
            origin = f"{config.source}: {case.field}.set"
            overrides = parse_overrides([f"{key}={json.dumps(value)}" for key, value in case.overrides.items()],
                                        origin)
            try:
                scenario = load_scenario(case.scenario, overrides)
                run = SimulationRun(scenario)
                run.ticks_for(case.duration)
            except ConfigError as exc:
                raise ConfigError(f"{case.field}.scenario", str(exc), config.source) from None
            self.runs[case.name] = run

    def dataset_counts(self) -> tuple[int, int]:
        """(noise-free, noisy) datasets over all cases."""
        synthetic = self.config.synthetic
        return len(synthetic.cases) * int(synthetic.noise_free), len(synthetic.cases) * len(synthetic.noise.seeds)

    def datasets(self, case: Case, staging: Path, stop=None) -> list[Dataset]:
        """The datasets of `case` (noise-free first, then by noise seed)."""
        synthetic = self.config.synthetic
        if case.scenario is not None:
            signals, truth = self._recorded(case, staging, stop)
        else:
            signals, truth = self._simulated(case)
        out = [Dataset(case.name, None, signals, truth)] if synthetic.noise_free else []
        out += [Dataset(case.name, seed, synthetic.noise.apply(signals, seed), truth) for seed in synthetic.noise.seeds]
        return out

    def _recorded(self, case: Case, staging: Path, stop) -> tuple[RecordedSignals, dict]:
        from space_robot_runtime.output_directory import OutputDirectory

        run = self.runs[case.name]
        folder = staging / SYNTHETIC_DIRECTORY
        folder.mkdir(exist_ok=True)
        result = run.run(duration=case.duration, plots=False, progress=False, stop=stop,
                         output=OutputDirectory(folder / case.name))
        if not result.complete:
            raise RunFailed(f"case {case.name}: the scenario run stopped at t = {result.status.simulated_time:.3f} s: "
                            f"{result.status.reason}")
        problem = self.config.problem
        truth = {name: known.value for name, known in problem.known_parameters().items()}
        truth.update(problem.parameter_values(run.system))
        return read_bag_signals(result.bag), truth

    def _simulated(self, case: Case) -> tuple[RecordedSignals, dict]:
        problem, synthetic = self.config.problem, self.config.synthetic
        truth = {name: known.value for name, known in problem.known_parameters().items()}
        truth.update(synthetic.truth)
        truth.update(case.truth)
        step = 1.0 / synthetic.sample_rate
        times = np.arange(int(np.floor(case.duration * synthetic.sample_rate + 1e-9)) + 1) * step
        outputs = problem.simulation.simulate(truth, times)
        signals = RecordedSignals(source=f"the {problem.kind} simulation, case {case.name}")
        for matched in problem.matched:
            signals.with_series(matched.data, times, outputs[matched.output])
        for name, values in outputs.items():
            if not signals.has(name):
                signals.with_series(name, times, values)
        return signals, truth
