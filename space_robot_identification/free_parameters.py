"""The free parameters of an identification: names the problem knows, bounds and start values (SI units).

parameters:                       # in an identification config
  <name>: {start: S, lower: L, upper: U}     # L < U finite, L <= S <= U; start defaults to the model's value

The fits work in the scaled coordinates u = (theta - lower) / (upper - lower), in [0, 1] inside the bounds, so
Nelder-Mead's first simplex and least squares' steps have the same meaning for a stiffness of 8 N m/rad and a
mass of 1500 kg.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader


@dataclass(frozen=True)
class KnownParameter:
    """A parameter a problem can free: its value in the model (the prior), its unit, and the lowest value the model
    accepts (None: any; `exclusive`: that value itself is not accepted), which the bounds must respect."""

    value: float
    unit: str
    lowest: float | None = None
    exclusive: bool = False


@dataclass(frozen=True)
class FreeParameter:
    name: str
    start: float
    lower: float
    upper: float
    unit: str

    @property
    def width(self) -> float:
        return self.upper - self.lower


@dataclass(frozen=True)
class ParameterSpace:
    """The free parameters in their fitting order and the conversion to and from u."""

    parameters: tuple

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def lower(self) -> np.ndarray:
        return np.array([p.lower for p in self.parameters])

    @property
    def upper(self) -> np.ndarray:
        return np.array([p.upper for p in self.parameters])

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    @property
    def start(self) -> np.ndarray:
        return np.array([p.start for p in self.parameters])

    def to_unit(self, theta: np.ndarray) -> np.ndarray:
        return (np.asarray(theta, float) - self.lower) / self.width

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        return self.lower + np.asarray(u, float) * self.width

    def __len__(self) -> int:
        return len(self.parameters)


def read_free_parameters(reader: ConfigReader, known: dict) -> ParameterSpace:
    """The `parameters` mapping, checked against the problem's `known` parameters (name -> KnownParameter)."""
    raw = reader.raw("parameters")
    if not isinstance(raw, dict) or not raw:
        raise reader.error("parameters", "must be a non-empty mapping name -> {start, lower, upper}")
    section = reader.sub("parameters")
    parameters = []
    for name in raw:
        if name not in known:
            raise section.error(str(name), f"unknown parameter (the problem has: {', '.join(sorted(known))})")
        entry = section.sub(name)
        lower = entry.number("lower")
        lowest = known[name].lowest
        if lowest is not None and (lower < lowest or (known[name].exclusive and lower == lowest)):
            raise entry.error("lower", f"must be {'>' if known[name].exclusive else '>='} {lowest:.6g} "
                                       f"{known[name].unit} (the values the model accepts), got {lower:.6g}")
        upper = entry.number("upper")
        if not lower < upper:
            raise entry.error("upper", f"must be > lower ({lower}), got {upper}")
        start = entry.number("start", known[name].value)
        if not lower <= start <= upper:
            raise entry.error("start", f"{start:.6g} is outside the bounds [{lower:.6g}, {upper:.6g}]"
                                       + ("" if entry.has("start") else " (the model's value: give a start)"))
        entry.reject_unknown()
        parameters.append(FreeParameter(str(name), start, lower, upper, known[name].unit))
    return ParameterSpace(tuple(parameters))
