"""Measurement noise added to recorded signals, from named seeds, for studies on synthetic data.

noise:
  seeds: [1, 2, 3]                    # one noisy copy of every dataset per seed (numpy default_rng(seed))
  sigma:                              # standard deviations, SI units; keys are signal names or fnmatch patterns
    "joint_states.position.right_j*": 1.0e-4       # rad: white Gaussian noise, independent per sample
    "base/odom.orientation": 1.0e-4                # rad: a Quaternion key (topic.orientation) rotates the
                                                   # recorded attitude by exp([w]x) with w ~ N(0, sigma^2 I),
                                                   # in the child frame, so it stays a unit quaternion
Every key must match a signal of the data. Draws go signal by signal in sorted name order, so a seed gives the
same noise whatever the order of the configuration.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader, check_number
from space_robot_dynamics.errors import ConfigError

from .recorded_signals import RecordedSignals


@dataclass(frozen=True)
class NoiseModel:
    seeds: tuple
    sigma: dict                       # key (name or pattern) -> standard deviation
    field: str = "synthetic_data.noise"
    source: str | None = None

    def apply(self, signals: RecordedSignals, seed: int) -> RecordedSignals:
        """A noisy copy of `signals` for `seed`. ConfigError naming the key that matches no signal."""
        import pinocchio as pin

        noisy = signals.copy()
        scalar: dict[str, float] = {}
        rotations: dict[str, float] = {}
        names = signals.names()
        for key, sigma in self.sigma.items():
            quaternion = [f"{key}.{axis}" for axis in "xyzw"]
            if all(signals.has(n) for n in quaternion):
                rotations[key] = sigma
                continue
            matched = fnmatch.filter(names, key)
            if not matched:
                raise ConfigError(f"{self.field}.sigma.{key}", f"matches no signal of the data ({signals.source})",
                                  self.source)
            for name in matched:
                scalar.setdefault(name, sigma)
        rng = np.random.default_rng(seed)
        for name in sorted(set(scalar) | set(rotations)):
            if name in rotations:
                columns = [f"{name}.{axis}" for axis in "xyzw"]
                t = signals.times(columns[0])
                quats = np.column_stack([signals.values(c) for c in columns])
                turns = rng.normal(0.0, rotations[name], size=(len(t), 3))
                out = np.array([(pin.Quaternion(q[3], q[0], q[1], q[2]) * pin.Quaternion(pin.exp3(w))).coeffs()
                                for q, w in zip(quats, turns)])
                for i, column in enumerate(columns):
                    noisy.with_series(column, t, out[:, i])
            else:
                values = signals.values(name)
                noisy.with_series(name, signals.times(name), values + rng.normal(0.0, scalar[name], values.shape))
        noisy.source = f"{signals.source} + noise seed {seed}"
        return noisy


def read_noise(reader: ConfigReader) -> NoiseModel:
    seeds = reader.raw("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                              for s in seeds) or len(set(seeds)) != len(seeds):
        raise reader.error("seeds", f"must be a list of distinct integers >= 0, got {seeds!r}")
    raw = reader.raw("sigma", {})
    if not isinstance(raw, dict):
        raise reader.error("sigma", "must be a mapping signal name or pattern -> standard deviation")
    sigma = {str(k): check_number(v, reader.field(f"sigma.{k}"), reader.source, minimum=0.0) for k, v in raw.items()}
    if seeds and not sigma:
        raise reader.error("sigma", "is empty: give the noise of the signals (or no seeds)")
    reader.reject_unknown()
    return NoiseModel(tuple(seeds), sigma, reader.path, reader.source)
