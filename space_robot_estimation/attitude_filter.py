"""Bus attitude and gyro bias: the multiplicative extended Kalman filter (MEKF) of spacecraft attitude.

Lefferts, Markley and Shuster (1982), in the form of Crassidis and Junkins, Optimal Estimation of Dynamic Systems,
2nd ed., sec. 7.2 (the discrete gyro model of space_robot_sensing/gyro.py is the one it assumes). State: the
attitude q_world_link (the link the gyro and star tracker sit on, usually base_link) and the gyro bias beta
(rad/s, link frame). Error state x = (dtheta, dbeta), body side: q_true = q_hat (x) exp(dtheta).

Propagation over dt with the gyro's rate omega_m (rad/s, link frame), omega = omega_m - beta_hat:

    q_hat <- q_hat (x) exp(omega dt)
    P <- Phi P Phi^T + Q,   Phi = [[exp(-[omega x] dt), -I dt], [0, I]]
    Q = [[(sigma_v^2 dt + sigma_u^2 dt^3 / 3) I, -(sigma_u^2 dt^2 / 2) I], [-(sigma_u^2 dt^2 / 2) I, sigma_u^2 dt I]]

Update with a star tracker solution q_m (body-side error of covariance R, link frame): innovation
y = log(q_hat^-1 (x) q_m) ~ dtheta + v, H = [I 0], the Joseph form for P, then the reset
q_hat <- q_hat (x) exp(dtheta_hat), beta_hat <- beta_hat + dbeta_hat. NIS = y^T (H P H^T + R)^-1 y.

Late measurements: a solution stamped t_s arrives after the filter has propagated past t_s. The filter keeps its
states and gyro samples over `history` seconds; it goes back to the last state at or before t_s, updates there,
and propagates again through the gyro samples since (exact, not an approximation of the delay). A solution older
than the history is refused and counted (`too_old`).

The attitude is held as the rotation matrix R_world_link; exp and log are Pinocchio's SO(3) maps (exp3, log3: ~1 us
a call, where scipy's Rotation takes ~30 us, most of the filter's cost at 100 Hz).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.config_reader import ConfigReader

from .state_history import STAMP_SLACK_S, StateHistory


@dataclass(frozen=True)
class AttitudeFilterConfig:
    angle_random_walk: float          # rad/s^0.5: the gyro's sigma_v as the filter models it
    rate_random_walk: float           # rad/s^1.5: sigma_u
    initial_attitude_sigma: float     # rad, 1 sigma per axis, of the first attitude (taken from the first solution)
    initial_bias_sigma: float         # rad/s, 1 sigma per axis, of the bias (started at zero)
    history: float                    # s: the latest a measurement may arrive


def read_attitude_filter(reader: ConfigReader) -> AttitudeFilterConfig:
    config = AttitudeFilterConfig(
        angle_random_walk=reader.number("angle_random_walk", exclusive_minimum=0.0),
        rate_random_walk=reader.number("rate_random_walk", exclusive_minimum=0.0),
        initial_attitude_sigma=reader.number("initial_attitude_sigma", exclusive_minimum=0.0),
        initial_bias_sigma=reader.number("initial_bias_sigma", exclusive_minimum=0.0),
        history=reader.number("history", 1.0, exclusive_minimum=0.0),
    )
    reader.reject_unknown()
    return config


@dataclass(frozen=True)
class AttitudeEstimate:
    """At time t (s): q_world_link (x, y, z, w), gyro bias (rad/s, link frame), rate omega_m - bias (rad/s, link
    frame), covariance 6x6 of (dtheta, dbeta) (rad^2, rad^2/s, rad^2/s^2; body side, link frame)."""

    t: float
    xyzw: np.ndarray
    bias: np.ndarray
    rate: np.ndarray
    covariance: np.ndarray


_EYE3, _EYE6 = np.eye(3), np.eye(6)


def xyzw_of(rotation: np.ndarray) -> np.ndarray:
    return pin.Quaternion(rotation).coeffs().copy()


def rotation_of(xyzw) -> np.ndarray:
    """The rotation matrix of a quaternion (x, y, z, w), normalised."""
    q = np.asarray(xyzw, float)
    return pin.Quaternion(q / np.linalg.norm(q)).toRotationMatrix()


@dataclass
class _State:
    t: float
    rotation: np.ndarray              # R_world_link
    bias: np.ndarray
    covariance: np.ndarray
    rate: np.ndarray                  # the gyro rate (link frame) that brought the filter to t; zeros at the start


class AttitudeFilter:
    """`propagate(t, omega_m)` at every gyro sample (in time order); `update(stamp, xyzw, R)` with every star
    tracker solution as it arrives, late or not (its stamp not after the last propagation)."""

    def __init__(self, config: AttitudeFilterConfig):
        self.config = config
        self._states = StateHistory(config.history)
        self._early: deque[tuple[float, np.ndarray]] = deque()     # gyro samples before the first solution
        self.last_nis: float | None = None
        self.updates = 0
        self.too_old = 0

    @property
    def initialised(self) -> bool:
        return bool(self._states)

    @property
    def latest(self) -> _State:
        """The latest state itself (t, rotation R_world_link, bias, covariance, rate: the gyro's raw rate), not a
        copy: for a reader at the estimates' rate, which must not change it."""
        return self._states.latest

    def estimate(self) -> AttitudeEstimate:
        s = self._states.latest
        return AttitudeEstimate(s.t, xyzw_of(s.rotation), s.bias.copy(), s.rate - s.bias, s.covariance.copy())

    # ---- propagation ------------------------------------------------------------------------------------------
    def propagate(self, t: float, omega_m: np.ndarray) -> None:
        """Advance to time `t` (s) with the gyro sample `omega_m` (rad/s, link frame) taken at t. Before the first
        star tracker solution there is nothing to propagate: the sample is kept (over `history`), so that a first
        solution that arrives late is propagated to now through the samples after its stamp."""
        if not self._states:
            self._early.append((t, np.asarray(omega_m, float)))
            while self._early[0][0] < t - self.config.history - STAMP_SLACK_S:
                self._early.popleft()
            return
        self._states.append(self._step(self._states.latest, t, np.asarray(omega_m, float)))

    def _step(self, s: _State, t: float, omega_m: np.ndarray) -> _State:
        dt = t - s.t
        omega = omega_m - s.bias
        step = pin.exp3(omega * dt)
        phi = _EYE6.copy()
        phi[:3, :3] = step.T                               # exp(-[omega x] dt)
        phi[:3, 3:] = -_EYE3 * dt
        sv2, su2 = self.config.angle_random_walk ** 2, self.config.rate_random_walk ** 2
        noise = np.zeros((6, 6))
        noise[:3, :3] = _EYE3 * (sv2 * dt + su2 * dt ** 3 / 3.0)
        noise[:3, 3:] = noise[3:, :3] = -_EYE3 * (su2 * dt ** 2 / 2.0)
        noise[3:, 3:] = _EYE3 * (su2 * dt)
        covariance = phi @ s.covariance @ phi.T + noise
        return _State(t, s.rotation @ step, s.bias, 0.5 * (covariance + covariance.T), omega_m)

    # ---- update -----------------------------------------------------------------------------------------------
    def update(self, stamp: float, xyzw: np.ndarray, covariance: np.ndarray) -> bool:
        """Take the solution `xyzw` (q_world_link) stamped `stamp` (s), its error covariance (rad^2, link frame,
        body side). The first solution initialises the filter. False (and counted in `too_old`) when the stamp is
        older than the history kept."""
        measured = rotation_of(xyzw)
        if not self._states:
            p0 = np.diag([self.config.initial_attitude_sigma ** 2] * 3 + [self.config.initial_bias_sigma ** 2] * 3)
            self._states.append(_State(stamp, measured, np.zeros(3), p0, np.zeros(3)))
            for t, omega_m in self._early:
                if t > stamp + STAMP_SLACK_S:
                    self._states.append(self._step(self._states.latest, t, omega_m))
            self._early.clear()
            return True
        covariance = np.asarray(covariance, float)
        if not self._states.replay(stamp, lambda s: self._corrected(s, measured, covariance),
                                   lambda previous, s: self._step(previous, s.t, s.rate)):
            self.too_old += 1
            return False
        self.updates += 1
        return True

    def _corrected(self, s: _State, measured: np.ndarray, r: np.ndarray) -> _State:
        innovation = pin.log3(s.rotation.T @ measured)
        p = s.covariance
        innovation_covariance = p[:3, :3] + r
        gain = np.linalg.solve(innovation_covariance, p[:3, :]).T              # P H^T S^-1 (S symmetric)
        self.last_nis = float(innovation @ np.linalg.solve(innovation_covariance, innovation))
        dx = gain @ innovation
        i_kh = _EYE6.copy()
        i_kh[:, :3] -= gain
        covariance = i_kh @ p @ i_kh.T + gain @ r @ gain.T                     # Joseph form
        return _State(s.t, s.rotation @ pin.exp3(dx[:3]), s.bias + dx[3:], 0.5 * (covariance + covariance.T),
                      s.rate)
