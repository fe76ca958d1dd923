"""Output-error identification: a simulation whose parameters are named, matched to recorded signals.

`ParameterizedSimulation` is what seed 003's identification needs of a model (sec. 4: "by changing parameters
I_m1, k1, b1, lambda1 we are able to obtain different motion of the flexible joint"): set named parameters,
run, return named outputs at given instants. The simulator's elastic-joint model implements it
(elastic_joint_simulation.py, the `elastic_joint` problem; docs/identification.md).

problem:
  kind: <a simulation kind>
  ...                                   # the simulation's own settings
  signals:
    <output>: {data: <recorded signal>, weight: W}      # W: 1 / the expected noise in the output's unit

Residuals at the recorded instants t_k of each matched signal within the window:
    r = W (y_model(t_k; theta) - y_data(t_k))           (seed 003 eq. 24 with weights)
The Jacobian is left to finite differences (fitting.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader

from .free_parameters import KnownParameter, ParameterSpace
from .recorded_signals import RecordedSignals, window_times
from .signal_comparison import SignalComparison


@runtime_checkable
class ParameterizedSimulation(Protocol):
    """A simulation whose parameters are named.

    parameters(): every parameter it can take, name -> KnownParameter (its nominal value and SI unit), e.g.
        "joint_1.stiffness" -> (8.1, "N m/rad");
    outputs(): output name -> SI unit, e.g. "joint_1.link_angle" -> "rad";
    simulate(values, times): the outputs at `times` (s from the start of the run, increasing) with the named
        parameters set to `values` (the others at their nominal values), name -> array like `times`.
    Deterministic: the same values and times give the same outputs, bit for bit.
    """

    def parameters(self) -> dict[str, KnownParameter]: ...

    def outputs(self) -> dict[str, str]: ...

    def simulate(self, values: Mapping[str, float], times: np.ndarray) -> dict[str, np.ndarray]: ...


@dataclass(frozen=True)
class MatchedSignal:
    output: str
    data: str
    weight: float


@dataclass
class SimulationProblemSpec:
    """An output-error problem as configured."""

    kind: str
    simulation: ParameterizedSimulation
    matched: tuple
    field: str = "problem"
    source: str | None = None

    def known_parameters(self) -> dict:
        return self.simulation.parameters()

    def bind(self, signals: RecordedSignals, space: ParameterSpace, start: float, end: float):
        return OutputErrorProblem(self, signals, space, start, end)


def read_matched_signals(reader: ConfigReader, outputs: dict) -> tuple:
    """signals: {OUTPUT: {data: SIGNAL, weight: W > 0}} for outputs the simulation has; at least one."""
    raw = reader.raw("signals")
    if not isinstance(raw, dict) or not raw:
        raise reader.error("signals", f"must be a non-empty mapping; the simulation's outputs: {sorted(outputs)}")
    section = reader.sub("signals")
    matched = []
    for name in raw:
        if name not in outputs:
            raise section.error(str(name), f"unknown output (the simulation has: {', '.join(sorted(outputs))})")
        entry = section.sub(name)
        matched.append(MatchedSignal(str(name), entry.string("data"), entry.number("weight", 1.0,
                                                                                   exclusive_minimum=0.0)))
        entry.reject_unknown()
    return tuple(matched)


class OutputErrorProblem:
    has_jacobian = False

    def __init__(self, spec: SimulationProblemSpec, signals: RecordedSignals, space: ParameterSpace, start: float,
                 end: float):
        self.spec = spec
        self.space = space
        self.nominal = {name: known.value for name, known in spec.simulation.parameters().items()}
        self.times, self.data = [], []
        for matched in spec.matched:
            field = f"{spec.field}.signals.{matched.output}.data"
            signals.require(matched.data, field, spec.source)
            times = window_times(signals.times(matched.data), start, end, matched.data, spec.source)
            self.times.append(times)
            self.data.append(signals.sampled(matched.data, times, field, spec.source))
        self.all_times = np.unique(np.concatenate(self.times))
        self.rows = [np.searchsorted(self.all_times, t) for t in self.times]
        self.units = spec.simulation.outputs()

    def values(self, theta: np.ndarray) -> dict:
        values = dict(self.nominal)
        values.update(zip(self.space.names, (float(x) for x in theta)))
        return values

    def outputs(self, theta: np.ndarray) -> dict:
        return self.spec.simulation.simulate(self.values(theta), self.all_times)

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        outputs = self.outputs(theta)
        return np.concatenate([m.weight * (outputs[m.output][rows] - data)
                               for m, rows, data in zip(self.spec.matched, self.rows, self.data)])

    def jacobian(self, theta: np.ndarray) -> None:
        return None

    def comparisons(self, theta: np.ndarray) -> list[SignalComparison]:
        outputs = self.outputs(theta)
        return [SignalComparison(m.output, m.output, self.units[m.output], t, outputs[m.output][rows], data, m.weight)
                for m, rows, t, data in zip(self.spec.matched, self.rows, self.times, self.data)]
