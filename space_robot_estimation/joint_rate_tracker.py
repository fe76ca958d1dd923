"""Joint angles and rates from the arm's encoders: a steady-state alpha-beta tracker per joint.

A finite difference of encoder counts is no rate: at 1 kHz a 2^19-count encoder's count (1.2e-5 rad) is a
0.012 rad/s step. The tracker is the steady-state Kalman filter of a constant-velocity model with white
acceleration held over each period (sigma_w, rad/s^2) and white measurement noise (sigma_v, rad: the encoder's
noise and quantisation, sqrt(sigma^2 + r^2 / 12)); its gains follow from the tracking index
Lambda = sigma_w T^2 / sigma_v (Kalata 1984, "The tracking index", IEEE TAES 20(2), eqs. 19-20 and 23):

    alpha = -(L^2 + 8 L - (L + 4) sqrt(L^2 + 8 L)) / 8,      beta = (L^2 + 4 L - L sqrt(L^2 + 8 L)) / 4
    predict: x <- x + T v;   correct: x <- x + alpha (z - x), v <- v + (beta / T) (z - x)

with the steady-state error covariance (after the correction, Kalata eq. 24)
    P_xx = alpha sigma_v^2,  P_xv = beta sigma_v^2 / T,  P_vv = beta (2 alpha - beta) / (2 (1 - alpha)) sigma_v^2 / T^2

which `steady_covariance` gives (and test_joint_rate_tracker.py checks by simulation). Wheel speeds need no
tracker: a tachometer measures the rate itself, and its reading is the estimate (variance sigma^2 + r^2 / 12,
joint_encoders.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AlphaBetaGains:
    alpha: float
    beta: float
    period: float                     # s
    measurement_sigma: float          # rad

    @classmethod
    def from_noise(cls, period: float, acceleration_sigma: float, measurement_sigma: float) -> AlphaBetaGains:
        """Kalata's gains for sampling period T (s), white acceleration sigma_w (rad/s^2), noise sigma_v (rad)."""
        if not (period > 0.0 and acceleration_sigma > 0.0 and measurement_sigma > 0.0):
            raise ValueError("period, acceleration_sigma and measurement_sigma must be > 0, got "
                             f"{period}, {acceleration_sigma}, {measurement_sigma}")
        lam = acceleration_sigma * period ** 2 / measurement_sigma
        root = math.sqrt(lam * lam + 8.0 * lam)
        alpha = -(lam * lam + 8.0 * lam - (lam + 4.0) * root) / 8.0
        beta = (lam * lam + 4.0 * lam - lam * root) / 4.0
        return cls(alpha, beta, period, measurement_sigma)

    def steady_covariance(self) -> np.ndarray:
        """2x2 covariance of (angle, rate) errors after a correction, in steady state."""
        a, b, t, s2 = self.alpha, self.beta, self.period, self.measurement_sigma ** 2
        return np.array([[a * s2, b * s2 / t], [b * s2 / t, b * (2.0 * a - b) / (2.0 * (1.0 - a)) * s2 / t ** 2]])


class JointRateTracker:
    """One alpha-beta tracker per joint: `correct(z)` once per encoder sample, in order; `angles`, `rates`."""

    def __init__(self, gains: AlphaBetaGains, joints: int):
        self.gains = gains
        self.angles: np.ndarray | None = None      # rad, after the last correction
        self.rates = np.zeros(joints)              # rad/s

    def correct(self, measured: np.ndarray) -> None:
        z = np.asarray(measured, float)
        if self.angles is None:                     # the first sample: the angle measured, the rate unknown (0)
            self.angles = z.copy()
            return
        g = self.gains
        predicted = self.angles + g.period * self.rates
        residual = z - predicted
        self.angles = predicted + g.alpha * residual
        self.rates = self.rates + (g.beta / g.period) * residual
