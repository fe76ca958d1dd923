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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .attitude_control import AttitudeController, AttitudeGains, wheel_spin_axes
from .computed_torque import FreeFloatingComputedTorque
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
        self._wheel_p = np.array([self.dynamics.passive_index(i) for i in self._wheel_v], dtype=int)

        # Attitude: the bus is the base link of `bus_subtree`.
        self.attitude: AttitudeController | None = None
        self.bus_inertia = np.full((3, 3), np.nan)
        if self.attitude_hold:
            self._setup_attitude(config)
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
        self._mount = pin.Quaternion(model.jointPlacements[bus.root_joint_id].rotation)
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
        quat = self._mount * pin.Quaternion(q[self._bus_q][3], *q[self._bus_q][:3])
        quat.normalize()
        return quat.coeffs().copy()

    # ---- control step -----------------------------------------------------------------------
    def update(self, t: float, q, v) -> ControlOutput:
        """One control step at time t (s) from the full model state q (nq), v (nv) (SystemModel order)."""
        model = self.system.model
        t = _finite_time(t)
        q = pin.normalize(model, _finite_state(q, model.nq, "q"))
        v = _finite_state(v, model.nv, "v")
        q_arm, v_arm = q[self._arm_q], v[self._arm_v]
        if self._first:
            self.follower.hold(q_arm)
            if self.attitude is not None and self.attitude.setpoint is None:
                self.attitude.set_setpoint(self.bus_orientation(q))
            self._first = False
        self._last = (t, q, v)

        ref = self.follower.sample(t)
        n_arm = len(self.arm_joints)
        a_star = ref.accelerations + self.kd * (ref.velocities - v_arm) + self.kp * (ref.positions - q_arm)
        a_controlled = a_star if self.tracking else np.zeros(0)
        reduced = self.dynamics.reduce(q, v)
        passive_force = np.zeros(len(self.dynamics.passive))

        wheel_torque, angle = np.zeros(len(self.wheel_joints)), float("nan")
        torque_sat, speed_sat = False, np.zeros(len(self.wheel_joints), dtype=bool)
        if self.attitude is not None:
            feedforward = None
            if self.config.attitude_hold.feedforward:
                alpha0 = reduced.passive_acceleration(a_controlled, passive_force)[self._bus_wp]
                K = reduced.passive_inverse[self._bus_wp][:, self._bus_wp]
                feedforward = -np.linalg.solve(K, alpha0)
            cmd = self.attitude.update(self.bus_orientation(q), v[self._bus_w], v[self._wheel_v], feedforward)
            wheel_torque, angle = cmd.wheel_torque, cmd.error_angle
            torque_sat, speed_sat = cmd.torque_saturated, cmd.speed_saturated
            passive_force[self._wheel_p] = wheel_torque

        if self.tracking:
            arm_torque, arm_sat = self.dynamics.clip(reduced.torque(a_star, passive_force))
        else:
            arm_torque, arm_sat = np.zeros(n_arm), np.zeros(n_arm, dtype=bool)
        if self.tracking:
            error = ref.positions - q_arm
            error_max = float(np.abs(error).max())
        else:
            error, error_max = np.full(n_arm, np.nan), float("nan")
        return ControlOutput(arm_torque, wheel_torque, ref.positions, error, error_max, ref.active, angle,
                             arm_sat, torque_sat, speed_sat)


def _finite_time(t) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) or not np.isfinite(t):
        raise CommandError("t", f"must be a finite time in s, got {t!r}")
    return float(t)


def _finite_state(x, size: int, field: str) -> np.ndarray:
    try:
        x = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise CommandError(field, f"not a numeric vector: {exc}") from exc
    if x.shape != (size,):
        raise CommandError(field, f"expected {size} values, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise CommandError(field, f"non-finite values at indices {np.flatnonzero(~np.isfinite(x)).tolist()}")
    return x
