"""Gravity on every body of a multibody system relative to the free-falling integration frame (docs/orbit.md sec. 4).

In the frame W (origin on the reference orbit at r_O, axes inertial; lvlh_frame.py) every mass element feels the
central body's gravity at its place less the gravity at W's origin, which W's own fall takes away (a uniform
inertial force -g(r_O)). Nothing else: W does not turn, so there are no Coriolis, centrifugal or Euler terms.
For a rigid body of mass m, centre of mass c (W), inertia I_c about it, this tidal field acts as
- a force through the centre of mass, exact for the point mass (central_body_gravity.point_mass_difference) and
  with J2's difference added when on: F = m (g(r_O + c) - g(r_O));
- a couple, the gravity-gradient torque about the centre of mass to second order in the body's size over its
  distance R = r_O + c from the central body's centre: tau = 3 mu / |R|^5 R x (I_c R) (Hughes 2004, eq. 8.2-9;
  Wie 2008, eq. 6.82). Its next term is ~ (size / |R|) = 1e-6 smaller. J2's own gradient torque, ~J2 (R_e/R)^2 =
  1e-3 of this one, is left out (docs/orbit.md says so).
Pinocchio takes them as generalized forces: with every body's wrench w_k = (F_k, c_k x F_k + tau_k) in W about its
origin, tau_ext = sum_k J_k^T w_k, J_k the body's Jacobian in the WORLD convention; per degree of freedom i this is
S_i . (the sum of w_k over the bodies moved by i), S_i = column i of Pinocchio's data.J (computeJointJacobians).
The same J^T f as an aba fext (Featherstone 2008, ch. 7), made in two matrix products instead of one Python object
per body; their power is tau_ext . v.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from .central_body_gravity import j2_acceleration, point_mass_difference
from .orbit_config import OrbitConfig


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise a x b of (n, 3) arrays (numpy.cross's axis handling costs more than the products at n ~ 10)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    return np.column_stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


class TidalWrenches:
    """The tidal force and gravity-gradient torque on each massive body of `model` (module docstring).

    evaluate(data, r_O) after computeJointJacobians: per body (rows in `joints` order) the force F (N), the torque
    tau (N m, about the body's centre of mass), both in W's axes, and the centre of mass c (m, W); and their
    generalized force (N m or N per coordinate of v)."""

    def __init__(self, model: pin.Model, config: OrbitConfig, pole: np.ndarray):
        self.config = config
        self.pole = np.asarray(pole, float)
        self.joints = [j for j in range(1, model.njoints) if model.inertias[j].mass > 0.0]
        self.mass = np.array([model.inertias[j].mass for j in self.joints])
        self.lever = np.array([model.inertias[j].lever for j in self.joints])[:, :, None]
        self.inertia = np.array([model.inertias[j].inertia for j in self.joints])     # about the CoM, joint axes
        self.total_mass = float(self.mass.sum())
        # moves[i, k]: coordinate i of v moves body k (k's joint is i's joint or below it)
        self.moves = np.zeros((model.nv, len(self.joints)))
        for k, j in enumerate(self.joints):
            joint = model.joints[j]
            for i in _support_columns(model, j) | set(range(joint.idx_v, joint.idx_v + joint.nv)):
                self.moves[i, k] = 1.0
        self.force = self.torque = self.com = self.moment = None
        self.generalized_force = np.zeros(model.nv)

    def evaluate(self, data: pin.Data, r_origin: np.ndarray) -> np.ndarray:
        """F, tau, c of every body at the placements data.oMi and their generalized force (returned, and kept in
        self.generalized_force), with data.J from the same computeJointJacobians; W's origin at r_origin (W axes, m
        from the central body's centre). self.moment: each body's c x F + tau (about W's origin)."""
        config = self.config
        placements = list(data.oMi)
        frames = np.array([placements[j].np for j in self.joints])
        rotations = frames[:, :3, :3]
        com = frames[:, :3, 3] + (rotations @ self.lever)[:, :, 0]
        mu = config.gravitational_parameter
        acceleration = point_mass_difference(r_origin, com, mu)
        far = r_origin + com
        if config.j2:
            acceleration += j2_acceleration(far, mu, config.equatorial_radius, config.j2_coefficient, self.pole) \
                - j2_acceleration(r_origin, mu, config.equatorial_radius, config.j2_coefficient, self.pole)
        force = self.mass[:, None] * acceleration
        far_local = (far[:, None, :] @ rotations)[:, 0, :]                  # R^T far
        inertia_far = (rotations @ (self.inertia @ far_local[:, :, None]))[:, :, 0]     # I_world far
        distance2 = np.einsum("ni,ni->n", far, far)
        crosses = cross_rows(np.concatenate((far, com)), np.concatenate((inertia_far, force)))    # one call: both
        count = len(self.joints)
        torque = (3.0 * mu / (distance2 * distance2 * np.sqrt(distance2)))[:, None] * crosses[:count]
        moment = crosses[count:] + torque
        self.force, self.torque, self.com, self.moment = force, torque, com, moment
        per_coordinate = self.moves @ np.hstack((force, moment))            # (nv, 6): wrench on what each moves
        self.generalized_force = np.einsum("ji,ij->i", data.J, per_coordinate)
        return self.generalized_force


def _support_columns(model: pin.Model, joint: int) -> set[int]:
    """The coordinates of v of `joint`'s ancestors (the joints whose motion carries its body)."""
    columns = set()
    parent = model.parents[joint]
    while parent > 0:
        j = model.joints[parent]
        columns.update(range(j.idx_v, j.idx_v + j.nv))
        parent = model.parents[parent]
    return columns
