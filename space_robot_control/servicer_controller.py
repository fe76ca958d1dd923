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
Steps 1-2 are linear in (1, s, ..., s^5, q_arm, qdot_arm) on each polynomial piece of the reference (s: its
local time), so they run as one matrix per piece (_tracking_law), made when the piece begins. Steps 3-5
run as computed_torque.ComputedTorqueStep (eqs. 4-5 there: one Cholesky factorization per update, K^-1
read off the factor), which gives the same torques as ReducedDynamics to round-off.
The state is checked once, at update()'s boundary (numeric vectors of the model's sizes, finite); the
steps behind it take it as it is.

Capture (docs/contact.md sec. 8): on a model with a grasp, a second controller of the same configuration computes
with the joined system (the servicer alone, ControlModel(without=target), the held target's inertia added to the
hand's body at the grasp). set_grasp(True) hands every call over to it: it holds the arm at its pose at the grasp,
with the commanded arm accelerations scaled so that the predicted grasp wrench stays below the configured limit
(grasp_wrench_limit.py), and damps the stack's rotation with the wheels (the attitude setpoint follows the bus until
its rate is below capture.detumble_rate, then it is held), with the PD gains retuned for the joined stack's
inertia. set_grasp(False) returns to the free model, holding the arm and the bus where they are.
On a flexible model the arm keeps its free model's motor-side loop while the grasp holds: through joint springs of
4-1500 N m/rad the 1500 kg target is not a load the motors can be commanded to move as if rigidly attached (a
computed torque on the joined rigid model winds the wrist springs up and diverges); the wheels take the joined
stack's gains and damp its rate, and the wrench limiter (a rigid-model prediction) is not applied.
"""
from __future__ import annotations

import copy
import math
from operator import itemgetter

import numpy as np
import pinocchio as pin

from space_robot_dynamics.command_checks import all_finite, numeric_vector, require_finite
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.index_views import contiguous_index
from space_robot_dynamics.model.system_model import SystemModel

from .attitude_control import AttitudeController, AttitudeGains, quaternion_left_matrix, wheel_spin_axes
from .computed_torque import ComputedTorqueStep, FreeFloatingComputedTorque
from .control_model import ControlModel
from .controller_config import ControllerConfig, check_joint_list
from .grasp_wrench_limit import GraspWrenchLimiter
from .joint_trajectory import JointLimits, JointTrajectoryFollower, TrajectoryReport, quintic_powers
from .vibration_suppression import ModalRateDamping

_BUS_JOINTS = ("free_flyer", "spherical")


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
    The reference fields and arm_saturated are formed when read, from this update's own arrays (the node
    reads them at its diagnostics rate, not at the control rate). The zero torques of a mode that is off and
    the all-False wheel_speed_saturated are shared read-only arrays.
    """

    __slots__ = ("arm_torque", "wheel_torque", "trajectory_active", "attitude_error_angle",
                 "wheel_torque_saturated", "wheel_speed_saturated", "_reference", "_tracking", "_demanded_arm")

    def __init__(self, arm_torque: np.ndarray, wheel_torque: np.ndarray, reference: np.ndarray, tracking: bool,
                 trajectory_active: bool, attitude_error_angle: float, demanded_arm_torque: np.ndarray,
                 wheel_torque_saturated: bool, wheel_speed_saturated: np.ndarray):
        self.arm_torque = arm_torque
        self.wheel_torque = wheel_torque
        self._reference = reference             # [q_d | q_d - q | a*] (3 n)
        self._tracking = tracking
        self.trajectory_active = trajectory_active
        self.attitude_error_angle = attitude_error_angle
        self._demanded_arm = demanded_arm_torque     # before the effort limits
        self.wheel_torque_saturated = wheel_torque_saturated
        self.wheel_speed_saturated = wheel_speed_saturated

    @property
    def arm_saturated(self) -> np.ndarray:
        return self.arm_torque != self._demanded_arm

    @property
    def desired_positions(self) -> np.ndarray:
        return self._reference[:len(self.arm_torque)]

    @property
    def desired_accelerations(self) -> np.ndarray:
        """a* of step 2 (rad/s^2), before any grasp-wrench scaling (nan if joint_tracking is off)."""
        n = len(self.arm_torque)
        return self._reference[2 * n:] if self._tracking else np.full(n, np.nan)

    @property
    def tracking_error(self) -> np.ndarray:
        n = len(self.arm_torque)
        return self._reference[n:2 * n] if self._tracking else np.full(n, np.nan)

    @property
    def tracking_error_max(self) -> float:
        return float(np.abs(self.tracking_error).max(initial=0.0)) if self._tracking else float("nan")


