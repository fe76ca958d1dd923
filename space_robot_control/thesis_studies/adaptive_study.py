"""Seed 004 ch. 7 reproduction (sec. 7.4, Table 7.2): the Hubble Space Telescope held by the 3000 kg servicer's
6-DOF arm, adaptive inverse-dynamics control (space_robot_control/adaptive_inverse_dynamics.py, eqs. 7.3, 7.8,
7.11) realized on the base's thruster wrench and the joint torques as in ch. 6 (force_motion_study.py,
space_robot_control/hybrid_force_motion.py), on the same welded-contact plant (welded_contact_plant.py), with the
Hubble's inertial parameters unknown: the controller starts from wrong ones and adapts them.

Differences from ch. 6's loop (the hooks of ForceMotionStudy):
- the controller solves (R) on the estimated model (EstimatedModel), updated every step by eq. 7.11 with the
  plant's acceleration at that instant;
- the force law is eq. 7.3's lambda_c = lambda_d - K_F e_F (no integral), an algebraic loop in continuous time
  (its solution e_F = sigma / (1 + K_F), eq. 7.17, sigma the model error's share of the force). Sampled, the
  direct form diverges for K_F > 1 (e_k = -K_F e_{k-1} + sigma); the relaxed form
      f_cmd,k = (K_F f_cmd,k-1 + f_d - K_F e_F,k-1) / (1 + K_F)
  has the same fixed point and reaches it in one step for a constant sigma (first step: f_cmd = f_d).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import CommandError, ConfigError

from ..adaptive_inverse_dynamics import PARAMETER_NAMES, AdaptationLaw, EstimatedModel
from ..hybrid_force_motion import ContactRows, HybridForceMotionLaw
from .force_motion_study import ForceMotionSettings, ForceMotionStudy, StudyResult, read_force_motion_settings

_GROUPS = {"mass": slice(0, 1), "first_moment": slice(1, 4), "inertia": slice(4, 10)}


@dataclass(frozen=True)
class AdaptiveSettings:
    """ForceMotionSettings plus the adaptation (config/studies/hubble_adaptive.yaml documents each entry)."""

    base: ForceMotionSettings
    estimated_joints: tuple
    initial_scale: float
    gamma_inverse: dict
    lyapunov_q: float


def read_adaptive_settings(reader: ConfigReader) -> AdaptiveSettings:
    adaptation = reader.sub("adaptation")
    gamma = adaptation.sub("gamma_inverse")
    settings = AdaptiveSettings(
        base=read_force_motion_settings(reader),
        estimated_joints=tuple(adaptation.string_list("estimated_joints")),
        initial_scale=adaptation.number("initial_scale", exclusive_minimum=0.0),
        gamma_inverse={name: gamma.number(name, minimum=0.0) for name in _GROUPS},
        lyapunov_q=adaptation.number("lyapunov_q", exclusive_minimum=0.0),
    )
    gamma.reject_unknown()
    adaptation.reject_unknown()
    return settings


class AdaptiveStudy(ForceMotionStudy):
    REQUIREMENTS = (*ForceMotionStudy.REQUIREMENTS, "max_lyapunov_increase")

    def __init__(self, settings: AdaptiveSettings):
        super().__init__(settings.base)
        self.adaptive = settings
        model = self.system.model
        joints = []
        for name in settings.estimated_joints:
            try:
                joints.append(self.system.joint_id(name))
            except CommandError as exc:
                raise ConfigError("adaptation.estimated_joints", exc.problem) from exc
        self.estimated = EstimatedModel(model, joints)
        self.initial_estimate = settings.initial_scale * self.estimated.true_parameters
        self.estimated.set_estimate(self.initial_estimate)
        contact = ContactRows(self.estimated.model, self.plant.joint1, self.plant.placement1, self.plant.joint2,
                              self.plant.placement2)
        self.law_hat = HybridForceMotionLaw(self.estimated.model, contact, self.law.actuated, self.law.motion,
                                            self.law.force_rows)
        gamma = np.concatenate([np.concatenate([np.full(g.stop - g.start, settings.gamma_inverse[n])
                                                for n, g in _GROUPS.items()]) for _ in joints])
        independent = np.concatenate((self.base_v, self.arm_v))
        motion_rows = np.flatnonzero(np.isin(independent, self.law.motion))
        g = settings.base.gains
        self.adaptation = AdaptationLaw(self.estimated, g.kp, g.kd, settings.lyapunov_q, gamma, independent,
                                        motion_rows)
        self._force_command = None
        self._lyapunov = float("nan")
        self._largest_increase = 0.0       # max over control steps of V(t_k+1) - V(t_k)

    def control_law(self) -> HybridForceMotionLaw:
        return self.law_hat

    def force_command(self, force: np.ndarray, integral: np.ndarray) -> np.ndarray:
        s = self.settings
        if self._force_command is None:
            self._force_command = s.contact_force.copy()
        else:
            kf = s.gains.kf
            error = force[:3] - s.contact_force
            self._force_command = (kf * self._force_command + s.contact_force - kf * error) / (1.0 + kf)
        return -self._force_command[self.force_rows]

    def adapt(self, q, v, tau, error, error_rate) -> None:
        estimate = self.estimated.estimate()
        lyapunov = self.adaptation.lyapunov(error, error_rate, estimate)
        if np.isfinite(self._lyapunov):
            self._largest_increase = max(self._largest_increase, lyapunov - self._lyapunov)
        self._lyapunov = lyapunov
        acceleration = self.plant.acceleration(q, v, tau)[0]
        J, _ = self.law_hat.contact.evaluate(q, v)
        rate = self.adaptation.rate(q, v, acceleration, J, error, error_rate)
        self.estimated.set_estimate(estimate + self.settings.dt * rate)

    def extra_record(self) -> dict:
        return {"estimates": self.estimated.estimate(), "lyapunov": self._lyapunov,
                "estimate_ratio": self.estimated.estimate()[self._shown] / self.estimated.true_parameters[self._shown]}

    @property
    def _shown(self) -> np.ndarray:
        """The estimated parameters whose true value is not zero (their ratio to it is plotted)."""
        return np.flatnonzero(np.abs(self.estimated.true_parameters) > 1e-9)

    def run(self, duration: float | None = None, progress=None) -> StudyResult:
        result = super().run(duration, progress)
        series = result.series
        lyapunov = series["lyapunov"]
        names = [f"{self.system.model.names[j]}.{p}" for j in self.estimated.joints for p in PARAMETER_NAMES]
        final = series["estimates"][-1]
        result.summary.update({
            "estimated_parameters": [names[i] for i in self._shown],
            "final_parameter_estimates": {name: {"estimate": float(final[i]), "true": float(true),
                                                 "initial": float(self.initial_estimate[i])}
                                          for i, (name, true) in enumerate(zip(names, self.estimated.true_parameters))},
            "lyapunov_initial": float(lyapunov[0]),
            "lyapunov_final": float(lyapunov[-1]),
            # the largest step-to-step rise of V over the run (every control step), relative to V(0)
            "max_lyapunov_increase": self._largest_increase / float(lyapunov[0]),
            "max_parameter_error_bound": float(np.sqrt(lyapunov[0] * self.adaptation.gamma_inverse.max())),
            "max_parameter_error": float(np.abs(series["estimates"] - self.estimated.true_parameters).max()),
        })
        return result
