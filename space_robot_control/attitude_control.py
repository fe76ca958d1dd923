"""Reaction-wheel attitude control of the servicer bus: quaternion-error PD, wheel allocation, limits.

Control law (bus frame B = base_link, torques on the bus in N m):

    q_e = q_d^-1 (x) q,   e = sign(w_e) vec(q_e),                                   (1)
    T = -Kp e - Kd w + T_ff,                                                         (2)

q: bus orientation (base_link -> world), q_d: the setpoint, both (x, y, z, w); w: bus angular velocity
in B (rad/s); T_ff: optional feed-forward (e.g. minus the arm's reaction torque). The rotation axis of
q_e is the same in the desired and the actual frame, so e is in B; sign(w_e) takes the shorter of the two
rotations that reach the setpoint. Eq. (2) is seed 004 sec. 5.5's reaction-wheel PD
(tau_rw = k_p (A_b - A_b,des) + k_D Omega_b, there on Euler angles) written on the quaternion error, which
has no singularity (the quaternion feedback regulator of Wie, Weiss & Arapostathis 1989). For small
angles e ~ theta/2, so with Kp = 2 wn^2 I and Kd = 2 zeta wn I (I: the bus's apparent inertia) each axis
obeys theta'' + 2 zeta wn theta' + wn^2 theta = 0.

Allocation: a wheel torque tau_i (on wheel i about its spin axis a_i, as the joint torque) exerts -a_i tau_i
on the bus, so the bus receives T = -A tau_w with A = [a_1 ... a_N] (3 x N, spin axes in B read from the
model) and tau_w = -A^+ T (minimum-norm for N > 3: 4-wheel pyramid).
Limits: a wheel at its speed limit gets no torque that would spin it faster (the remaining wheels take
over when they still span 3-D, else that axis is lost); then the whole wheel-torque vector is scaled by
one factor so that no wheel exceeds its torque limit, which keeps the direction of the bus torque.
Both are reported.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import CommandError, ConfigError

_UNIT_TOLERANCE = 1e-2    # a setpoint quaternion may be off unit norm by this much (it is then normalized)


def quaternion_left_matrix(a) -> np.ndarray:
    """L(a) (4 x 4) with a (x) b = L(a) b for the Hamilton product of quaternions stored (x, y, z, w):
    the product with a fixed left factor as one matrix-vector product (the control rate's form)."""
    ax, ay, az, aw = (float(c) for c in a)
    return np.array([[aw, -az, ay, ax],
                     [az, aw, -ax, ay],
                     [-ay, ax, aw, az],
                     [-ax, -ay, -az, aw]])


def error_map(setpoint_xyzw) -> np.ndarray:
    """The 4 x 4 matrix Q with q_e = q_d^-1 (x) q = Q q (eq. 1) for the unit setpoint q_d (x, y, z, w)."""
    sx, sy, sz, sw = (float(c) for c in setpoint_xyzw)
    return quaternion_left_matrix((-sx, -sy, -sz, sw))


def quaternion_error(orientation_xyzw: np.ndarray, setpoint_xyzw: np.ndarray) -> tuple[np.ndarray, float]:
    """Eq. (1): (e, angle): shortest-path error vector (bus frame, dimensionless) and error angle (rad)."""
    ex, ey, ez, angle = _shortest_path(error_map(setpoint_xyzw).dot(np.asarray(orientation_xyzw, dtype=float)))
    return np.array([ex, ey, ez]), angle


def _shortest_path(error_xyzw: np.ndarray) -> tuple[float, float, float, float]:
    """Eq. (1) from q_e (x, y, z, w): (e_x, e_y, e_z, angle) as Python floats."""
    ex, ey, ez, ew = error_xyzw.tolist()
    sign = 1.0 if ew >= 0.0 else -1.0
    angle = 2.0 * math.atan2(math.sqrt(ex * ex + ey * ey + ez * ez), abs(ew))
    return sign * ex, sign * ey, sign * ez, angle


def unit_quaternion(quat_xyzw, field: str = "setpoint") -> np.ndarray:
    """A finite (x, y, z, w) within 1e-2 of unit norm, normalized; else CommandError naming `field`."""
    try:
        q = np.asarray(quat_xyzw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise CommandError(field, f"not a quaternion (x, y, z, w): {exc}") from exc
    if q.shape != (4,):
        raise CommandError(field, f"expected 4 values (x, y, z, w), got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise CommandError(field, f"non-finite values: {q.tolist()}")
    norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > _UNIT_TOLERANCE:
        raise CommandError(field, f"not a unit quaternion: norm {norm:.6g}")
    return q / norm


def wheel_spin_axes(model: pin.Model, bus_joint_id: int, wheel_joint_names) -> np.ndarray:
    """Spin axes (3 x N, unit vectors in the bus frame) of the wheel joints, read from the model.

    Each wheel joint must hang directly on the bus joint (the wheel housing is part of the bus), so its
    axis in the bus frame is constant: the joint's rotation axis (its motion subspace) turned by the joint
    placement. Raises ConfigError naming the wheel otherwise.
    """
    data = model.createData()
    q = pin.neutral(model)
    pin.computeJointJacobians(model, data, q)
    axes = []
    for name in wheel_joint_names:
        if not model.existJointName(name):
            raise ConfigError("reaction_wheels.joints", f"unknown joint {name!r}")
        j = model.getJointId(name)
        if model.parents[j] != bus_joint_id:
            raise ConfigError("reaction_wheels.joints", f"wheel joint {name!r} is not mounted directly on the bus "
                                                        f"(its parent is {model.names[model.parents[j]]!r})")
        joint = model.joints[j]
        column = pin.getJointJacobian(model, data, j, pin.ReferenceFrame.LOCAL)[:, joint.idx_v]
        if np.linalg.norm(column[:3]) > 1e-12 or abs(np.linalg.norm(column[3:]) - 1.0) > 1e-9:
            raise ConfigError("reaction_wheels.joints", f"wheel joint {name!r} is not a revolute joint")
        axes.append(model.jointPlacements[j].rotation @ column[3:])
    return np.array(axes).T.reshape(3, len(axes))


@dataclass(frozen=True)
class AttitudeGains:
    """Kp (N m per unit error-quaternion vector) and Kd (N m s/rad), 3 x 3 matrices in the bus frame."""

    kp: np.ndarray
    kd: np.ndarray

    @classmethod
    def from_bandwidth(cls, inertia: np.ndarray, natural_frequency: float, damping_ratio: float) -> AttitudeGains:
        """Kp = 2 wn^2 I, Kd = 2 zeta wn I: small-angle closed loop theta'' + 2 zeta wn theta' + wn^2 theta = 0
        (the factor 2 in Kp because e ~ theta/2). inertia: kg m^2, bus frame; wn: rad/s."""
        inertia = np.asarray(inertia, dtype=float)
        return cls(2.0 * natural_frequency**2 * inertia, 2.0 * damping_ratio * natural_frequency * inertia)


@dataclass
class AttitudeCommand:
    """Output of one attitude update.

    wheel_torque (N m, wheel order): joint torques on the wheels, after limits.
    body_torque (N m, bus frame): -A wheel_torque, the torque the wheels exert on the bus.
    demanded_body_torque (N m, bus frame): T of eq. (2) before limits.
    error (bus frame) and error_angle (rad): eq. (1).
    torque_scale: factor applied for the torque limit (1: none). torque_saturated: torque_scale < 1.
    speed_saturated (per wheel): the wheel is at its speed limit and was denied torque that would spin it up.
    """

    wheel_torque: np.ndarray
    body_torque: np.ndarray
    demanded_body_torque: np.ndarray
    error: np.ndarray
    error_angle: float
    torque_scale: float
    torque_saturated: bool
    speed_saturated: np.ndarray


class AttitudeController:
    """Eqs. (1)-(2) with allocation and wheel limits. spin_axes: 3 x N in the bus frame;
    max_torque (N m) and max_speed (rad/s, relative to the bus): per wheel."""

    def __init__(self, spin_axes: np.ndarray, max_torque, max_speed, gains: AttitudeGains,
                 setpoint_xyzw=None):
        self.spin_axes = np.asarray(spin_axes, dtype=float)
        n = self.spin_axes.shape[1]
        if np.linalg.matrix_rank(self.spin_axes) < 3:
            raise ConfigError("reaction_wheels.joints", f"the {n} wheel spin axes do not span 3-D: "
                                                        "no 3-axis attitude control possible")
        self.allocation = np.linalg.pinv(self.spin_axes)           # N x 3
        self.max_torque = np.broadcast_to(np.asarray(max_torque, dtype=float), (n,)).copy()
        self.max_speed = np.broadcast_to(np.asarray(max_speed, dtype=float), (n,)).copy()
        for name, limit in (("max_torque", self.max_torque), ("max_speed", self.max_speed)):
            if not np.all(limit > 0.0):
                raise ConfigError(f"reaction_wheels.{name}", f"must be > 0 for every wheel, got {limit.tolist()}")
        # The limits as Python floats: per-wheel tests on 3-4 wheels cost less in Python than in numpy.
        self._limits = tuple(zip(self.max_speed.tolist(), self.max_torque.tolist()))
        self._no_flags = np.zeros(n, dtype=bool)        # speed_saturated of every unlimited command (shared)
        self._no_flags.flags.writeable = False
        self.gains = gains
        self.setpoint = None if setpoint_xyzw is None else unit_quaternion(setpoint_xyzw)

    @property
    def gains(self) -> AttitudeGains:
        return self._gains

    @gains.setter
    def gains(self, gains: AttitudeGains) -> None:
        self._gains = gains
        # Eq. (2) and the allocation as one map (wheel_command): tau_w = -A^+ T = R [e; w; T_ff].
        self._command_map = -self.allocation @ np.hstack((-gains.kp, -gains.kd, np.eye(3)))

    @property
    def setpoint(self) -> np.ndarray | None:
        """Desired bus orientation (base_link -> world), (x, y, z, w), unit norm; None: not set yet."""
        return self._setpoint

    @setpoint.setter
    def setpoint(self, quat_xyzw) -> None:
        self._setpoint = None if quat_xyzw is None else np.asarray(quat_xyzw, dtype=float)
        self._error_map = None if quat_xyzw is None else error_map(self._setpoint)

    def set_setpoint(self, quat_xyzw) -> None:
        """Desired bus orientation (base_link -> world), (x, y, z, w). CommandError if not a unit quaternion."""
        self.setpoint = unit_quaternion(quat_xyzw)

    def allocate(self, body_torque: np.ndarray, wheel_speed: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
        """Wheel torques giving `body_torque` on the bus within the limits: (tau_w, scale, speed-saturated)."""
        tau = -self.allocation @ body_torque
        blocked = (np.abs(wheel_speed) >= self.max_speed) & (tau * wheel_speed > 0.0)
        if blocked.any():   # rare: a wheel at its speed limit
            keep = ~blocked
            tau = np.zeros_like(tau)
            if keep.any():
                axes = self.spin_axes[:, keep]
                # Remaining wheels that still span 3-D take the whole torque; otherwise the best they can.
                tau[keep] = -np.linalg.pinv(axes) @ body_torque
                spin_up = keep & (np.abs(wheel_speed) >= self.max_speed) & (tau * wheel_speed > 0.0)
                tau[spin_up] = 0.0
                blocked |= spin_up
        peak = float((np.abs(tau) / self.max_torque).max(initial=0.0))
        scale = 1.0 if peak <= 1.0 else 1.0 / peak
        return tau * scale, scale, blocked

    def update(self, orientation_xyzw: np.ndarray, angular_velocity: np.ndarray, wheel_speed: np.ndarray,
               feedforward_torque: np.ndarray | None = None) -> AttitudeCommand:
        """One control step. orientation: bus -> world (x, y, z, w); angular_velocity: rad/s, bus frame;
        wheel_speed: rad/s relative to the bus; feedforward_torque: N m, bus frame (None: none)."""
        ex, ey, ez, angle = self._error(orientation_xyzw)
        e = np.array([ex, ey, ez])
        demanded = self._demanded(e, angular_velocity, feedforward_torque)
        tau, scale, blocked = self.allocate(demanded, wheel_speed)
        return AttitudeCommand(tau, -self.spin_axes @ tau, demanded, e, angle, scale, scale < 1.0, blocked)

    def wheel_command(self, orientation_xyzw, angular_velocity, wheel_speed,
                      feedforward_torque=None) -> tuple[np.ndarray, float, bool, np.ndarray]:
        """update() for the control rate, without the fields only diagnostics need. orientation: 4 values
        (an array: no conversion); angular_velocity, feedforward_torque (None: none): lists of 3 Python
        floats; wheel_speed: a sequence of Python floats (units and frames as in update()). Returns
        (wheel_torque, error_angle, torque_saturated, speed_saturated) as in AttitudeCommand (equal to
        round-off; speed_saturated may be a shared read-only array)."""
        ex, ey, ez, angle = self._error(orientation_xyzw)
        ff = feedforward_torque if feedforward_torque is not None else (0.0, 0.0, 0.0)
        tau = self._command_map.dot(np.array((ex, ey, ez, *angular_velocity, *ff)))
        peak = 0.0
        for speed, torque, (max_speed, max_torque) in zip(wheel_speed, tau.tolist(), self._limits):
            if abs(speed) >= max_speed:      # rare: a wheel at its speed limit, see allocate()
                return self._limited_command(np.array((ex, ey, ez)), angle, angular_velocity, wheel_speed, ff)
            ratio = abs(torque) / max_torque
            if ratio > peak:
                peak = ratio
        if peak > 1.0:                       # one factor for all wheels keeps the direction of the bus torque
            return tau * (1.0 / peak), angle, True, self._no_flags
        return tau, angle, False, self._no_flags

    def _error(self, orientation_xyzw) -> tuple[float, float, float, float]:
        """Eq. (1) for the current setpoint: (e_x, e_y, e_z, angle) as Python floats."""
        if self._error_map is None:
            raise CommandError("setpoint", "no attitude setpoint: call set_setpoint() first")
        return _shortest_path(self._error_map.dot(orientation_xyzw))

    def _limited_command(self, e, angle, angular_velocity, wheel_speed, feedforward_torque):
        demanded = self._demanded(e, np.array(angular_velocity), np.array(feedforward_torque))
        tau, scale, blocked = self.allocate(demanded, np.array(list(wheel_speed)))
        return tau, angle, scale < 1.0, blocked

    def _demanded(self, e: np.ndarray, angular_velocity: np.ndarray, feedforward_torque) -> np.ndarray:
        """Eq. (2): T (N m, bus frame)."""
        demanded = -self.gains.kp @ e - self.gains.kd @ angular_velocity
        if feedforward_torque is not None:
            demanded = demanded + feedforward_torque
        return demanded
