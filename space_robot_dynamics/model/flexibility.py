"""The flexible part of a built SystemModel: where each modal coordinate and elastic joint sits in (q, v), the
elastic and damping generalized forces as matrices, and the readouts published on `flexible_modes`
(docs/flexibility.md secs. 3-5 and 7).

Generalized forces (eqs. 10, 12) act on a few coordinates x = q[selected_q] (rates v[selected_v]): the modal
joints' s_i = a_i delta_i and, per elastic joint, its link angle q and rotor angle phi = N theta_m:

    tau_selected = -K x - C xdot + f0,       V = 1/2 x^T K x - f0^T x + 1/2 sum k lambda_0^2

with K, C block-diagonal: K_i / a_i^2 and c_i / a_i^2 on s_i (eq. 10 on delta_i = s_i / a_i), and on (q, phi) of
an elastic joint k g g^T and b g g^T, g = (1, -1/N), f0 = k lambda_0 g (eq. 12).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin

from .coordinate_map import CoordinateMap
from .flexibility_config import DIRECTIONS


@dataclass(frozen=True)
class ModalCoordinate:
    name: str               # "<link>/bending_y_1": also its joint's name
    link: str
    direction: str          # bending_y, bending_z, torsion
    v: int                  # index of its joint (s = a delta) in v
    q: int
    scale: float            # a: s = a delta
    stiffness: float        # K on delta (N/m or N m/rad), eq. 10
    damping: float          # c on delta
    omega: float            # rad/s, the beam's own natural frequency (eq. 9)


@dataclass(frozen=True)
class ElasticJointCoordinates:
    joint: object           # ElasticJoint
    link_v: int
    link_q: int
    rotor_v: int
    rotor_q: int


class Flexibility:
    """See the module docstring. `links`: FlexibleLink objects, `elastic_joints`: ElasticJoint objects, both as
    built into `model`."""

    def __init__(self, model: pin.Model, links: tuple, elastic_joints: tuple):
        self.links = tuple(links)
        self.elastic_joints = tuple(elastic_joints)
        rows = {}
        for link in self.links:
            rows.update(link.tip_rows())
        self.coordinates = CoordinateMap(model, rows)

        def joint(name):
            return model.joints[model.getJointId(name)]

        modal = []
        for link in self.links:
            for direction in DIRECTIONS:
                family = link.families.get(direction)
                if family is None:
                    continue
                for i, name in enumerate(family.names):
                    j = joint(name)
                    modal.append(ModalCoordinate(name, link.name, direction, j.idx_v, j.idx_q, float(family.scale[i]),
                                                 float(family.stiffness[i]), float(family.damping[i]),
                                                 float(family.omega[i])))
        self.modal = tuple(modal)
        self.joints = tuple(ElasticJointCoordinates(e, joint(e.name).idx_v, joint(e.name).idx_q,
                                                    joint(e.rotor_joint).idx_v, joint(e.rotor_joint).idx_q)
                            for e in self.elastic_joints)
        n_modal, n_sel = len(self.modal), len(self.modal) + 2 * len(self.joints)
        self.selected_q = np.array([m.q for m in self.modal] + [i for j in self.joints for i in (j.link_q, j.rotor_q)],
                                   dtype=int)
        self.selected_v = np.array([m.v for m in self.modal] + [i for j in self.joints for i in (j.link_v, j.rotor_v)],
                                   dtype=int)
        self.K, self.C, self.f0 = np.zeros((n_sel, n_sel)), np.zeros((n_sel, n_sel)), np.zeros(n_sel)
        for k, m in enumerate(self.modal):
            self.K[k, k] = m.stiffness / m.scale ** 2
            self.C[k, k] = m.damping / m.scale ** 2
        for k, j in enumerate(self.joints):
            block = slice(n_modal + 2 * k, n_modal + 2 * k + 2)
            self.K[block, block] = j.joint.stiffness_block()
            self.C[block, block] = j.joint.damping_block()
            self.f0[block] = j.joint.offset_force()
        self._offset_energy = self._spring_offset_energy()
        self._scale = np.array([m.scale for m in self.modal])
        self._modal_stiffness = np.array([m.stiffness for m in self.modal])
        self._modal_damping = np.array([m.damping for m in self.modal])
        self._by_joint = {j.joint.name: j for j in self.joints}
        self.generated_joints = frozenset([m.name for m in self.modal] + list(self.coordinates.dependent_names)
                                          + [j.joint.rotor_joint for j in self.joints])

    def _spring_offset_energy(self) -> float:
        return 0.5 * sum(j.joint.config.stiffness * j.joint.config.spring_offset ** 2 for j in self.joints)

    def update_elastic_joint(self, model: pin.Model, config) -> None:
        """In place: the elastic joint `config.joint` takes the motor inertia, stiffness and damping of `config`
        (an ElasticJointConfig with the same gear ratio): its rotor body's inertia in `model` (eq. 11), its blocks of
        K, C and f0 (eq. 12, the arrays keep their identity), the readouts and the potential energy. The caller
        (SystemModel.set_elastic_joint) has checked the values."""
        index = next(i for i, j in enumerate(self.joints) if j.joint.name == config.joint)
        coordinates = self.joints[index]
        joint = replace(coordinates.joint, config=config)
        model.inertias[model.getJointId(joint.rotor_joint)] = pin.Inertia(0.0, np.zeros(3), joint.rotor_inertia())
        coordinates = replace(coordinates, joint=joint)
        self.joints = self.joints[:index] + (coordinates,) + self.joints[index + 1:]
        self.elastic_joints = tuple(joint if e.name == joint.name else e for e in self.elastic_joints)
        self._by_joint[joint.name] = coordinates
        block = slice(len(self.modal) + 2 * index, len(self.modal) + 2 * index + 2)
        self.K[block, block] = joint.stiffness_block()
        self.C[block, block] = joint.damping_block()
        self.f0[block] = joint.offset_force()
        self._offset_energy = self._spring_offset_energy()

    # ---- names and lookups ---------------------------------------------------------------------
    @property
    def names(self) -> tuple:
        """The `flexible_modes` names: modal coordinates, then per elastic joint `<joint>/motor` and
        `<joint>/deflection`."""
        joints = tuple(n for j in self.joints for n in (j.joint.name + "/motor", j.joint.name + "/deflection"))
        return tuple(m.name for m in self.modal) + joints

    def elastic(self, joint_name: str) -> ElasticJointCoordinates | None:
        return self._by_joint.get(joint_name)

    def actuation(self, joint_name: str, v_index: int) -> tuple[int, float]:
        """(v index, gain) where a command torque of that joint acts: its rotor with 1/N for an elastic joint
        (tau_phi = tau_m / N, eq. 12), the joint itself otherwise."""
        j = self._by_joint.get(joint_name)
        return (j.rotor_v, 1.0 / j.joint.gear_ratio) if j is not None else (v_index, 1.0)

    # ---- state completion --------------------------------------------------------------------------
    def relax(self, q: np.ndarray, v: np.ndarray | None = None, deflections: dict | None = None) -> None:
        """In place: each rotor at theta_m = q - lambda (lambda: `deflections[joint]`, default the spring's offset,
        i.e. the spring relaxed), its rate N qdot (no deflection rate); then the tip chains (eq. 14)."""
        deflections = deflections or {}
        for j in self.joints:
            n = j.joint.gear_ratio
            q[j.rotor_q] = n * (q[j.link_q] - deflections.get(j.joint.name, j.joint.config.spring_offset))
            if v is not None:
                v[j.rotor_v] = n * v[j.link_v]
        self.coordinates.project(q, v)

    # ---- readouts (flexible_modes, energy) ------------------------------------------------------
    def modal_coordinates(self, q: np.ndarray) -> np.ndarray:
        """delta (m or rad, eq. 2) per modal coordinate, in `modal` order."""
        return q[[m.q for m in self.modal]] / self._scale if self.modal else np.zeros(0)

    def readout(self, q: np.ndarray, v: np.ndarray, motor_torque: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, velocity, effort) in `names` order: modal delta, its rate and -(K delta + c delta_dot)
        (eq. 10); per elastic joint theta_m, its rate and the actuator torque tau_m (motor_torque, in `joints`
        order; zero when not given), then lambda = q - theta_m, its rate and the spring and damper torque on the
        link -k (lambda - lambda_0) - b lambda_dot (eq. 12)."""
        n = len(self.names)
        position, velocity, effort = np.zeros(n), np.zeros(n), np.zeros(n)
        k = len(self.modal)
        if k:
            delta = q[self.selected_q[:k]] / self._scale
            rate = v[self.selected_v[:k]] / self._scale
            position[:k], velocity[:k] = delta, rate
            effort[:k] = -(self._modal_stiffness * delta + self._modal_damping * rate)
        for i, j in enumerate(self.joints):
            c, gear = j.joint.config, j.joint.gear_ratio
            theta, theta_rate = q[j.rotor_q] / gear, v[j.rotor_v] / gear
            lam, lam_rate = q[j.link_q] - theta, v[j.link_v] - theta_rate
            row = k + 2 * i
            position[row], velocity[row] = theta, theta_rate
            effort[row] = 0.0 if motor_torque is None else motor_torque[i]
            position[row + 1], velocity[row + 1] = lam, lam_rate
            effort[row + 1] = -c.stiffness * (lam - c.spring_offset) - c.damping * lam_rate
        return position, velocity, effort

    def potential_energy(self, q: np.ndarray) -> float:
        """V (J) of eqs. 10 and 12."""
        x = q[self.selected_q]
        return float(0.5 * x @ self.K @ x - self.f0 @ x + self._offset_energy)
