"""The target's relative pose and twist from the relative pose sensor: an EKF with the torque-free rigid body.

State (world axes, relative to the servicer's bus origin): r, the target's centre of mass minus the bus origin
(m); v = dr/dt (m/s); R_world_target (the measured target frame's attitude); omega, the target's body rate (rad/s,
target frame). Error state x = (dr, dv, dtheta, domega), 12, dtheta on the body side (R = R_hat exp(dtheta)).

Model (the target is free: no force, no torque):
- translation: r' = v, v' = w_a, with w_a white (sigma_a, m/s^2): the servicer's bus is pushed around by its arm
  and this frame moves with it, which the filter does not model; sigma_a covers it;
- rotation: R' = R [omega x]; J omega' = -omega x J omega + w_alpha (Euler's torque-free equations; w_alpha
  white, sigma_alpha rad/s^2 per axis: errors of the configured inertia J).

Propagation: omega by one RK4 step of Euler's equations, R <- R exp(omega_mid dt) (exp at the RK4's mid-step
rate), the covariance through Phi = I + F dt + F^2 dt^2 / 2 with F the error dynamics:
    d(dr)' = dv;  d(dv)' = w_a;  d(dtheta)' = -[omega x] dtheta + domega;
    d(domega)' = J^-1 ([J omega x] - [omega x] J) domega + J^-1 w_alpha.

Measurement (relative_pose_sensor.py): the target frame's pose in the sensor frame C, mounted on the bus at
(p_BC, R_BC), with the bus attitude R_WB known (the attitude filter's, or the truth): in world axes the frame's
origin is at r_f = R_WB (p_BC + R_BC p_CT) and its attitude R_WT = R_WB R_BC R_CT. The frame's origin is
r + R c (c: the frame's origin from the CoM, target frame); so the innovation is
    (r_f - r_hat - R_hat c,  log(R_hat^T R_WT,measured)),
H = [[I, 0, -R_hat [c x], 0], [0, 0, I, 0]], and the sensor's covariance (position in C, rotation about C's axes)
moved to world axes and to the target's body side. The bus attitude's own error is not added (a star tracker's
1e-4 rad is 0.3 mm at 3 m, against centimetres of the pose sensor).

Latency and dropouts: states are kept over `history` seconds; a measurement is applied at its stamp and the
filter propagates again to now; without measurements it predicts (the covariance grows). The first measurement
initialises r and R; v and omega start at zero with `initial_velocity_sigma` and `initial_rate_sigma`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from space_robot_dynamics.config_reader import ConfigReader

from .attitude_filter import rotation_of, xyzw_of
from .state_history import StateHistory

_EYE3 = np.eye(3)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of two 3-vectors (np.cross costs ~10 us on such small arrays, most of a prediction step)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


@dataclass(frozen=True)
class TargetFilterConfig:
    inertia: np.ndarray               # kg m^2, 3x3, target frame, about the CoM
    com: np.ndarray                   # m, the CoM in the target frame (c = -com: the frame's origin from the CoM)
    acceleration_noise: float         # m/s^2, sigma_a
    angular_acceleration_noise: float  # rad/s^2, sigma_alpha
    initial_velocity_sigma: float     # m/s
    initial_rate_sigma: float         # rad/s
    history: float                    # s
    prediction_step: float = 0.01     # s: the longest step the filter predicts by (estimate_at extrapolates within)


def read_target_filter(reader: ConfigReader, allow_model: bool = False) -> TargetFilterConfig:
    """`allow_model`: `inertia` and `com` may be `model` (estimators_config.py): left None here, for whoever
    builds the filter with the model at hand (with_model_inertia)."""
    if allow_model and reader.raw("inertia", "model") == "model":
        j = None
    else:
        j = _inertia_matrix(reader, reader.vector("inertia", 6))      # ixx, ixy, ixz, iyy, iyz, izz (URDF order)
    if allow_model and reader.raw("com", "model") == "model":
        com = None
    else:
        com = reader.vector("com", 3, [0.0, 0.0, 0.0])
    config = TargetFilterConfig(
        inertia=j, com=com,
        acceleration_noise=reader.number("acceleration_noise", exclusive_minimum=0.0),
        angular_acceleration_noise=reader.number("angular_acceleration_noise", exclusive_minimum=0.0),
        initial_velocity_sigma=reader.number("initial_velocity_sigma", exclusive_minimum=0.0),
        initial_rate_sigma=reader.number("initial_rate_sigma", exclusive_minimum=0.0),
        history=reader.number("history", 2.0, exclusive_minimum=0.0),
        prediction_step=reader.number("prediction_step", 0.01, exclusive_minimum=0.0))
    reader.reject_unknown()
    return config


def _inertia_matrix(reader: ConfigReader, inertia: np.ndarray) -> np.ndarray:
    j = np.array([[inertia[0], inertia[1], inertia[2]], [inertia[1], inertia[3], inertia[4]],
                  [inertia[2], inertia[4], inertia[5]]])
    eigenvalues = np.linalg.eigvalsh(j)
    if eigenvalues[0] <= 0.0 or eigenvalues[0] + eigenvalues[1] < eigenvalues[2] * (1.0 - 1e-12):
        raise reader.error("inertia", f"is not the inertia of a body (principal moments {np.round(eigenvalues, 6)}"
                                      " must be positive and satisfy the triangle inequality)")
    return j


def with_model_inertia(config: TargetFilterConfig, inertia: np.ndarray, com: np.ndarray) -> TargetFilterConfig:
    """`config` with the inertia (kg m^2, about the CoM, target frame) and CoM (m, target frame) it left to the
    model filled in from the model's."""
    return replace(config, inertia=np.asarray(inertia, float) if config.inertia is None else config.inertia,
                   com=np.asarray(com, float) if config.com is None else config.com)


