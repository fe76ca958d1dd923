"""Joint encoders (arm joint angles) and wheel tachometers (wheel speeds relative to the bus).

Each channel reports y = r round((x + sigma n) / r): the true value x plus white noise (sigma, 1 sigma per
sample, n standard normal), quantised to the resolution r (an encoder's 2 pi / counts per revolution; a
tachometer's speed per count; r = 0: not quantised). Quantisation adds an error of variance r^2 / 12 (uniform
over one count when the noise spans several counts; less, and correlated with x, when it does not: a fine
encoder with no noise is a staircase). `variance` gives sigma^2 + r^2 / 12, the figure a filter should take.

Units: rad for encoders, rad/s for tachometers; the joints' own coordinates (what joint_states carries).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader

ENCODERS = "joint_encoders"
TACHOMETERS = "wheel_tachometers"


@dataclass(frozen=True)
class ChannelConfig:
    rate: float                       # Hz
    noise: float                      # rad (encoders) or rad/s (tachometers), 1 sigma
    resolution: float                 # the same unit per count; 0: not quantised
    joints: tuple[str, ...] | None    # None: every arm joint (encoders) or every wheel (tachometers)

    @property
    def variance(self) -> float:
        return self.noise ** 2 + self.resolution ** 2 / 12.0


def read_encoders(reader: ConfigReader) -> ChannelConfig:
    """`counts_per_revolution` (an integer >= 1; absent: not quantised) sets the resolution, 2 pi / counts."""
    counts = reader.integer("counts_per_revolution", 0, minimum=1) if reader.has("counts_per_revolution") else 0
    return _read(reader, "noise", 2.0 * math.pi / counts if counts else 0.0)


def read_tachometers(reader: ConfigReader) -> ChannelConfig:
    return _read(reader, "noise", reader.number("resolution", 0.0, minimum=0.0))


def _read(reader: ConfigReader, noise_key: str, resolution: float) -> ChannelConfig:
    joints = reader.string_list("joints") if reader.has("joints") else None
    config = ChannelConfig(rate=reader.frequency("rate"), noise=reader.number(noise_key, 0.0, minimum=0.0),
                           resolution=resolution, joints=None if joints is None else tuple(joints))
    reader.reject_unknown()
    return config


class QuantisedChannels:
    """`sample(x)` once per period: the measured values of the true values x (one per joint, in order)."""

    def __init__(self, config: ChannelConfig, stream: np.random.Generator):
        self.config = config
        self._stream = stream

    def sample(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, float)
        measured = values + self.config.noise * self._stream.standard_normal(values.shape)
        if self.config.resolution > 0.0:
            measured = self.config.resolution * np.round(measured / self.config.resolution)
        return measured
