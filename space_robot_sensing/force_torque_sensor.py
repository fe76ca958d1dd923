"""Six-axis force/torque sensor at the wrist: the wrench the hand's load puts on the flange.

The signal chain (sensor frame; force in N, torque in N m about the sensor's origin):

    y_k = y_{k-1} + alpha (w_k - y_{k-1}),   alpha = 1 - exp(-2 pi f_c dt)    first-order low-pass, cut-off f_c
    w_measured = clip(y_k + bias + sigma n_k, -range, range)                  per axis

the exact discretisation of a first-order filter for a wrench held over each period (zero-order hold): a
strain-gauge sensor's electronics filter before sampling; its datasheet's noise and bias are at the output, and
the converter's range bounds what it can report. No cut-off: y_k = w_k.

`wrench_in_sensor_frame` moves a wrench given in the mounting link's frame (about the link's origin) to the sensor
frame and origin: f_s = R^T f_l, tau_s = R^T (tau_l - p x f_l), with R, p the sensor's mounting in the link.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader

from .mounting import Mounting, read_mounting

NAME = "wrist_force_torque"


@dataclass(frozen=True)
class ForceTorqueConfig:
    rate: float                       # Hz
    force_noise: float                # N, 1 sigma per axis
    torque_noise: float               # N m, 1 sigma per axis
    force_bias: np.ndarray            # N, sensor frame
    torque_bias: np.ndarray           # N m, sensor frame
    cutoff_frequency: float | None    # Hz, or None: no filter
    force_range: float | None         # N per axis, or None: no saturation
    torque_range: float | None        # N m per axis
    mounting: Mounting

    @property
    def noise(self) -> np.ndarray:
        return np.array([self.force_noise] * 3 + [self.torque_noise] * 3)

    @property
    def bias(self) -> np.ndarray:
        return np.concatenate([self.force_bias, self.torque_bias])

    @property
    def alpha(self) -> float:
        if self.cutoff_frequency is None:
            return 1.0
        return 1.0 - math.exp(-2.0 * math.pi * self.cutoff_frequency / self.rate)


def read_force_torque(reader: ConfigReader) -> ForceTorqueConfig:
    def optional_positive(key: str) -> float | None:
        return None if reader.raw(key, None) is None else reader.number(key, exclusive_minimum=0.0)

    rate = reader.frequency("rate")
    cutoff = optional_positive("cutoff_frequency")
    if cutoff is not None and cutoff >= rate / 2.0:
        raise reader.error("cutoff_frequency", f"must be below the Nyquist frequency rate / 2 = {rate / 2.0:g} Hz, "
                                               f"got {cutoff:g} Hz (or leave it out: no filter)")
    config = ForceTorqueConfig(
        rate=rate, force_noise=reader.number("force_noise", 0.0, minimum=0.0),
        torque_noise=reader.number("torque_noise", 0.0, minimum=0.0),
        force_bias=reader.vector("force_bias", 3, [0.0, 0.0, 0.0]),
        torque_bias=reader.vector("torque_bias", 3, [0.0, 0.0, 0.0]),
        cutoff_frequency=cutoff, force_range=optional_positive("force_range"),
        torque_range=optional_positive("torque_range"), mounting=read_mounting(reader, "right_hand", "ft_sensor_link"))
    reader.reject_unknown()
    return config


def wrench_in_sensor_frame(mounting: Mounting, force_link: np.ndarray, torque_link: np.ndarray) -> np.ndarray:
    """(f_s, tau_s) stacked (6,): a wrench given in the mounting link's frame, torque about the link's origin."""
    r_t = mounting.matrix.T
    f = np.asarray(force_link, float)
    p = mounting.position
    moment = np.array([p[1] * f[2] - p[2] * f[1], p[2] * f[0] - p[0] * f[2], p[0] * f[1] - p[1] * f[0]])   # p x f
    return np.concatenate([r_t @ f, r_t @ (np.asarray(torque_link, float) - moment)])


class ForceTorqueSensor:
    """`sample(w)` once per period: the measured wrench (6,) for the true one w (6,), both in the sensor frame."""

    def __init__(self, config: ForceTorqueConfig, stream: np.random.Generator):
        self.config = config
        self._stream = stream
        self._alpha = config.alpha
        self._noise, self._bias = config.noise, config.bias
        self._range = np.array([config.force_range or np.inf] * 3 + [config.torque_range or np.inf] * 3)
        self._filtered: np.ndarray | None = None       # y_{k-1}; the first sample starts the filter at w_0

    def sample(self, wrench: np.ndarray) -> np.ndarray:
        wrench = np.asarray(wrench, float)
        if self._filtered is None:
            self._filtered = wrench.copy()
        else:
            self._filtered = self._filtered + self._alpha * (wrench - self._filtered)
        measured = self._filtered + self._bias + self._noise * self._stream.standard_normal(6)
        return np.clip(measured, -self._range, self._range)