@dataclass(frozen=True)
class TargetEstimate:
    """At time t (s): the target frame's origin relative to the bus origin (m, world axes), the CoM's (m), their
    velocity... see fields. covariance: 12x12 of (dr, dv, dtheta, domega) as the module docstring says."""

    t: float
    com_position: np.ndarray          # m, world axes, from the bus origin
    velocity: np.ndarray              # m/s, world axes, of the CoM
    frame_position: np.ndarray        # m, world axes: the target frame's origin
    xyzw: np.ndarray                  # R_world_target
    rate: np.ndarray                  # rad/s, target frame
    covariance: np.ndarray
    frame_velocity: np.ndarray | None = None    # m/s, world axes: the target frame origin's (estimate_at's)
    rotation: np.ndarray | None = None          # R_world_target as a matrix (estimate_at's)


@dataclass
class _State:
    t: float
    r: np.ndarray
    v: np.ndarray
    rotation: np.ndarray
    omega: np.ndarray
    covariance: np.ndarray


class TargetFilter:
    """`predict(t)` at the filter's rate (in time order); `update(stamp, ...)` with each pose measurement as it
    arrives."""

    def __init__(self, config: TargetFilterConfig):
        self.config = config
        self._j = config.inertia
        self._j_inv = np.linalg.inv(config.inertia)
        self._c = -np.asarray(config.com, float)          # the frame's origin from the CoM, target frame
        self._states = StateHistory(config.history)
        self.last_nis: float | None = None
        self.updates = 0
        self.too_old = 0

    @property
    def initialised(self) -> bool:
        return bool(self._states)

    def estimate(self) -> TargetEstimate:
        s = self._states.latest
        return TargetEstimate(s.t, s.r.copy(), s.v.copy(), s.r + s.rotation @ self._c, xyzw_of(s.rotation),
                              s.omega.copy(), s.covariance.copy())

    def restart(self, t: float, frame_position: np.ndarray, xyzw: np.ndarray, velocity: np.ndarray,
                rate: np.ndarray, covariance: np.ndarray) -> None:
        """Start again at time t (s) from a state known otherwise (the held target's on release: held_target.py):
        the frame's origin (m, world axes, from the bus origin), R_world_target, the CoM's velocity (m/s, world
        axes), the body rate (rad/s, target frame), and a 12x12 covariance as the module docstring's. The history
        is dropped: measurements stamped before t are refused."""
        rotation = rotation_of(xyzw)
        self._states = StateHistory(self.config.history)
        self._states.append(_State(t, np.asarray(frame_position, float) - rotation @ self._c,
                                   np.asarray(velocity, float), rotation, np.asarray(rate, float),
                                   np.asarray(covariance, float)))

    # ---- propagation ------------------------------------------------------------------------------------------
    def predict(self, t: float) -> None:
        """Advance to `t` (s); nothing before the first measurement, nor to a time not after the latest state's."""
        if not self._states or t <= self._states.latest.t:
            return
        self._states.append(self._step(self._states.latest, t))

    def estimate_at(self, t: float) -> TargetEstimate:
        """The estimate at `t` (s): the filter predicts to the last whole prediction_step at or before t, and
        extrapolates from there at constant velocity and rate (a step of at most 10 ms at 0.07 rad/s turns the
        rate's direction by ~1e-5 rad: below any pose sensor's noise); the covariance is that of the predicted
        state (the filter's own array, not a copy: read it, do not change it). A filter predicted at 1 kHz would
        spend most of a 1 kHz graph's time in its 12x12 products."""
        latest = self._states.latest.t
        if t - latest >= self.config.prediction_step:
            self.predict(latest + self.config.prediction_step * ((t - latest) // self.config.prediction_step))
        s = self._states.latest
        dt = t - s.t
        rotation = s.rotation @ pin.exp3(s.omega * dt)
        r = s.r + s.v * dt
        return TargetEstimate(t, r, s.v.copy(), r + rotation @ self._c, xyzw_of(rotation), s.omega.copy(),
                              s.covariance, s.v + rotation @ _cross(s.omega, self._c), rotation)

    def _euler(self, omega: np.ndarray) -> np.ndarray:
        return self._j_inv @ -_cross(omega, self._j @ omega)

    def _step(self, s: _State, t: float) -> _State:
        dt = t - s.t
        w = s.omega
        k1 = self._euler(w)
        k2 = self._euler(w + 0.5 * dt * k1)
        k3 = self._euler(w + 0.5 * dt * k2)
        k4 = self._euler(w + dt * k3)
        omega = w + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        mid = w + 0.5 * dt * k2                               # RK4's estimate of the mid-step rate
        f = np.zeros((12, 12))
        f[0:3, 3:6] = _EYE3
        f[6:9, 6:9] = -pin.skew(w)
        f[6:9, 9:12] = _EYE3
        f[9:12, 9:12] = self._j_inv @ (pin.skew(self._j @ w) - pin.skew(w) @ self._j)
        phi = np.eye(12) + f * dt + f @ f * (dt * dt / 2.0)
        sa2, sw2 = self.config.acceleration_noise ** 2, self.config.angular_acceleration_noise ** 2
        noise = np.zeros((12, 12))
        noise[0:3, 0:3] = _EYE3 * sa2 * dt ** 3 / 3.0           # white acceleration (Bar-Shalom sec. 6.2.2)
        noise[0:3, 3:6] = noise[3:6, 0:3] = _EYE3 * sa2 * dt ** 2 / 2.0
        noise[3:6, 3:6] = _EYE3 * sa2 * dt
        noise[6:9, 6:9] = _EYE3 * sw2 * dt ** 3 / 3.0           # white angular acceleration, the same way
        noise[6:9, 9:12] = noise[9:12, 6:9] = _EYE3 * sw2 * dt ** 2 / 2.0
        noise[9:12, 9:12] = _EYE3 * sw2 * dt
        covariance = phi @ s.covariance @ phi.T + noise
        return _State(t, s.r + s.v * dt, s.v, s.rotation @ pin.exp3(mid * dt), omega,
                      0.5 * (covariance + covariance.T))

    # ---- update -----------------------------------------------------------------------------------------------
    def update(self, stamp: float, frame_position: np.ndarray, xyzw: np.ndarray, position_variance: float,
               attitude_variance: float, rotation_world_sensor: np.ndarray) -> bool:
        """A measurement stamped `stamp` (s): the target frame's origin (m, world axes, from the bus origin) and
        attitude R_world_target (x, y, z, w), from a sensor whose frame is at R_world_sensor and whose errors are
        `position_variance` (m^2, isotropic) and `attitude_variance` (rad^2 about each of the sensor's axes).
        (pose_measurement_in_world turns a PoseMeasurement into these.) False when older than the history."""
        measured = rotation_of(xyzw)
        frame_position = np.asarray(frame_position, float)
        if not self._states:
            p0 = np.diag([position_variance] * 3 + [self.config.initial_velocity_sigma ** 2] * 3
                         + [attitude_variance] * 3 + [self.config.initial_rate_sigma ** 2] * 3)
            self._states.append(_State(stamp, frame_position - measured @ self._c, np.zeros(3), measured,
                                       np.zeros(3), p0))
            return True
        if not self._states.replay(
                stamp, lambda s: self._corrected(s, frame_position, measured, position_variance, attitude_variance,
                                                 np.asarray(rotation_world_sensor, float)),
                lambda previous, s: self._step(previous, s.t)):
            self.too_old += 1
            return False
        self.updates += 1
        return True

    def _corrected(self, s: _State, frame_position, measured, position_variance, attitude_variance,
                   rotation_world_sensor) -> _State:
        arm = s.rotation @ self._c
        innovation = np.concatenate([frame_position - s.r - arm, pin.log3(s.rotation.T @ measured)])
        h = np.zeros((6, 12))
        h[0:3, 0:3] = _EYE3
        h[0:3, 6:9] = -s.rotation @ pin.skew(self._c)
        h[3:6, 6:9] = _EYE3
        body_from_sensor = s.rotation.T @ rotation_world_sensor
        r = np.zeros((6, 6))
        r[0:3, 0:3] = _EYE3 * position_variance
        r[3:6, 3:6] = body_from_sensor @ (_EYE3 * attitude_variance) @ body_from_sensor.T
        p = s.covariance
        innovation_covariance = h @ p @ h.T + r
        gain = np.linalg.solve(innovation_covariance, h @ p).T
        self.last_nis = float(innovation @ np.linalg.solve(innovation_covariance, innovation))
        dx = gain @ innovation
        i_kh = np.eye(12) - gain @ h
        covariance = i_kh @ p @ i_kh.T + gain @ r @ gain.T
        return _State(s.t, s.r + dx[0:3], s.v + dx[3:6], s.rotation @ pin.exp3(dx[6:9]), s.omega + dx[9:12],
                      0.5 * (covariance + covariance.T))


def pose_measurement_in_world(position_sensor: np.ndarray, xyzw_sensor: np.ndarray, rotation_world_bus: np.ndarray,
                              mounting_position: np.ndarray, mounting_rotation: np.ndarray):
    """(frame position from the bus origin, world axes; R_world_target as x, y, z, w; R_world_sensor) of a pose
    measured in the sensor frame C (p_CT, q_CT), for a bus at attitude R_world_bus and a sensor mounted at
    (p_BC, R_BC) on it."""
    rotation_world_sensor = rotation_world_bus @ mounting_rotation
    position = rotation_world_bus @ (mounting_position + mounting_rotation @ np.asarray(position_sensor, float))
    return position, xyzw_of(rotation_world_sensor @ rotation_of(xyzw_sensor)), rotation_world_sensor
