"""Optional vibration suppression of a flexible system: modal-rate feedback through the joint torques
(docs/flexibility.md sec. 9).

Elastic coordinates e: the flexible links' modal coordinates s_i and the elastic joints' deflections
lambda = q - theta_m; their rates edot = E v_r (v_r the reduced velocity, eq. 15). At the current configuration the
arm's motor torques tau accelerate them by B tau, B = E M_r^-1 A (M_r = T^T M T from Pinocchio's crba; A maps a
joint's command to its generalized force: 1/N on an elastic joint's rotor, 1 on a rigid joint). The term asks for
the elastic decelerations of a modal damper of ratio zeta on each coordinate, -2 zeta omega_e edot_e, and takes the
torques that come closest (least squares, the elastic coordinates outnumbering the joints):

    tau_vs = -B^+ (2 zeta Omega edot),      Omega = diag(omega_e), omega_e = sqrt(K_e / m_e)

with K_e the coordinate's stiffness (eqs. 10, 12) and m_e = 1 / (E M_r^-1 E^T)_ee its apparent mass, both at the
configuration of the first call (the controller's first state). The measured effect on a slew is in
config/controller.yaml and test/test_flexible_control.py.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel

RCOND = 1e-3          # least squares: directions the joints barely reach are not chased


class ModalRateDamping:
    def __init__(self, system: SystemModel, arm_joints: tuple, damping_ratio: float):
        flexibility = system.flexibility
        self.model, self.coordinates = system.model, system.coordinates
        self.data = system.model.createData()
        reduced_of = np.full(system.nv, -1)
        reduced_of[self.coordinates.independent_v] = np.arange(self.coordinates.nr)
        elastic = [flexibility.elastic(n) for n in arm_joints]
        n_modal, joints = len(flexibility.modal), [j for j in flexibility.joints]
        self.E = np.zeros((n_modal + len(joints), self.coordinates.nr))
        stiffness = []
        for i, mode in enumerate(flexibility.modal):
            self.E[i, reduced_of[mode.v]] = 1.0
            stiffness.append(mode.stiffness / mode.scale ** 2)
        for k, j in enumerate(joints):
            self.E[n_modal + k, reduced_of[j.link_v]] = 1.0
            self.E[n_modal + k, reduced_of[j.rotor_v]] = -1.0 / j.joint.gear_ratio
            stiffness.append(j.joint.config.stiffness)
        self.A = np.zeros((self.coordinates.nr, len(arm_joints)))
        for k, (name, j) in enumerate(zip(arm_joints, elastic)):
            if j is not None:
                self.A[reduced_of[j.rotor_v], k] = 1.0 / j.joint.gear_ratio
            else:
                self.A[reduced_of[system.v_index(name)], k] = 1.0
        self._stiffness, self._ratio = np.array(stiffness), damping_ratio
        self.gain: np.ndarray | None = None          # 2 zeta omega_e (1/s), at the first call

    def _reduced_mass(self, q: np.ndarray) -> np.ndarray:
        T = self.coordinates.T
        return T.T @ pin.crba(self.model, self.data, q) @ T

    def torque(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """tau_vs (N m, arm_joints order) at the flexible system's state (q, v)."""
        mass = self._reduced_mass(q)
        if self.gain is None:
            apparent_mass = 1.0 / np.diag(self.E @ np.linalg.solve(mass, self.E.T))
            self.gain = 2.0 * self._ratio * np.sqrt(self._stiffness / apparent_mass)
        mobility = np.linalg.solve(mass, self.A)                           # M_r^-1 A
        rates = self.E @ v[self.coordinates.independent_v]
        return -np.linalg.lstsq(self.E @ mobility, self.gain * rates, rcond=RCOND)[0]
