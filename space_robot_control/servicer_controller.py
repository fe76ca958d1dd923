"""The servicer's controller: arm trajectory tracking by computed torque on the free-floating system, and
bus attitude hold by the reaction wheels; each mode on or off by configuration (default: both).

One update (all quantities at time t, from the full model state (q, v)):
1. reference (q_d, qdot_d, qddot_d) from the trajectory follower (holds the first measured pose until a
   trajectory arrives);
2. desired arm acceleration a* = qddot_d + Kd (qdot_d - qdot) + Kp (q_d - q), Kp = wn^2, Kd = 2 zeta wn
   (seed 004 eq. 6.6 with S selecting the arm joints): error dynamics e'' + 2 zeta wn e' + wn^2 e = 0;
3. the reduced dynamics of computed_torque.py (eqs. 1-3 there), which eliminate base, wheels and target;
4. attitude: feed-forward T_ff = -K^-1 alpha_0, where alpha_0 (bus frame) is the bus angular acceleration
   that a* and the velocity terms would cause with idle wheels (eq. 1 there) and K the block of M_pp^-1
   mapping a torque on the bus to its angular acceleration; then the quaternion PD and wheel allocation of
   attitude_control.py. Without saturation the bus then obeys the PD alone: alpha = K T_pd;
5. arm torques by eq. 2 there, with the wheel torques of step 4 in the model of what happens; clipped to
   the URDF effort limits (reported; the feed-forward of step 4 then assumed an acceleration the arm
   does not reach, so the attitude loop sees a disturbance its feedback has to take).
With `joint_tracking` off the arm gets zero torque and is modelled as passive; with `attitude_hold` off
the wheels get zero torque.
Steps 3-5 run as computed_torque.ComputedTorqueStep (eqs. 4-5 there: one Cholesky factorization per
update, K^-1 read off the factor), which gives the same torques as ReducedDynamics to round-off.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .attitude_control import AttitudeController, AttitudeGains, quaternion_multiply, wheel_spin_axes
from .computed_torque import ComputedTorqueStep, FreeFloatingComputedTorque
from .controller_config import ControllerConfig, check_joint_list
from .joint_trajectory import JointLimits, JointTrajectoryFollower, TrajectoryReport

_BUS_JOINTS = ("free_flyer", "spherical")


@dataclass
class ControlOutput:
    """Commands and status of one update. Arm vectors follow `ServicerController.arm_joints`, wheel vectors
    `ServicerController.wheel_joints` (the configured output orders).

    arm_torque, wheel_torque: N m, after limits (zero for a mode that is off).
    desired_positions (rad): the reference; tracking_error (rad): desired - measured; tracking_error_max:
    max |tracking_error| (rad) (both nan if joint_tracking is off). trajectory_active: a trajectory
    segment is being followed.
    attitude_error_angle (rad): rotation from the setpoint to the bus attitude (nan if attitude_hold is off).
    arm_saturated: per joint, clipped to its effort limit. wheel_torque_saturated: the wheel-torque vector
    was scaled down; wheel_speed_saturated: per wheel, denied torque at its speed limit.
    """

    arm_torque: np.ndarray
    wheel_torque: np.ndarray
    desired_positions: np.ndarray
    tracking_error: np.ndarray
    tracking_error_max: float
    trajectory_active: bool
    attitude_error_angle: float
    arm_saturated: np.ndarray
    wheel_torque_saturated: bool
    wheel_speed_saturated: np.ndarray


class ServicerController:
    """Combines JointTrajectoryFollower, FreeFloatingComputedTorque and AttitudeController on one model.

    API for the node: set_trajectory(), set_attitude_setpoint(), update(t, q, v) -> ControlOutput.
    Bad input raises CommandError naming the field and changes nothing.
    """

    def __init__(self, system: SystemModel, config: ControllerConfig):
        self.system = system
        self.config = config
        model = system.model
        src = config.source
        self.tracking = "joint_tracking" in config.modes
        self.attitude_hold = "attitude_hold" in config.modes
        self.arm_joints = check_joint_list(config.arm_joints, system.arm_joints, "controller.arm_joints", src)
        self.wheel_joints = check_joint_list(config.wheel_joints, system.wheel_joints, "controller.wheel_joints",
                                             src)
        if self.attitude_hold and not self.wheel_joints:
            raise ConfigError("controller.modes", "attitude_hold needs reaction wheels; the model has none", src)
        self._arm_v = np.array([system.v_index(n) for n in self.arm_joints], dtype=int)
        self._wheel_v = np.array([system.v_index(n) for n in self.wheel_joints], dtype=int)
        self._wheel_v_list = self._wheel_v.tolist()
        self._arm_q = np.array([self._revolute_q_index(n) for n in self.arm_joints], dtype=int)

        # Trajectory limits: URDF position and velocity limits, configured accelerations.
        tc = config.joint_tracking.trajectory
        unknown = sorted(set(tc.acceleration_limits) - set(self.arm_joints))
        if unknown:
            raise ConfigError(f"joint_tracking.trajectory.acceleration_limits.{unknown[0]}",
                              f"not an arm joint (arm joints: {list(self.arm_joints)})", src)
        missing = [n for n in self.arm_joints if n not in tc.acceleration_limits]
        if missing and self.tracking:
            raise ConfigError(f"joint_tracking.trajectory.acceleration_limits.{missing[0]}",
                              "is required (the URDF has no acceleration limits)", src)
        limits = JointLimits(
            lower=model.lowerPositionLimit[self._arm_q] + tc.position_margin,
            upper=model.upperPositionLimit[self._arm_q] - tc.position_margin,
            velocity=model.velocityLimit[self._arm_v] * tc.velocity_scale,
            acceleration=np.array([tc.acceleration_limits.get(n, np.inf) for n in self.arm_joints]),
        )
        if np.any(limits.lower > limits.upper):
            raise ConfigError("joint_tracking.trajectory.position_margin", "leaves no room inside the URDF "
                                                                          "position limits", src)
        self.follower = JointTrajectoryFollower(self.arm_joints, limits, tc.limit_policy, tc.start_tolerance,
                                                tc.allow_partial_joints)
        jt = config.joint_tracking
        self.kp = jt.natural_frequency**2
        self.kd = 2.0 * jt.damping_ratio * jt.natural_frequency

        # Computed torque: the arm is controlled in joint_tracking mode, passive otherwise.
        controlled = self._arm_v if self.tracking else np.zeros(0, dtype=int)
        effort = model.effortLimit[self._arm_v]
        self.dynamics = FreeFloatingComputedTorque(model, controlled, effort if self.tracking else None)

        # Attitude: the bus is the base link of `bus_subtree`.
        self.attitude: AttitudeController | None = None
        self.bus_inertia = np.full((3, 3), np.nan)
        self._feedforward = False
        if self.attitude_hold:
            self._setup_attitude(config)
        # The control-rate evaluation: forces on the wheels (attitude hold), bus rotation cancelled (feed-forward).
        self._step = ComputedTorqueStep(self.dynamics, self._wheel_v if self.attitude_hold else (),
                                        range(self._bus_w.start, self._bus_w.stop) if self._feedforward else ())
        n_arm = len(self.arm_joints)
        self._gains = np.hstack((self.kp * np.eye(n_arm), self.kd * np.eye(n_arm)))   # a* - qdd_d = gains [e; e']
        self._measured = np.zeros(2 * n_arm)                                          # [q_arm | v_arm]
        self._no_acceleration = np.zeros(0)                  # the controlled accelerations with tracking off
        self._first = True
        self._last: tuple[float, np.ndarray, np.ndarray] | None = None

    def _revolute_q_index(self, name: str) -> int:
        joint = self.system.model.joints[self.system.joint_id(name)]
        if joint.nq != 1:
            raise ConfigError("controller.arm_joints", f"arm joint {name!r} must be a bounded revolute or "
                                                       "prismatic joint (nq = 1)", self.config.source)
        return joint.idx_q

    def _setup_attitude(self, config: ControllerConfig) -> None:
        system, model = self.system, self.system.model
        try:
            bus = system.subtree(config.bus_subtree)
        except CommandError as exc:
            raise ConfigError("controller.bus_subtree", exc.problem, config.source) from exc
        if bus.config.base_joint not in _BUS_JOINTS:
            raise ConfigError("controller.bus_subtree", f"attitude control needs a {' or '.join(_BUS_JOINTS)} "
                                                        f"base, {bus.name!r} has {bus.config.base_joint}",
                              config.source)
        joint = model.joints[bus.root_joint_id]
        self._bus_q = slice(joint.idx_q + (3 if bus.config.base_joint == "free_flyer" else 0), joint.idx_q + joint.nq)
        first_w = joint.idx_v + (3 if bus.config.base_joint == "free_flyer" else 0)
        self._bus_w = slice(first_w, first_w + 3)
        self._bus_wp = np.array([self.dynamics.passive_index(i) for i in range(first_w, first_w + 3)], dtype=int)
        self._mount = tuple(pin.Quaternion(model.jointPlacements[bus.root_joint_id].rotation).coeffs().tolist())
        axes = wheel_spin_axes(model, bus.root_joint_id, self.wheel_joints)
        # Apparent bus inertia K^-1 at the neutral pose (arm locked when tracking, limp otherwise): the
        # inertia the wheels turn, which sets the PD gains for the chosen bandwidth.
        reduced = self.dynamics.reduce(system.neutral(), np.zeros(system.nv))
        self.bus_inertia = np.linalg.inv(reduced.passive_inverse[np.ix_(self._bus_wp, self._bus_wp)])
        self.bus_inertia = 0.5 * (self.bus_inertia + self.bus_inertia.T)
        at = config.attitude_hold
        gains = AttitudeGains.from_bandwidth(self.bus_inertia, at.natural_frequency, at.damping_ratio)
        index = [system.wheel_joints.index(n) for n in self.wheel_joints]
        self.attitude = AttitudeController(axes, system.wheel_max_torque[index], system.wheel_max_speed[index],
                                           gains, at.setpoint_xyzw)
        self._feedforward = at.feedforward

    # ---- commands ---------------------------------------------------------------------------
    def set_trajectory(self, joint_names, points, start_time: float | None = None) -> TrajectoryReport:
        """Follow a JointTrajectory (see joint_trajectory.py for the semantics) from the state of the last
        update. start_time (s): header.stamp (None: now). CommandError if rejected (nothing changes)."""
        if not self.tracking:
            raise CommandError("trajectory", "joint_tracking mode is off in this controller's configuration")
        if self._last is None:
            raise CommandError("state", "no state yet: update() must run once before a trajectory is accepted")
        t, q, v = self._last
        return self.follower.set_trajectory(joint_names, points, t, q[self._arm_q], v[self._arm_v], start_time)

    def stop_trajectory(self) -> None:
        """Drop the trajectory (e.g. a cancelled goal) and hold the arm where the last update measured it."""
        if self._last is not None:
            self.follower.hold(self._last[1][self._arm_q])

    def set_attitude_setpoint(self, quat_xyzw) -> None:
        """Desired bus orientation, base_link -> world, (x, y, z, w). CommandError if not a unit quaternion."""
        if self.attitude is None:
            raise CommandError("attitude_setpoint", "attitude_hold mode is off in this controller's configuration")
        self.attitude.set_setpoint(quat_xyzw)

    def bus_orientation(self, q: np.ndarray) -> np.ndarray:
        """Bus (base_link) orientation in the world frame, (x, y, z, w)."""
        return np.array(self._bus_orientation(q))

    def _bus_orientation(self, q: np.ndarray) -> tuple:
        """bus_orientation() as 4 Python floats: the mount rotation times the base joint's, normalized."""
        x, y, z, w = quaternion_multiply(self._mount, q[self._bus_q].tolist())
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        return x / norm, y / norm, z / norm, w / norm

    # ---- control step -----------------------------------------------------------------------
    def update(self, t: float, q, v) -> ControlOutput:
        """One control step at time t (s) from the full model state q (nq), v (nv) (SystemModel order)."""
        model = self.system.model
        t = _finite_time(t)
        q = pin.normalize(model, _finite_state(q, model.nq, "q", copy=False))     # normalize() returns a copy
        v = _finite_state(v, model.nv, "v")
        n_arm = len(self.arm_joints)
        if self._first:
            self.follower.hold(q[self._arm_q])
            if self.attitude is not None and self.attitude.setpoint is None:
                self.attitude.set_setpoint(self.bus_orientation(q))
            self._first = False
        self._last = (t, q, v)

        # Reference [q_d | qdot_d | qddot_d] and errors [e | e'] = [q_d - q | qdot_d - qdot].
        ref, active = self.follower.sample_stacked(t)
        if self.tracking:
            measured = self._measured
            measured[:n_arm] = q[self._arm_q]
            measured[n_arm:] = v[self._arm_v]
            errors = ref[:2 * n_arm] - measured
            a_star = ref[2 * n_arm:] + self._gains.dot(errors)       # qddot_d + Kp e + Kd e'
        else:
            a_star = self._no_acceleration
        step = self._step
        try:
            step.solve(q, v, a_star)
        except np.linalg.LinAlgError as exc:   # M_pp not positive definite: only from an absurd state
            raise CommandError("state", f"the mass matrix is not positive definite at this state ({exc})") from exc

        wheel_torque = None
        if self.attitude is not None:
            # Feed-forward T_ff = -K^-1 alpha_0 = K^-1 u_bus (computed_torque eqs. 4-5).
            feedforward = step.cancelling_force() if self._feedforward else None
            velocities = v.tolist()
            wheel_torque, angle, torque_sat, speed_sat = self.attitude.wheel_command(
                self._bus_orientation(q), velocities[self._bus_w], [velocities[i] for i in self._wheel_v_list],
                feedforward)
        else:
            angle, torque_sat, speed_sat = float("nan"), False, np.zeros(len(self.wheel_joints), dtype=bool)

        if self.tracking:
            arm_torque, arm_sat = self.dynamics.clip(step.torque(wheel_torque))
            error = errors[:n_arm]
            error_max = max(map(abs, error.tolist()))
        else:
            arm_torque, arm_sat = np.zeros(n_arm), np.zeros(n_arm, dtype=bool)
            error, error_max = np.full(n_arm, np.nan), float("nan")
        if wheel_torque is None:
            wheel_torque = np.zeros(len(self.wheel_joints))
        # A finite but absurd state (e.g. rates of 1e200 rad/s) overflows the bias forces: never pass a NaN on.
        if not (math.isfinite(float(arm_torque.sum())) and math.isfinite(float(np.sum(wheel_torque)))):
            raise CommandError("state", "the control law gives non-finite torques at this state (overflow from "
                                        "absurd rates?); no command computed")
        return ControlOutput(arm_torque, wheel_torque, ref[:n_arm], error, error_max, active, angle,
                             arm_sat, torque_sat, speed_sat)


def _finite_time(t) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) or not math.isfinite(t):
        raise CommandError("t", f"must be a finite time in s, got {t!r}")
    return float(t)


def _finite_state(x, size: int, field: str, copy: bool = True) -> np.ndarray:
    try:
        x = np.array(x, dtype=float) if copy else np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise CommandError(field, f"not a numeric vector: {exc}") from exc
    if x.shape != (size,):
        raise CommandError(field, f"expected {size} values, got shape {x.shape}")
    # x.x is non-finite when an entry is, or when finite entries overflow (rare; the full check settles it).
    if not math.isfinite(x.dot(x)) and not np.all(np.isfinite(x)):
        raise CommandError(field, f"non-finite values at indices {np.flatnonzero(~np.isfinite(x)).tolist()}")
    return x