class ServicerController:
    """Combines JointTrajectoryFollower, FreeFloatingComputedTorque and AttitudeController on one model.

    API for the node: set_trajectory(), set_attitude_setpoint(), update(t, q, v) -> ControlOutput.
    Bad input raises CommandError naming the field and changes nothing.
    """

    def __init__(self, system: SystemModel, config: ControllerConfig, control_model: ControlModel | None = None):
        self.system = system
        self.config = config
        # A flexible system is controlled through its rigid counterpart, with the motor angles of elastic joints
        # (control_model.py); everything below is computed on that model (the joined system's: `control_model`).
        self.control_model = ControlModel(system) if control_model is None else control_model
        self._input_shape = (system.nq, system.nv)
        system = self.control_model.rigid
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
        self._follower = JointTrajectoryFollower(self.arm_joints, limits, tc.limit_policy, tc.start_tolerance,
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
        self._bus_w = self._bus_q = slice(0, 0)
        self._mount = None
        self.bus_inertia = np.full((3, 3), np.nan)
        self._feedforward = False
        if self.attitude_hold:
            self._setup_attitude(config)
        # The control-rate evaluation: forces on the wheels (attitude hold), bus rotation cancelled (feed-forward).
        self._step = ComputedTorqueStep(self.dynamics, self._wheel_v if self.attitude_hold else (),
                                        range(self._bus_w.start, self._bus_w.stop) if self._feedforward else ())
        n_arm = len(self.arm_joints)
        # update()'s per-step buffers and index views. x = [1, s, ..., s^5 | q_arm | qdot_arm]: the tracking
        # law of a reference segment is linear in x (see _tracking_law).
        self._x = np.zeros(6 + 2 * n_arm)
        self._x_powers, self._x_q, self._x_v = self._x[:6], self._x[6:6 + n_arm], self._x[6 + n_arm:]
        self._a_star = slice(2 * n_arm, 3 * n_arm)             # a* in the law's output [q_d | e | a*]
        self._arm_q_index, self._arm_v_index = contiguous_index(self._arm_q), contiguous_index(self._arm_v)
        wheels = contiguous_index(self._wheel_v)       # wheel speeds out of v's list: a slice or a gather
        self._wheel_speeds = itemgetter(wheels) if isinstance(wheels, slice) else itemgetter(*wheels.tolist())
        self._q_shape, self._v_shape = (self._input_shape[0],), (self._input_shape[1],)
        self._no_acceleration = np.zeros(0)                  # the controlled accelerations with tracking off
        self._no_wheels = np.zeros(0)                        # the limiter's wheel torques without attitude hold
        self._idle_arm = np.zeros(n_arm)
        self._idle_arm.flags.writeable = False               # shared by the outputs of updates without tracking
        self._idle_wheels = np.zeros(len(self.wheel_joints))
        self._idle_wheels.flags.writeable = False
        self._no_wheel_flags = np.zeros(len(self.wheel_joints), dtype=bool)
        self._no_wheel_flags.flags.writeable = False
        self._segment: np.ndarray | None = None              # the reference segment _law was made for
        self._law = np.zeros((3 * n_arm, 6 + 2 * n_arm))
        self._first = True
        self._last_t: float | None = None                    # time of the last update; its arm state is in _x
        # flexible systems: the optional modal-rate feedback (vibration_suppression.py), on the simulated model
        self.vibration = None
        given = self.control_model.system
        if config.vibration_suppression.enabled:
            if given.flexibility is None:
                raise ConfigError("vibration_suppression.enabled", "the model has no flexible links or elastic "
                                  "joints to damp", src)
            self.vibration = ModalRateDamping(given, self.arm_joints, config.vibration_suppression.damping_ratio)
        # capture: the joined system's controller (see the module docstring), and its state while the grasp holds
        self.capture: CaptureMode | None = None          # set on the joined controller by attach()
        self._joined: ServicerController | None = None
        self._holding = False
        self._hand_inertia = None
        grasp = given.grasp
        if control_model is None and grasp is not None and self.tracking:
            target = given.subtree_of(given.model.frames[grasp.target_frame].name).name
            self._joined = ServicerController(given, config, ControlModel(given, without=(target,)))

    @property
    def follower(self) -> JointTrajectoryFollower:
        """The trajectory follower in force (the joined system's while the grasp holds)."""
        return self._joined._follower if self._holding else self._follower

    @property
    def holding(self) -> bool:
        """Whether the grasp holds for the controller (set_grasp)."""
        return self._holding or self.capture is not None

    @property
    def capture_mode(self) -> CaptureMode | None:
        """The capture state in force (the joined controller's, or this one's on a flexible model), None free."""
        return self._joined.capture if self._holding else self.capture

    @property
    def joined(self) -> ServicerController | None:
        """The joined system's controller (None without a grasp on the model or with joint_tracking off)."""
        return self._joined

    def _revolute_q_index(self, name: str) -> int:
        rigid = self.control_model.rigid
        joint = rigid.model.joints[rigid.joint_id(name)]
        if joint.nq != 1:
            raise ConfigError("controller.arm_joints", f"arm joint {name!r} must be a bounded revolute or "
                                                       "prismatic joint (nq = 1)", self.config.source)
        return joint.idx_q

    def _setup_attitude(self, config: ControllerConfig) -> None:
        system = self.control_model.rigid
        model = system.model
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
        mount = pin.Quaternion(model.jointPlacements[bus.root_joint_id].rotation).coeffs()
        # bus orientation = mount (x) base joint's: L(mount) as a matrix, None for the identity
        self._mount = None if mount.tolist() == [0.0, 0.0, 0.0, 1.0] else quaternion_left_matrix(mount)
        axes = wheel_spin_axes(model, bus.root_joint_id, self.wheel_joints)
        gains = self._attitude_gains(system.neutral())
        at = config.attitude_hold
        index = [system.wheel_joints.index(n) for n in self.wheel_joints]
        self.attitude = AttitudeController(axes, system.wheel_max_torque[index], system.wheel_max_speed[index],
                                           gains, at.setpoint_xyzw)
        self._feedforward = at.feedforward

    def _attitude_gains(self, q: np.ndarray) -> AttitudeGains:
        """The PD gains for the configured bandwidth, from the apparent bus inertia K^-1 at configuration q (arm
        locked when tracking, limp otherwise): the inertia the wheels turn. Sets self.bus_inertia."""
        model = self.control_model.rigid
        reduced = self.dynamics.reduce(q, np.zeros(model.nv))
        inertia = np.linalg.inv(reduced.passive_inverse[np.ix_(self._bus_wp, self._bus_wp)])
        self.bus_inertia = 0.5 * (inertia + inertia.T)
        at = self.config.attitude_hold
        return AttitudeGains.from_bandwidth(self.bus_inertia, at.natural_frequency, at.damping_ratio)

    # ---- capture ----------------------------------------------------------------------------
    def set_grasp(self, holding: bool, t: float, q, v) -> None:
        """The grasp closed (True) or opened (False) with the system in state (q, v) at time t (s): switch to the
        joined system's controller or back (module docstring). On a flexible model the arm keeps its motor-side
        loop on the free model (module docstring); only the wheels' gains and rate damping change. CommandError when
        the controller has no joined model (no grasp on the model, or joint_tracking off)."""
        holding = bool(holding)
        if holding == (self._holding or self.capture is not None):
            return
        if self._joined is None:
            raise CommandError("grasp", "this controller has no joined-system model (the model has no grasp, or "
                                        "joint_tracking is off)")
        t = _finite_time(t)
        q, v = self._checked_state(q, v)
        q_r, _v_r = self.control_model.state(q, v)
        if holding and self.control_model.system.flexibility is None:
            self._joined.attach(t, q, v)
            self._holding = True
            return
        if holding:             # flexible: the joined model for the wheels only
            self._joined.attach(t, q, v)
            if self.attitude is not None:
                self._free_gains = self.attitude.gains
                self.attitude.gains = self._joined.attitude.gains
            self.capture = CaptureMode(t, None, self.attitude is not None, self.config.capture.detumble_rate)
        else:
            self._holding = False
            if self.capture is not None and self.attitude is not None:
                self.attitude.gains = self._free_gains
            self.capture = None
        self._follower.hold(q_r[self._arm_q])
        if self.attitude is not None:
            quat = self._bus_orientation(q_r)
            self.attitude.set_setpoint(quat / np.linalg.norm(quat))

    def attach(self, t: float, q: np.ndarray, v: np.ndarray) -> None:
        """(The joined controller) the target is held from now on: its inertia onto the hand's body (placed as the
        measured state has it), the attitude gains for the joined stack, the wrench limiter, the arm held where it
        is, rate damping on."""
        given, grasp = self.control_model.system, self.control_model.system.grasp
        model_s, data = given.model, given.model.createData()
        pin.forwardKinematics(model_s, data, q)
        hand_s = model_s.frames[grasp.ee_frame].parentJoint
        target_s = model_s.frames[grasp.target_frame].parentJoint
        inertia = data.oMi[hand_s].actInv(data.oMi[target_s]).act(model_s.inertias[target_s])
        model = self.control_model.rigid.model
        hand = model.getJointId(model_s.names[hand_s])
        if self._hand_inertia is None:
            self._hand_inertia = model.inertias[hand].copy()
        model.inertias[hand] = self._hand_inertia + inertia
        q_r, _v_r = self.control_model.state(q, v)
        if self.attitude is not None:
            self.attitude.gains = self._attitude_gains(q_r)
            quat = self._bus_orientation(q_r)
            self.attitude.set_setpoint(quat / np.linalg.norm(quat))
        ee_placement = model.frames[model.getFrameId(model_s.frames[grasp.ee_frame].name)].placement
        cap = self.config.capture
        limiter = GraspWrenchLimiter(self.dynamics, self._wheel_v if self.attitude is not None else (), hand,
                                     inertia, ee_placement, cap.force_limit, cap.torque_limit)
        self._step.enable_scaling()          # the limiter reads eq. 4 at alpha a* from the step's factorization
        self.capture = CaptureMode(t, limiter, self.attitude is not None, cap.detumble_rate,
                                   cap.overload_release_time, cap.overload_wrench_factor)
        self._follower.hold(q_r[self._arm_q])
        self._first = False

    # ---- commands ---------------------------------------------------------------------------
    def set_trajectory(self, joint_names, points, start_time: float | None = None) -> TrajectoryReport:
        """Follow a JointTrajectory (see joint_trajectory.py for the semantics) from the state of the last
        update. start_time (s): header.stamp (None: now). CommandError if rejected (nothing changes)."""
        if self._holding:
            return self._joined.set_trajectory(joint_names, points, start_time)
        if not self.tracking:
            raise CommandError("trajectory", "joint_tracking mode is off in this controller's configuration")
        if self._last_t is None:
            raise CommandError("state", "no state yet: update() must run once before a trajectory is accepted")
        return self._follower.set_trajectory(joint_names, points, self._last_t, self._x_q.copy(), self._x_v.copy(),
                                             start_time)

    def check_trajectory(self, joint_names, points, now: float, q, v, start_time: float | None = None
                         ) -> TrajectoryReport:
        """What set_trajectory would say of this goal received at `now` (s) with the system in state (q, v),
        changing nothing: the same validation (joints, times, position and rate limits) on a copy of the
        trajectory follower. For goals known in advance (a scenario's), checked before a run starts."""
        return self.preview_trajectory(joint_names, points, now, q, v, start_time)[1]

    def preview_trajectory(self, joint_names, points, now: float, q, v, start_time: float | None = None
                           ) -> tuple[JointTrajectoryFollower, TrajectoryReport]:
        """A copy of the trajectory follower following this goal as set_trajectory would from the state (q, v) at
        `now` (its reference is the one the controller will track), and the report; nothing of the controller
        changes. CommandError as set_trajectory."""
        if self._holding:
            return self._joined.preview_trajectory(joint_names, points, now, q, v, start_time)
        if not self.tracking:
            raise CommandError("trajectory", "joint_tracking mode is off in this controller's configuration "
                                             f"(controller.modes: {list(self.config.modes)})")
        q, v = self.control_model.state(*self._checked_state(q, v))
        follower = copy.deepcopy(self._follower)
        report = follower.set_trajectory(joint_names, points, now, q[self._arm_q], v[self._arm_v], start_time)
        return follower, report

    def stop_trajectory(self) -> None:
        """Drop the trajectory (e.g. a cancelled goal) and hold the arm where the last update measured it."""
        if self._holding:
            self._joined.stop_trajectory()
        elif self._last_t is not None:
            self._follower.hold(self._x_q.copy())

    def set_attitude_setpoint(self, quat_xyzw) -> None:
        """Desired bus orientation, base_link -> world, (x, y, z, w). CommandError if not a unit quaternion."""
        if self._holding:
            self._joined.set_attitude_setpoint(quat_xyzw)
            if self._joined.capture is not None:
                self._joined.capture.rate_damping = False      # a setpoint given ends the rate damping
            return
        if self.attitude is None:
            raise CommandError("attitude_setpoint", "attitude_hold mode is off in this controller's configuration")
        self.attitude.set_setpoint(quat_xyzw)

    def bus_orientation(self, q: np.ndarray) -> np.ndarray:
        """Bus (base_link) orientation in the world frame, (x, y, z, w), normalized (q: the system's)."""
        q = np.asarray(q, dtype=float)
        quat = self._bus_orientation(self.control_model.state(q, np.zeros(self._input_shape[1]))[0])
        return quat / np.linalg.norm(quat)

    def _bus_orientation(self, q: np.ndarray) -> np.ndarray:
        """The mount rotation times the base joint's (x, y, z, w) (unit when q's quaternion is; a view of q
        without a mount)."""
        joint = q[self._bus_q]
        return joint if self._mount is None else self._mount.dot(joint)

    def _tracking_law(self, segment: np.ndarray) -> np.ndarray:
        """The tracking law on one reference segment (joint_trajectory: [q_d | qdot_d | qddot_d] =
        (1, s, ..., s^5) segment) as one matrix T (3 n x (6 + 2 n)) with, for x = [1, s, ..., s^5 | q | qdot]
        (arm joints), T x = [q_d | e = q_d - q | a* = qddot_d + Kd (qdot_d - qdot) + Kp e] (seed 004 eq. 6.6)."""
        n = len(self.arm_joints)
        positions, velocities, accelerations = segment[:, :n].T, segment[:, n:2 * n].T, segment[:, 2 * n:].T
        identity = np.eye(n)
        law = np.zeros((3 * n, 6 + 2 * n))
        law[:n, :6] = positions
        law[n:2 * n, :6], law[n:2 * n, 6:6 + n] = positions, -identity
        law[2 * n:, :6] = accelerations + self.kd * velocities + self.kp * positions
        law[2 * n:, 6:6 + n], law[2 * n:, 6 + n:] = -self.kp * identity, -self.kd * identity
        return law

    # ---- control step -----------------------------------------------------------------------
    def update(self, t: float, q, v) -> ControlOutput:
        """One control step at time t (s) from the full model state q (nq), v (nv) (SystemModel order).
        q's quaternions need not be exactly unit (they are normalized). CommandError naming the field
        for a non-finite or misshapen input (nothing changes), or for a state the law cannot be used at."""
        if self._holding:
            return self._joined.update(t, q, v)
        if type(t) is not float or t - t != 0.0:           # inf - inf and nan - nan are nan
            t = _finite_time(t)
        q_system, v_system = self._checked_state(q, v)
        q, v = self.control_model.state(q_system, v_system)
        if self._first:
            self._follower.hold(q[self._arm_q])
            if self.attitude is not None and self.attitude.setpoint is None:
                quat = self._bus_orientation(q)
                self.attitude.set_setpoint(quat / np.linalg.norm(quat))
            self._first = False

        # Reference and tracking law: [q_d | e | a*] = T x for the reference segment in force.
        segment, s, active = self._follower.segment(t)
        if segment is not self._segment:
            self._law, self._segment = self._tracking_law(segment), segment
        quintic_powers(s, out=self._x_powers)
        self._x_q[...] = q[self._arm_q_index]
        self._x_v[...] = v[self._arm_v_index]
        self._last_t = t
        reference = self._law.dot(self._x)

        step = self._step
        try:
            step.solve(q, v, reference[self._a_star] if self.tracking else self._no_acceleration)
        except np.linalg.LinAlgError as exc:   # M_pp not positive definite: only from an absurd state
            raise CommandError("state", f"the mass matrix is not positive definite at this state ({exc})") from exc

        attitude, capture = self.attitude, self.capture
        if capture is not None and capture.rate_damping:
            capture.damp_rate(t, attitude, self._bus_orientation(q), v[self._bus_w], self._x_v)
        if attitude is not None:
            # Feed-forward T_ff = -K^-1 alpha_0 = K^-1 u_bus (computed_torque eqs. 4-5).
            velocities = v.tolist()
            wheel_torque, angle, torque_sat, speed_sat = attitude.wheel_command(
                self._bus_orientation(q), velocities[self._bus_w], self._wheel_speeds(velocities),
                step.cancelling_force() if self._feedforward else None)
        else:
            wheel_torque, angle, torque_sat, speed_sat = self._idle_wheels, float("nan"), False, self._no_wheel_flags

        if capture is not None and capture.limiter is not None and self.tracking:     # grasp_wrench_limit.py
            alpha = capture.limiter.scale_step(q, v, step, wheel_torque if attitude is not None else self._no_wheels)
            if alpha < 1.0:
                step.scale(alpha)
        if self.tracking:
            demanded = step.torque(None if attitude is None else wheel_torque)
            if self.vibration is not None:
                demanded = demanded + self.vibration.torque(q_system, v_system)
            arm_torque = self.dynamics.limit(demanded)
        else:
            arm_torque = demanded = self._idle_arm
        # A finite but absurd state (e.g. rates of 1e200 rad/s) overflows the bias forces: never pass a NaN on.
        if not (all_finite(arm_torque) and all_finite(wheel_torque)):
            raise CommandError("state", "the control law gives non-finite torques at this state (overflow from "
                                        "absurd rates?); no command computed")
        out = ControlOutput(arm_torque, wheel_torque, reference, self.tracking, active, angle, demanded, torque_sat,
                            speed_sat)
        if capture is not None and self.tracking:
            capture.note_effort(t, out.arm_saturated)
        return out

    def _checked_state(self, q, v) -> tuple[np.ndarray, np.ndarray]:
        """The update's validation boundary: q, v as float vectors of the model's sizes with finite entries
        (one dot product each: non-finite when an entry is, or on overflow, which the entry-wise check
        settles), q normalized (a new array). CommandError naming the field otherwise."""
        q = numeric_vector(q, self._q_shape[0], "q")
        v = numeric_vector(v, self._v_shape[0], "v")
        require_finite((q, "q"), (v, "v"))
        return pin.normalize(self.system.model, q), v


class CaptureMode:
    """The joined controller's state while the grasp holds: when it closed (s), the wrench limiter, and the rate
    damping of the stack (the attitude setpoint follows the bus until its rate and every arm joint's rate are below
    `detumble_rate` rad/s: the stack turns as one body then, with what the wheels have not taken of its momentum)."""

    def __init__(self, grasp_time: float, limiter: GraspWrenchLimiter | None, rate_damping: bool,
                 detumble_rate: float, overload_release_time: float | None = None,
                 overload_wrench_factor: float | None = None):
        self.grasp_time = grasp_time
        self.limiter = limiter
        self.rate_damping = rate_damping
        self.detumble_rate = detumble_rate
        self.rate_damping_ended: float | None = None     # set by the joined controller's update (s)
        self.overload_release_time = overload_release_time
        self.overload_wrench_factor = overload_wrench_factor
        self.overload_since: float | None = None          # s: since when the arm has been at an effort limit
        self.overloaded_joints = np.zeros(0, dtype=bool)  # per arm joint (output order): at its limit now
        self.release_requested_at: float | None = None    # s: when the overload watch asked for the gripper to open
        self.release_reason = ""

    def note_effort(self, t: float, clipped: np.ndarray) -> None:
        """Overload watch (docs/contact.md sec. 8), effort part: `clipped` per arm joint, the torque the law asks for
        is beyond the effort limit at time t (s). While a joint is clipped the computed torque no longer holds the
        arm and the stack may swing it about (a target the arm cannot hold: the stack's internal loads exceed a
        joint's limit). Once that has lasted overload_release_time, a release is requested (once)."""
        self.overloaded_joints = clipped
        if not clipped.any():
            self.overload_since = None
            return
        if self.overload_since is None:
            self.overload_since = t
        if self.release_requested_at is None and self.overload_release_time is not None and \
                t - self.overload_since >= self.overload_release_time - 1e-9:
            self._request_release(t, f"at their effort limits for {self.overload_release_time} s "
                                     "(capture.overload_release_time)")

    def note_wrench(self, t: float, force: float, torque: float) -> None:
        """Overload watch, wrench part: the grasp wrench measured at time t (|force| N, |torque| N m). At an effort
        limit, a wrench beyond overload_wrench_factor times the limiter's limits means the arm has lost the stack:
        a release is requested at once (a transient clip while the wrench stays within them is left to
        note_effort's time)."""
        factor, limiter = self.overload_wrench_factor, self.limiter
        if self.overload_since is None or self.release_requested_at is not None or factor is None or limiter is None:
            return
        if force > factor * limiter.force_limit or torque > factor * limiter.torque_limit:
            self._request_release(t, f"at their effort limits with a grasp wrench of {force:.3g} N / {torque:.3g} "
                                     f"N m, beyond {factor:g}x the limits (capture.overload_wrench_factor)")

    def _request_release(self, t: float, reason: str) -> None:
        self.release_requested_at, self.release_reason = t, reason

    def damp_rate(self, t: float, attitude: AttitudeController, bus_orientation: np.ndarray, bus_rate: np.ndarray,
                  arm_rates: np.ndarray) -> None:
        """Rate damping: the setpoint is the bus's attitude (the PD's attitude term vanishes), until the bus rate
        (rad/s, bus frame) and the arm joint rates (rad/s) are below detumble_rate; the attitude then is held."""
        if float(np.linalg.norm(bus_rate)) < self.detumble_rate and float(np.abs(arm_rates).max(initial=0.0)) < \
                self.detumble_rate:
            self.rate_damping = False
            self.rate_damping_ended = t
            return
        # the bus orientation of a checked state (finite, unit to round-off): set_setpoint's checks skipped, its
        # normalization kept (the same arithmetic, bit for bit)
        quat = bus_orientation / np.linalg.norm(bus_orientation)
        attitude.setpoint = quat / float(np.linalg.norm(quat))


def _finite_time(t) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) or not math.isfinite(t):
        raise CommandError("t", f"must be a finite time in s, got {t!r}")
    return float(t)
