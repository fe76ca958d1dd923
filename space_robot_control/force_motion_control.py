"""Hybrid force/motion control as a mode of the controller node (seed 004 ch. 6, eqs. 6.6-6.7; docs/controllers.md
sec. 2.5): while the grasp holds, the base attitude and the arm joints follow their setpoints and the hand pushes on
the target with a commanded force, the law realized on the inputs the servicer has, its base thrusters and its joint
torques (the realization (R) of hybrid_force_motion.py; the thesis study runs the same law on its own plant:
thesis_studies/force_motion_study.py, the oracle of this mode's tests).

Inputs at each update (SI, frames stated):
- the full model state q, v (SystemModel order: every free flyer's twist in its LOCAL frame);
- the measured contact force f (N): what the hand exerts on the target, in the hand's frame (the grasp's
  end-effector frame), i.e. minus the dynamics node's grasp/wrench force; None until one arrives (the integral then
  waits);
- the setpoints: arm joint positions (rad, m), base orientation (x, y, z, w; base link -> world), contact force
  (N, hand frame), each defaulting to what holds when the mode starts (the force: the configured one).

Outputs: arm torques (N m or N, the model's arm order, clipped to the URDF effort limits) and the base thruster wrench
(force N and couple N m in the base link's axes, about its origin, as base_thrusters/command wants it; scaled down as
a whole to the thrusters' limits). The weld's frames: c1 the hand frame, c2 the target's point that coincided with it
when the mode started (the grasp's relative pose).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .hybrid_force_motion import (
    ContactRows,
    HybridForceMotionLaw,
    HybridGains,
    RealizedLaw,
    check_motion_sizes,
    implicit_force_command,
    motion_acceleration,
    read_hybrid_gains,
)

ADAPTED_GROUPS = ("mass", "first_moment", "inertia")       # Gamma^-1 per group of a body's 10 parameters


@dataclass(frozen=True)
class AdaptationConfig:
    """controller.yaml `force_motion.adaptation` (seed 004 ch. 7): the bodies whose inertial parameters are
    estimated (by their joint's name), the initial estimate as a factor on the model file's values, Gamma^-1 per
    parameter group (kg, kg m, kg m^2 per unit of Y_1^T s), the Lyapunov weight q (Q = q I), and the fraction of
    eq. 7.3's relaxed force update applied per control period (adaptive_force_motion_control.py: 1 is the study's
    form, stable only while the measured force is at most two periods old)."""

    estimated_joints: tuple
    initial_scale: float
    gamma_inverse: dict
    lyapunov_q: float
    force_update_fraction: float = 1.0


@dataclass(frozen=True)
class ForceMotionConfig:
    """controller.yaml `force_motion` (config/controller.yaml documents each entry): gains of eqs. 6.6-6.7, the
    contact-force setpoint (N, on the target, hand-frame axes), the joint setpoints by name (rad or m; None: the
    positions when the grasp closes) and the base orientation setpoint (x, y, z, w; None: the one at the grasp)."""

    gains: HybridGains
    contact_force: tuple
    joint_positions: dict | None = None
    base_orientation_xyzw: tuple | None = None
    adaptation: AdaptationConfig | None = None     # None: the ch. 6 law; given: ch. 7's adaptive one


def read_force_motion_config(reader: ConfigReader) -> ForceMotionConfig:
    """The `force_motion` section; ConfigError naming the field."""
    gains_reader = reader.sub("gains")
    gains = read_hybrid_gains(gains_reader)
    gains_reader.reject_unknown()
    joints = reader.number_map("joint_positions") if reader.raw("joint_positions", None) is not None else None
    orientation = None
    if reader.raw("base_orientation_xyzw", None) is not None:
        quat = reader.vector("base_orientation_xyzw", 4)
        norm = float(np.linalg.norm(quat))
        if abs(norm - 1.0) > 1e-6:
            raise reader.error("base_orientation_xyzw", f"must be a unit quaternion (x, y, z, w), norm is {norm:.9g}")
        orientation = tuple(quat / norm)
    adaptation = None
    if reader.raw("adaptation", None) is not None:
        sub = reader.sub("adaptation")
        gamma = sub.sub("gamma_inverse")
        adaptation = AdaptationConfig(tuple(sub.string_list("estimated_joints")),
                                      sub.number("initial_scale", exclusive_minimum=0.0),
                                      {name: gamma.number(name, minimum=0.0) for name in ADAPTED_GROUPS},
                                      sub.number("lyapunov_q", exclusive_minimum=0.0),
                                      sub.number("force_update_fraction", 1.0, exclusive_minimum=0.0, maximum=1.0))
        if not adaptation.estimated_joints:
            raise sub.error("estimated_joints", "must name at least one joint (its child body is estimated)")
        if gains.ki != 0.0:
            raise gains_reader.error("ki", "must be 0 with adaptation: eq. 7.3's force law has no integral")
        gamma.reject_unknown()
        sub.reject_unknown()
    config = ForceMotionConfig(gains, tuple(reader.vector("contact_force", 3)), joints, orientation, adaptation)
    reader.reject_unknown()
    return config


@dataclass(frozen=True)
class ForceMotionOutput:
    """One update: arm torques (model arm order, after the effort limits), thruster force and couple (base link
    axes), the errors of eq. 6.6 (joints rad or m, base attitude e_R rad in the base frame) and of eq. 6.7 (N, hand
    frame; NaN before a measurement), and what the limits cut."""

    arm_torque: np.ndarray
    thruster_force: np.ndarray
    thruster_torque: np.ndarray
    joint_error: np.ndarray
    attitude_error: np.ndarray
    force_error: np.ndarray
    arm_saturated: np.ndarray
    thrust_scale: float               # 1: within the thrusters' limits; < 1: the wrench was scaled down by it
    estimates: np.ndarray | None = None     # adaptive mode: the estimated parameters now (pi_hat)
    lyapunov: float | None = None           # adaptive mode: V of eq. 7.12 now


class ForceMotionController:
    """The mode's state and law (module docstring). start() when the grasp closes, update() each control period,
    stop() when it opens. Bad state or setpoints: CommandError naming the field, nothing changes."""

    parameter_names: tuple = ()      # the adaptive mode's estimated parameters (none here)
    held_steps = 0                   # the adaptive mode's adaptation steps not taken (none here)

    def __init__(self, system: SystemModel, config: ForceMotionConfig, bus_subtree: str, source: str | None = None):
        if system.grasp is None:
            raise ConfigError("controller.modes", "force_motion needs a grasp (model file: no `grasp` section)", source)
        thrusters = system.base_thrusters
        if thrusters is None or thrusters.config.subtree != bus_subtree:
            raise ConfigError("controller.modes", f"force_motion realizes the law with base thrusters on the bus "
                                                  f"{bus_subtree!r} (model file `base_thrusters`), and "
                              + ("the model has none" if thrusters is None else
                                 f"they are on {thrusters.config.subtree!r}"), source)
        if system.flexibility is not None:
            raise ConfigError("controller.modes", "force_motion needs a rigid model (the law's H, C are rigid)", source)
        self.system, self.config, self.thrusters = system, config, thrusters
        model = self.model = system.model
        unknown = sorted(set(config.joint_positions or {}) - set(system.arm_joints))
        if unknown:
            raise ConfigError(f"force_motion.joint_positions.{unknown[0]}",
                              f"not an arm joint (arm joints: {list(system.arm_joints)})", source)
        bus = system.subtree(bus_subtree)
        root = model.joints[bus.root_joint_id]
        self.base_v = np.arange(root.idx_v, root.idx_v + 6)
        self.base_quaternion = slice(root.idx_q + 3, root.idx_q + 7)
        self.arm_v = np.asarray(system.arm_v, dtype=int)
        self.arm_q = np.array([system.q_slice(n).start for n in system.arm_joints])
        # the thrusters act in the base link's frame; the law's base inputs are the joint's generalized force
        self.base_link_in_joint = model.frames[model.getFrameId(thrusters.base_link)].placement
        self.actuated = np.concatenate((self.base_v, self.arm_v))
        self.motion = np.concatenate((self.base_v[3:], self.arm_v))
        check_motion_sizes(config.gains, system.arm_joints, "force_motion.gains", source)
        self.effort_limit = system.arm_effort_limit
        self.lower, self.upper = model.lowerPositionLimit[self.arm_q], model.upperPositionLimit[self.arm_q]
        for name, value in (config.joint_positions or {}).items():
            i = list(system.arm_joints).index(name)
            if not self.lower[i] <= value <= self.upper[i]:
                raise ConfigError(f"force_motion.joint_positions.{name}", f"{value} is outside the URDF limits "
                                  f"[{self.lower[i]:.6g}, {self.upper[i]:.6g}]", source)
        self.data = model.createData()
        self.law: HybridForceMotionLaw | None = None
        self.joint_setpoint = np.zeros(len(self.arm_v))
        self.rotation_setpoint = np.eye(3)
        self.force_setpoint = np.asarray(config.contact_force, dtype=float)
        self.integral = np.zeros(3)          # int (f - f_d) dt, N s (eq. 6.7's z on the force rows)
        self._orientation_given: np.ndarray | None = None   # a setpoint received (topic), kept across grasps
        self._last_force_time: float | None = None     # s, the last update with a measured force

    @property
    def active(self) -> bool:
        return self.law is not None

    def start(self, q: np.ndarray, v: np.ndarray) -> None:
        """The grasp closed at (q, v): weld c2 to the target where the hand is now, take the setpoints not
        configured from this state, zero the force integral."""
        model, data, grasp = self.model, self.data, self.system.grasp
        pin.forwardKinematics(model, data, q)
        hand, fixture = model.frames[grasp.ee_frame], model.frames[grasp.target_frame]
        joint1, joint2 = hand.parentJoint, fixture.parentJoint
        placement2 = data.oMi[joint2].actInv(data.oMi[joint1] * hand.placement)
        law_model = self._law_model()
        contact = ContactRows(law_model, joint1, hand.placement.copy(), joint2, placement2)
        self.law = HybridForceMotionLaw(law_model, contact, self.actuated, self.motion, np.arange(3))
        configured = self.config.joint_positions or {}
        self.joint_setpoint = np.array([configured.get(n, q[i]) for n, i in zip(self.system.arm_joints, self.arm_q)])
        quat = self._orientation_given if self._orientation_given is not None else \
            self.config.base_orientation_xyzw or tuple(q[self.base_quaternion])
        self.rotation_setpoint = _rotation(np.asarray(quat, dtype=float))
        self.integral[:] = 0.0
        self._last_force_time = None

    def stop(self) -> None:
        self.law = None

    def set_force_setpoint(self, force) -> None:
        """f_d (N, on the target, hand-frame axes), e.g. from force_controller/setpoint (already validated)."""
        self.force_setpoint = np.asarray(force, dtype=float).copy()

    def set_orientation_setpoint(self, quat_xyzw) -> None:
        """Base orientation setpoint (x, y, z, w; base link -> world), unit (already validated); one given before
        the grasp is the one the mode starts with."""
        self._orientation_given = np.asarray(quat_xyzw, dtype=float).copy()
        self.rotation_setpoint = _rotation(self._orientation_given)

    def set_joint_setpoint(self, names, positions) -> None:
        """Setpoints of the named arm joints (rad or m); CommandError naming an unknown joint, a value that is not
        finite or one outside the URDF limits (nothing changes then)."""
        arm = list(self.system.arm_joints)
        unknown = [n for n in names if n not in arm]
        if unknown:
            raise CommandError("joint_names", f"unknown arm joints {unknown} (the model's: {arm})")
        values = np.asarray(positions, dtype=float)
        if values.shape != (len(names),) or not np.all(np.isfinite(values)):
            raise CommandError("positions", f"{len(names)} finite values expected, got {positions!r}")
        rows = [arm.index(n) for n in names]
        for name, row, value in zip(names, rows, values):
            if not self.lower[row] <= value <= self.upper[row]:
                raise CommandError(f"positions.{name}", f"{value} is outside the URDF limits "
                                                        f"[{self.lower[row]:.6g}, {self.upper[row]:.6g}]")
        self.joint_setpoint[rows] = values

    def update(self, t: float, q: np.ndarray, v: np.ndarray, force: np.ndarray | None,
               sample_time: float | None = None) -> ForceMotionOutput:
        """Eqs. 6.6-6.7 realized by (R) at time t (s); `force` (N, hand frame, on the target) or None.
        sample_time (s): the instant q, v were measured at (None: t; NaN: unknown, e.g. parts of the state from
        different instants). Only the adaptive mode uses it."""
        if self.law is None:
            raise CommandError("force_motion", "not started (the grasp is open)")
        gains = self.config.gains
        e_q = self.joint_setpoint - q[self.arm_q]
        rotation = _rotation(q[self.base_quaternion])
        e_r = pin.log3(rotation.T.dot(self.rotation_setpoint))
        error = np.concatenate((e_r, e_q))
        rate = -np.concatenate((v[self.base_v[3:]], v[self.arm_v]))
        e_f = np.full(3, np.nan) if force is None else np.asarray(force, dtype=float) - self.force_setpoint
        self._before_solve(t if sample_time is None else sample_time, q, v, error, rate)
        # the multipliers act on the hand: lambda_f = -(the force on the target the law asks for)
        lambda_f = -self._force_command(t, e_f)
        try:
            realized = self.law.solve(q, v, motion_acceleration(error, rate, np.zeros(len(error)), gains), lambda_f)
        except np.linalg.LinAlgError as exc:
            raise CommandError("state", f"the hybrid law's system (R) is singular at this state ({exc})") from exc
        self._after_solve(realized)
        inputs = realized.inputs
        if not np.all(np.isfinite(inputs)):
            raise CommandError("state", "the hybrid law gives non-finite inputs at this state; no command computed")
        wrench = self.base_link_in_joint.actInv(pin.Force(inputs[:6]))      # joint frame -> base link frame
        force_b, torque_b = wrench.linear, wrench.angular
        limits = self.thrusters.config
        scale = min(1.0, limits.max_force / max(np.linalg.norm(force_b), 1e-300),
                    limits.max_torque / max(np.linalg.norm(torque_b), 1e-300))
        demanded = inputs[6:]
        arm = np.clip(demanded, -self.effort_limit, self.effort_limit)
        return ForceMotionOutput(arm, scale * force_b, scale * torque_b, e_q, e_r, e_f, arm != demanded, scale,
                                 *self._adaptive_state())

    # ---- what the adaptive mode (adaptive_force_motion_control.py) replaces ----------------------------------
    def _law_model(self) -> pin.Model:
        """The model (R) is solved with: the exact one here."""
        return self.model

    def _force_command(self, t: float, e_f: np.ndarray) -> np.ndarray:
        """The contact force asked for (N, on the target, hand frame): eq. 6.7 solved implicitly, its integral
        advanced by the rectangle rule on the current measured error (as the study's); NaN e_f (no measurement
        yet): the integral waits."""
        if np.all(np.isfinite(e_f)):
            if self._last_force_time is not None:
                self.integral += (t - self._last_force_time) * e_f
            self._last_force_time = t
        return implicit_force_command(self.force_setpoint, self.integral, self.config.gains)

    def _before_solve(self, sample_time: float, q: np.ndarray, v: np.ndarray, error: np.ndarray,
                      rate: np.ndarray) -> None:
        """Called each update before (R) is solved, with the state's sample time (the adaptive mode updates its
        estimates here)."""

    def _after_solve(self, realized: RealizedLaw) -> None:
        """Called with (R)'s solution (the adaptive mode keeps its contact rows for the next adaptation)."""

    def _adaptive_state(self) -> tuple:
        return None, None


def _rotation(quat_xyzw: np.ndarray) -> np.ndarray:
    quat = quat_xyzw / np.linalg.norm(quat_xyzw)
    return pin.Quaternion(quat[3], quat[0], quat[1], quat[2]).toRotationMatrix()
