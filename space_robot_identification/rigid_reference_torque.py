"""The motor torques of seed 003's test: the rigid (reference) model's inverse dynamics along the desired
trajectory (sec. 4: the motor "is actuated with driving torques obtained with the use of inverse dynamics approach
for reference (rigid joints) model"), with the motor inertia being evaluated (docs/identification.md, choice 1).

The rigid model is the elastic one with every spring infinitely stiff: theta_m = q, so each rotor turns by
phi = N q (docs/flexibility.md eq. 11): the constant map v_E = T v_r, T the identity on every coordinate but the
rotors, whose rows carry N in their joint's column. Lagrange's equations of L_r(q_r, v_r) = L_E(q_E(q_r), T v_r)
are T^T times the expanded model's (as flexibility.md eq. 16):

    M_r = T^T M_E T,    h_r(q_r, v_r) = T^T h_E(q_E, T v_r),                                      (1)

and the motor torque tau_m, which reaches phi as tau_m / N (eq. 12), is carried back by T^T as tau_m on q. This is
the rigid counterpart the controller uses (control_model.py: an inertia N I_r on the joint's child body, (1 - N) I_r
on its parent, an armature N (N - 1) I_r), written through the same expanded model so that a motor inertia set with
SystemModel.set_elastic_joint reaches it (test_identification_elastic_joint.py checks one against the other).

Along the desired trajectory (q_d, v_d, a_d of every arm joint), with the floating bases free and at rest at the
start (sec. 3.2: "both manipulator and satellite have zero initial velocity"), the bases' momentum stays zero: no
external force acts in the plane of motion. Their rows of M_r v_r are that momentum in the base frame, so

    M_bb v_b = -M_bj v_j,                                                                           (2)

their equations of motion give their accelerations, and the arm rows the torques (computed_torque.py eqs. 1-3:
the generalized inertia of a free-floating arm, with no force on the bases):

    M_bb a_b = -y_b,    tau_j = M_jb a_b + y_j,    y = h_r + M_r [0; a_j] = T^T rnea(q_E, T v_r, T [0; a_j])   (3)

(M_E from `pinocchio.crba`, y from one `pinocchio.rnea`). Nothing here depends on the bases' poses
(prescribed_motion_dynamics.py), so the torques are a function of the desired trajectory and the model alone.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel

_dposv = lapack.dposv


class RigidReferenceTorque:
    """Eqs. (1)-(3) for `system` (bases free, every other one-DOF joint but the rotors in `joints`, the trajectory's
    order)."""

    def __init__(self, system: SystemModel, joints: tuple, field: str):
        model = system.model
        flexibility = system.flexibility
        elastic = {} if flexibility is None else {j.joint.name: j for j in flexibility.joints}
        rotors = {j.rotor_v for j in elastic.values()}
        bases = [s.base_joint for s in system.subtrees if s.base_joint is not None]
        base_v = [i for name in bases for i in range(system.v_slice(name).start, system.v_slice(name).stop)]
        others = [model.names[j] for j in range(1, model.njoints)
                  if model.names[j] not in bases and model.joints[j].idx_v not in rotors
                  and model.names[j] not in joints]
        if others:
            raise ConfigError(field, f"joints {others} have no desired trajectory: every one-DOF joint of the model "
                                     "(but the elastic joints' rotors) must be an arm joint with one")
        rigid_v = base_v + [system.v_index(n) for n in joints]
        self.nb = len(base_v)
        self.T = np.zeros((model.nv, len(rigid_v)))
        self.T[rigid_v, np.arange(len(rigid_v))] = 1.0
        for k, name in enumerate(joints):
            if name in elastic:
                self.T[elastic[name].rotor_v, self.nb + k] = elastic[name].joint.gear_ratio
        self.Tt = np.ascontiguousarray(self.T.T)
        self.system, self.model, self.data = system, model, model.createData()
        self.joint_q = np.array([system.q_slice(n).start for n in joints], dtype=int)
        self.rotor_q = np.array([elastic[n].rotor_q for n in joints if n in elastic], dtype=int)
        self.rotor_gain = np.array([elastic[n].joint.gear_ratio for n in joints if n in elastic])
        self.rotor_joint = np.array([k for k, n in enumerate(joints) if n in elastic], dtype=int)
        nv = model.nv
        self._full = np.array([min(i, j) * nv + max(i, j) for i in range(nv) for j in range(nv)])
        self.q = system.neutral()

    def torques(self, positions: np.ndarray, rates: np.ndarray, accelerations: np.ndarray) -> np.ndarray:
        """tau_j (len, joints; N m) of eq. (3) at each row of the desired (q_d, v_d, a_d)."""
        model, data, T, Tt, nb = self.model, self.data, self.T, self.Tt, self.nb
        q = self.q
        out = np.empty(positions.shape)
        v_r, a_r = np.zeros(T.shape[1]), np.zeros(T.shape[1])
        for k in range(len(positions)):
            q[self.joint_q] = positions[k]
            q[self.rotor_q] = self.rotor_gain * positions[k, self.rotor_joint]
            mass = pin.crba(model, data, q).take(self._full).reshape(model.nv, model.nv)
            mass_r = Tt.dot(mass).dot(T)
            v_r[nb:] = rates[k]
            a_r[nb:] = accelerations[k]
            if nb:
                m_bb = mass_r[:nb, :nb]
                v_r[:nb] = _solve(m_bb, -mass_r[:nb, nb:].dot(rates[k]))
            y = Tt.dot(pin.rnea(model, data, q, T.dot(v_r), T.dot(a_r)))
            if nb:
                out[k] = mass_r[nb:, :nb].dot(_solve(m_bb, -y[:nb])) + y[nb:]
            else:
                out[k] = y
        return out


def _solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    _, x, info = _dposv(matrix, rhs, 0, 0, 0)
    if info:
        raise np.linalg.LinAlgError(f"base mass matrix not positive definite (LAPACK dposv info {info})")
    return x
