"""Rate gyro (three axes) on a link of the servicer, usually the bus.

Sample model (Crassidis and Junkins, Optimal Estimation of Dynamic Systems, 2nd ed., sec. 7.2, the discrete gyro
simulation; Farrenkopf's model), one sample per period dt = 1 / rate:

    beta_{k+1}  = beta_k + sigma_u sqrt(dt) N_u                                     rate random walk (bias drift)
    omega_m,k+1 = A omega_{k+1} + b + (beta_{k+1} + beta_k) / 2 + sqrt(sigma_v^2 / dt + sigma_u^2 dt / 12) N_v

with N_u, N_v independent standard normal 3-vectors, sigma_v the angle random walk (rad/s^0.5), sigma_u the rate
random walk (rad/s^1.5), b the constant bias (rad/s), A = I + diag(scale_factor) + misalignment (off-diagonal
terms: the sensing axes' non-orthogonality and mounting error). The Allan deviation of this output at averaging
time tau = m dt is sqrt(sigma_v^2 / tau + sigma_u^2 tau / 3) (IEEE Std 952-1997, annex C: the -1/2 and +1/2
slopes), which test_sensing_gyro.py checks. Then saturation (|omega_m| per axis at most `saturation`) and
quantisation (a multiple of `quantisation`, rad/s per least significant bit) as the electronics apply them.

Frames: the input is the link's angular velocity relative to the world (inertial) frame, expressed in the link
frame (body rates, rad/s); the output is expressed in the sensor frame (mounting.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader, check_number

from .mounting import Mounting, read_mounting

NAME = "gyro"
# The largest scale-factor or misalignment term accepted: a gyro's are ppm to 1e-3 (0.1 %); 0.5 is already no
# gyro at all, and a larger one is a unit mistake (ppm typed as a fraction, degrees as radians)
MAX_GAIN_ERROR = 0.5


@dataclass(frozen=True)
class GyroConfig:
    rate: float                       # Hz: samples per second
    angle_random_walk: float          # rad/s^0.5 (sigma_v)
    rate_random_walk: float           # rad/s^1.5 (sigma_u)
    bias: np.ndarray                  # rad/s, sensor frame: the constant (turn-on) bias b
    scale_factor: np.ndarray          # per axis, dimensionless (1e-4 = 100 ppm)
    misalignment: np.ndarray          # 3x3, zero diagonal: A's off-diagonal terms (rad)
    saturation: float | None          # rad/s per axis, or None
    quantisation: float              # rad/s per LSB, 0: none
    mounting: Mounting

    @property
    def period(self) -> float:
        return 1.0 / self.rate

    @property
    def gain(self) -> np.ndarray:
        """A = I + diag(scale_factor) + misalignment."""
        return np.eye(3) + np.diag(self.scale_factor) + self.misalignment

    @property
    def white_variance(self) -> float:
        """Variance (rad^2/s^2) of one sample's white part per axis: sigma_v^2 / dt + sigma_u^2 dt / 12, plus the
        quantisation's q^2 / 12 (a uniform rounding error): the angular_velocity_covariance of sensor_msgs/Imu."""
        dt = self.period
        return (self.angle_random_walk ** 2 / dt + self.rate_random_walk ** 2 * dt / 12.0
                + self.quantisation ** 2 / 12.0)


def read_gyro(reader: ConfigReader) -> GyroConfig:
    saturation = reader.raw("saturation", None)
    config = GyroConfig(
        rate=reader.frequency("rate"),
        angle_random_walk=reader.number("angle_random_walk", minimum=0.0),
        rate_random_walk=reader.number("rate_random_walk", 0.0, minimum=0.0),
        bias=reader.vector("bias", 3, [0.0, 0.0, 0.0]),
        scale_factor=reader.vector("scale_factor", 3, [0.0, 0.0, 0.0], minimum=-MAX_GAIN_ERROR,
                                   maximum=MAX_GAIN_ERROR),
        misalignment=_misalignment(reader),
        saturation=None if saturation is None else reader.number("saturation", exclusive_minimum=0.0),
        quantisation=reader.number("quantisation", 0.0, minimum=0.0),
        mounting=read_mounting(reader, "base_link", "gyro_link"),
    )
    reader.reject_unknown()
    return config


def _misalignment(reader: ConfigReader) -> np.ndarray:
    """`misalignment`: three rows of three numbers (rad), zero on the diagonal."""
    rows = reader.raw("misalignment", [[0.0] * 3] * 3)
    if not (isinstance(rows, list) and len(rows) == 3 and all(isinstance(r, list) and len(r) == 3 for r in rows)):
        raise reader.error("misalignment", f"must be a 3x3 matrix (three rows of three numbers), got {rows!r}")
    matrix = np.array([[check_number(v, f"{reader.field('misalignment')}[{i}][{j}]", reader.source,
                                     minimum=-MAX_GAIN_ERROR, maximum=MAX_GAIN_ERROR)
                        for j, v in enumerate(row)] for i, row in enumerate(rows)])
    if np.any(np.diag(matrix) != 0.0):
        raise reader.error("misalignment", "its diagonal must be zero (per-axis gain errors are `scale_factor`)")
    return matrix


class Gyro:
    """One gyro; `sample` is called once per period (config.rate), in time order."""

    def __init__(self, config: GyroConfig, stream: np.random.Generator):
        self.config = config
        self._stream = stream
        self._to_sensor = config.mounting.rotation.inv().as_matrix()      # R_sensor_link
        self._gain = config.gain
        self._drift = np.zeros(3)            # beta_k, rad/s
        self.bias = config.bias.copy()       # b, rad/s (a fault may change it: add_bias)
        dt = config.period
        self._drift_step = config.rate_random_walk * np.sqrt(dt)
        self._white = np.sqrt(config.angle_random_walk ** 2 / dt + config.rate_random_walk ** 2 * dt / 12.0)

    def add_bias(self, jump: np.ndarray) -> None:
        """A bias jump (rad/s, sensor frame), e.g. a fault."""
        self.bias = self.bias + np.asarray(jump, float)

    @property
    def drift(self) -> np.ndarray:
        """beta_k (rad/s, sensor frame): the random-walk part of the bias now."""
        return self._drift.copy()

    def sample(self, omega_link: np.ndarray) -> np.ndarray:
        """The measured rate (rad/s, sensor frame) for the true body rate `omega_link` (rad/s, link frame)."""
        drift_next = self._drift + self._drift_step * self._stream.standard_normal(3)
        white = self._white * self._stream.standard_normal(3)
        omega = self._gain @ (self._to_sensor @ np.asarray(omega_link, float))
        measured = omega + self.bias + 0.5 * (self._drift + drift_next) + white
        self._drift = drift_next
        if self.config.saturation is not None:
            measured = np.clip(measured, -self.config.saturation, self.config.saturation)
        if self.config.quantisation > 0.0:
            measured = self.config.quantisation * np.round(measured / self.config.quantisation)
        return measured
