"""Adaptive inverse-dynamics control (seed 004 ch. 7, eqs. 7.3, 7.8, 7.11) as the controller node's force_motion mode
with `force_motion.adaptation` configured (docs/controllers.md sec. 3.4): the hybrid mode of force_motion_control.py
solving (R) on a model whose estimated bodies (the target's, typically) carry the current estimates pi_hat, adapted
by eq. 7.11 (adaptive_inverse_dynamics.py's AdaptationLaw on Pinocchio's joint-torque regressor). The thesis study
(thesis_studies/adaptive_study.py) runs the same law on its own plant, with the plant's exact acceleration; it is this
mode's oracle.

What the node has that the study does not, and what it does about it:
- no acceleration measurement: eq. 7.8's Y(q, v, a) takes a = (v_k - v_k-1) / (t_k - t_k-1) between two
  consecutive measured states, t their sample times (the header stamps, not the control instants: under ROS 2 a
  control period may see no new state, or two), the mean acceleration in between (Pinocchio's a is the derivative
  of v in the same LOCAL representation); so each update adapts with the regressor of the previous state (q, v,
  errors and contact rows of t_k-1): one period late. A state whose parts come from different instants (sample
  time NaN) or an old one again does not adapt;
- the force law is eq. 7.3's, lambda_c = lambda_d - K_F e_F (no integral), in the study's relaxed sampled form
  f*_k = (K_F f_k-1 + f_d - K_F e_F,k) / (1 + K_F) (the direct form diverges for K_F > 1), e_F measured on
  grasp/wrench; f_d until the first measurement. Its fixed point is eq. 7.17's. With the measured force d control
  periods old (the plant's force answers the command algebraically, e_k = f_k-d + sigma - f_d), the loop
  f_k = a (f_k-1 - f_k-d) + ..., a = K_F / (1 + K_F), has its roots inside the unit circle for d <= 2 but not
  for d >= 3 when a -> 1 (K_F 80: a = 0.988). In the lockstep graph d = 1; under ROS 2 the loop state ->
  controller -> command -> dynamics -> grasp/wrench -> controller takes 3 or more periods, and the study's form
  diverges (measured: the mass estimate at -14000 kg within 0.2 s). So only the fraction
  `force_update_fraction` (g) of each relaxed step is taken: f_k = f_k-1 + g (f*_k - f_k-1), the same fixed point,
  a loop gain of g a per period, which g = 0.1 keeps stable to ~10 periods of delay at the cost of ~10 periods
  of settling;
- V of eq. 7.12 needs the true parameters: those of the model file (the simulator's, when the node runs against
  the simulation; against real hardware V is a figure about the file, not the target). The mode reports V and the
  largest step-to-step rise of V since the grasp.

The estimates restart from `initial_scale` x the model file's values at every grasp (a new grasp may hold another
target). An adaptation step that would leave the physically consistent set (a body's pseudo-inertia, Pinocchio's
`Inertia.toPseudoInertia`, positive definite: positive mass, inertia about the CoM positive definite with the
triangle inequalities; Wensing et al. 2017) is dropped and the estimate held, a crude stand-in for a projection onto
the set; `held_steps` counts such steps (the node says WARN). Units: kg, kg m, kg m^2 (Pinocchio's dynamic
parameters: m, m c, I about the joint origin, joint frame).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .adaptive_inverse_dynamics import PARAMETER_NAMES, AdaptationLaw, EstimatedModel
from .force_motion_control import ADAPTED_GROUPS, ForceMotionConfig, ForceMotionController

_GROUP_SIZES = {"mass": 1, "first_moment": 3, "inertia": 6}


class AdaptiveForceMotionController(ForceMotionController):
    """The force_motion mode with adaptation (module docstring)."""

    def __init__(self, system: SystemModel, config: ForceMotionConfig, bus_subtree: str, source: str | None = None):
        super().__init__(system, config, bus_subtree, source)
        adaptation = config.adaptation
        joints = []
        for name in adaptation.estimated_joints:
            try:
                joints.append(system.joint_id(name))
            except CommandError as exc:
                raise ConfigError("force_motion.adaptation.estimated_joints", exc.problem, source) from exc
        self.estimated = EstimatedModel(self.model, joints)
        self.parameter_names = tuple(f"{self.model.names[j]}.{p}" for j in joints for p in PARAMETER_NAMES)
        self.initial_estimate = adaptation.initial_scale * self.estimated.true_parameters
        per_body = np.concatenate([np.full(_GROUP_SIZES[g], adaptation.gamma_inverse[g]) for g in ADAPTED_GROUPS])
        independent = np.concatenate((self.base_v, self.arm_v))
        self.adaptation = AdaptationLaw(self.estimated, config.gains.kp, config.gains.kd, adaptation.lyapunov_q,
                                        np.tile(per_body, len(joints)), independent,
                                        np.flatnonzero(np.isin(independent, self.motion)))
        self.lyapunov = self.lyapunov_at_grasp = float("nan")
        self.largest_lyapunov_increase = 0.0    # max over updates of V(t_k) - V(t_k-1) since the grasp
        self._previous = None                   # (t, q, v, error, rate, J) of the last adapted-on state
        self._pending = None                    # this update's (t, q, v, error, rate), waiting for (R)'s J
        self._force = None                      # the relaxed eq. 7.3's last force command (N, on the target)
        self.held_steps = 0                     # adaptation steps not taken since the grasp (module docstring)

    def start(self, q: np.ndarray, v: np.ndarray) -> None:
        self.estimated.set_estimate(self.initial_estimate)
        super().start(q, v)
        self.lyapunov = self.lyapunov_at_grasp = float("nan")
        self.largest_lyapunov_increase = 0.0
        self._previous = self._pending = self._force = None
        self.held_steps = 0

    def _law_model(self) -> pin.Model:
        return self.estimated.model

    def _force_command(self, t: float, e_f: np.ndarray) -> np.ndarray:
        """Eq. 7.3 relaxed (module docstring)."""
        kf, desired = self.config.gains.kf, self.force_setpoint
        if self._force is None:
            self._force = desired.copy()
        elif np.all(np.isfinite(e_f)):
            relaxed = (kf * self._force + desired - kf * e_f) / (1.0 + kf)
            self._force = self._force + self.config.adaptation.force_update_fraction * (relaxed - self._force)
        return self._force

    def _before_solve(self, sample_time: float, q: np.ndarray, v: np.ndarray, error: np.ndarray,
                      rate: np.ndarray) -> None:
        """Eq. 7.11 from the previous state, with the mean acceleration since then; V (eq. 7.12) now. Nothing for a
        state of unknown instant (NaN) or not newer than the previous one."""
        self._pending = None
        if not sample_time > (-np.inf if self._previous is None else self._previous[0]):
            return
        estimate = self.estimated.estimate()
        if self._previous is not None:
            t0, q0, v0, error0, rate0, J0 = self._previous
            step = sample_time - t0
            acceleration = (v - v0) / step
            proposed = estimate + step * self.adaptation.rate(q0, v0, acceleration, J0, error0, rate0)
            if not np.all(np.isfinite(proposed)):
                raise CommandError("state", "the adaptation gives non-finite estimates at this state")
            if physically_consistent(proposed):
                estimate = proposed
                self.estimated.set_estimate(estimate)
            else:
                self.held_steps += 1
        lyapunov = self.adaptation.lyapunov(error, rate, estimate)
        if np.isfinite(self.lyapunov):
            self.largest_lyapunov_increase = max(self.largest_lyapunov_increase, lyapunov - self.lyapunov)
        else:
            self.lyapunov_at_grasp = lyapunov
        self.lyapunov = lyapunov
        self._pending = (sample_time, q.copy(), v.copy(), error, rate)

    def _after_solve(self, realized) -> None:
        """The state just adapted on becomes the previous one, with the contact rows (R) was solved with (the
        same J at the same q, v: not evaluated twice)."""
        if self._pending is not None:
            self._previous, self._pending = (*self._pending, realized.contact_jacobian), None

    def _adaptive_state(self) -> tuple:
        return self.estimated.estimate(), self.lyapunov


def physically_consistent(parameters: np.ndarray) -> bool:
    """Whether every body's 10 dynamic parameters (Pinocchio's order) have a positive-definite pseudo-inertia."""
    for k in range(0, len(parameters), 10):
        pseudo = pin.Inertia.FromDynamicParameters(parameters[k:k + 10]).toPseudoInertia().toMatrix()
        try:
            np.linalg.cholesky(pseudo)
        except np.linalg.LinAlgError:
            return False
    return True


def build_force_motion_controller(system: SystemModel, config: ForceMotionConfig, bus_subtree: str,
                                  source: str | None = None) -> ForceMotionController:
    """The force_motion mode the configuration asks for: adaptive (ch. 7) with `adaptation`, else ch. 6's."""
    kind = ForceMotionController if config.adaptation is None else AdaptiveForceMotionController
    return kind(system, config, bus_subtree, source)
