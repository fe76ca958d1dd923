"""Generalized Jacobian J* of a free-floating arm (seed 004 sec. 5.4, eq. 5.30 and the text after it: the reduced
Jacobian generalizes Umetani & Yoshida's Generalized Jacobian), in two forms that agree to round-off
(test_control_generalized_jacobian.py): from Pinocchio's centroidal momentum map (GeneralizedJacobian, the
controller's, below) and from the mechanical connection's fields (`generalized_jacobian`, the holonomy monitor's,
at the end); and the dimensionless conditioning figures both report.

Momentum. `pinocchio.computeCentroidalMap` gives A(q) (6 x nv): h_G = A v, the spatial momentum of the whole
model about its centre of mass G, linear rows first, world axes. Keeping the columns of the servicer's
coordinates (bus free flyer, arm joints, wheels) gives the servicer's own momentum about G; shifted to the
servicer's centre of mass c_s with L_s = L_G + (G - c_s) x P, rows

    A_s = [A_lin; A_ang + [G - c_s]x A_lin]        (servicer momentum about c_s, world axes)

so that h_s = A_s,b xi_b + A_s,m qdot + A_s,w w (xi_b: bus twist, Pinocchio LOCAL; qdot: arm rates; w: wheel
rates). With no external force h_s is constant (zero for a robot released at rest): seed 004 eqs. 2.24-2.26.

End effector. J (6 x nv) = `getFrameJacobian(..., LOCAL_WORLD_ALIGNED)`: velocity of the frame origin and
angular velocity, world axes, V_EE = J_b xi_b + J_m qdot (+ J_w w = 0: wheels do not move the hand).

Two allowed-motion sets, both giving V_EE = J* qdot + V_drift:
- free (`mode="free"`, the classic form, wheels locked at their rates w = 0 relative): the bus absorbs
  everything,  xi_b = A_s,b^-1 (h_s - A_s,m qdot),  so
      J* = J_m - J_b A_s,b^-1 A_s,m,          V_drift = J_b A_s,b^-1 h_s                       (GJ)
- attitude held (`mode="held"`, the wheels hold the bus: omega_b = 0): the bus translates and the wheels take
  the angular momentum; unknowns u = (bus linear velocity, LOCAL; wheel rates) solve
      [A_s,b(:, linear) | A_s,w] u = h_s - A_s,m qdot   (least squares; exact with three independent wheels)
  and J* = J_m - J_b(:, linear) X_lin A_s,m with X = pinv([A_s,b(:, lin) | A_s,w]).
Velocities: m/s, rad/s; J* columns per unit joint rate (rad/s or m/s for a prismatic joint).

Dynamic singularities: the singular values of the length-scaled J* (linear rows divided by `length_scale`,
prismatic columns multiplied by it, so the figures are dimensionless: `jacobian_scale`) are reported; sigma_min -> 0
is a dynamic singularity, and the manipulability is their product, sqrt(det(Js Js^T)) (`conditioning`).
`damped_pseudo_inverse` is the damped least-squares inverse with the damping raised smoothly as sigma_min falls
below a threshold (Nakamura & Hanafusa 1986; Maciejewski & Klein 1988):
    lambda^2 = (1 - (sigma_min / eps)^2) lambda_max^2  for sigma_min < eps, else 0,
    J^# = V diag(sigma_i / (sigma_i^2 + lambda^2)) U^T.

From the mechanical connection (space_robot_monitoring/mechanical_connection.py; docs/holonomy.md sec. 8): with
zero momentum the base moves as xi_b = K qdot (K = -H_b^-1 H_bm for the free robot, or the combined momentum + grasp
connection while the target is held), so
    V_EE = J_b xi_b + J_m qdot = (J_m + J_b K) qdot = J* qdot,   J* = J_m - J_b H_b^-1 H_bm,
computed as J X^T with X the connection's fields X_i = (K_i, e_i), one per shape joint. For the free robot's
connection it is the free form above at zero momentum (the other shape joints, e.g. the wheels, at rest).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel

MODES = ("free", "held")
_PRISMATIC = ("JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned")


@dataclass(frozen=True)
class GeneralizedJacobianValue:
    """J* and what goes with it at one configuration.

    matrix: J* (6 x n_arm), [linear; angular] rows, world axes (m/s and rad/s per unit joint rate);
    drift: V_drift (6), the end-effector twist the servicer's momentum causes with the arm at rest;
    singular_values: of the length-scaled J*, decreasing (dimensionless, min(6, n_arm) of them);
    manipulability: their product (sqrt(det(Js Js^T)) for n_arm >= 6).
    """

    matrix: np.ndarray
    drift: np.ndarray
    singular_values: np.ndarray
    manipulability: float

    @property
    def sigma_min(self) -> float:
        """The dynamic-singularity measure: smallest singular value of the length-scaled J*."""
        return float(self.singular_values[-1])


class GeneralizedJacobian:
    """J* of the frame `end_effector` for the servicer subtree `bus_subtree` of a SystemModel.

    mode: "free" (classic Umetani-Yoshida, wheels locked) or "held" (wheels hold the bus attitude).
    length_scale (m): for the dimensionless singular values (e.g. the arm's reach).
    """

    def __init__(self, system: SystemModel, end_effector: str, bus_subtree: str = "servicer", mode: str = "free",
                 length_scale: float = 1.0):
        if mode not in MODES:
            raise ConfigError("generalized_jacobian.mode", f"must be one of {MODES}, got {mode!r}")
        if not (isinstance(length_scale, (int, float)) and np.isfinite(length_scale) and length_scale > 0.0):
            raise ConfigError("generalized_jacobian.length_scale", f"must be a positive length in m, got "
                                                                   f"{length_scale!r}")
        self.system, self.mode, self.length_scale = system, mode, float(length_scale)
        self.model = system.model
        self.data = self.model.createData()
        if not isinstance(end_effector, str) or not self.model.existFrame(end_effector):
            raise ConfigError("generalized_jacobian.end_effector", f"no link or frame named {end_effector!r}")
        self.frame_id = self.model.getFrameId(end_effector)
        try:
            bus = system.subtree(bus_subtree)
        except CommandError as exc:
            raise ConfigError("generalized_jacobian.bus_subtree", exc.problem) from exc
        if bus.base_joint_type != "free_flyer":
            raise ConfigError("generalized_jacobian.bus_subtree", f"{bus_subtree!r} is not free-floating")
        self.bus_joint_id = bus.root_joint_id
        first = self.model.joints[bus.root_joint_id].idx_v
        self.bus_v = np.arange(first, first + 6)
        self.arm_v = np.asarray(system.arm_v, dtype=int)
        self.wheel_v = np.asarray(system.wheel_v, dtype=int)
        if mode == "held" and len(self.wheel_v) < 3:
            raise ConfigError("generalized_jacobian.mode", "'held' needs at least three reaction wheels")
        # the servicer's joints (bus subtree): for its centre of mass
        self.servicer_joints = [j for j in range(1, self.model.njoints)
                                if self.model.names[j] in bus.joint_names]
        # constant parts of servicer_momentum_map: the columns outside the servicer, its bodies' masses and levers
        keep = np.zeros(self.model.nv, dtype=bool)
        keep[self.bus_v] = keep[self.arm_v] = True
        keep[self.wheel_v] = True
        self._outside = ~keep
        self._masses = np.array([self.model.inertias[j].mass for j in self.servicer_joints])
        self._mass = self._masses.sum()
        self._levers = [(j, self.model.inertias[j].lever.copy()) for j in self.servicer_joints]
        prismatic = np.array([self.model.joints[system.joint_id(n)].shortname() in _PRISMATIC
                              for n in system.arm_joints], dtype=bool)
        self._scale = jacobian_scale(prismatic, self.length_scale)

    def servicer_momentum_map(self, q: np.ndarray) -> np.ndarray:
        """A_s (6 x nv): the servicer's momentum about its own centre of mass, world axes, per unit velocity
        (non-servicer columns zero). Needs q normalized."""
        model, data = self.model, self.data
        A = pin.computeCentroidalMap(model, data, q).copy()
        A[:, self._outside] = 0.0
        centres = np.array([data.oMi[j].act(lever) for j, lever in self._levers])
        c_s = self._masses.dot(centres) / self._mass
        A[3:] += pin.skew(data.com[0] - c_s).dot(A[:3])
        return A

    def evaluate(self, q: np.ndarray, momentum: np.ndarray | None = None,
                 momentum_map: np.ndarray | None = None) -> GeneralizedJacobianValue:
        """J* at configuration q (normalized) for the servicer momentum `momentum` (6: [P; L about its centre of
        mass], world axes, N s and N m s; None = zero). momentum_map: servicer_momentum_map(q) when the caller has
        it (the centroidal map's forward kinematics at q then runs once)."""
        A = self.servicer_momentum_map(q) if momentum_map is None else momentum_map
        J = pin.computeFrameJacobian(self.model, self.data, q, self.frame_id, pin.LOCAL_WORLD_ALIGNED)
        h = np.zeros(6) if momentum is None else np.asarray(momentum, dtype=float).reshape(6)
        A_m, J_b = A[:, self.arm_v], J[:, self.bus_v]
        if self.mode == "free":
            solved = np.linalg.solve(A[:, self.bus_v], np.column_stack((A_m, h)))
            J_star = J[:, self.arm_v] - J_b.dot(solved[:, :-1])
            drift = J_b.dot(solved[:, -1])
        else:
            columns = np.column_stack((A[:, self.bus_v[:3]], A[:, self.wheel_v]))
            X = np.linalg.pinv(columns)[:3]             # bus linear velocity rows of u
            J_star = J[:, self.arm_v] - J_b[:, :3].dot(X.dot(A_m))
            drift = J_b[:, :3].dot(X.dot(h))
        sigma = np.linalg.svd(J_star * self._scale, compute_uv=False)
        return GeneralizedJacobianValue(J_star, drift, sigma, float(np.prod(sigma)))


def damped_pseudo_inverse(matrix: np.ndarray, threshold: float, max_damping: float,
                          row_weights: np.ndarray | None = None) -> tuple[np.ndarray, float, float]:
    """Damped least-squares inverse of `matrix` (m x n), see the module docstring.

    threshold: eps, the sigma_min below which damping starts; max_damping: lambda_max (reached at sigma = 0);
    both in the units of the row-weighted matrix W J (row_weights: W's diagonal, None = identity; e.g. 1/L on
    linear rows). Returns (J^# (n x m), lambda, sigma_min): qdot = J^# V minimizes
    |W (J qdot - V)|^2 + lambda^2 |qdot|^2 (W is folded into J^#).
    """
    weighted = matrix if row_weights is None else matrix * np.asarray(row_weights, dtype=float)[:, None]
    U, sigma, Vt = np.linalg.svd(weighted, full_matrices=False)
    sigma_min = float(sigma[-1]) if sigma.size else 0.0
    damping_sq = (1.0 - (sigma_min / threshold) ** 2) * max_damping**2 if sigma_min < threshold else 0.0
    inverse = (Vt.T * (sigma / (sigma**2 + damping_sq))).dot(U.T)
    if row_weights is not None:
        inverse = inverse * np.asarray(row_weights, dtype=float)[None, :]
    return inverse, float(np.sqrt(damping_sq)), sigma_min


def generalized_jacobian(j_ee: np.ndarray, fields: np.ndarray) -> np.ndarray:
    """J* = J_m + J_b K (6 x n_s) as J X^T (module docstring, from the mechanical connection): column i is the
    end-effector twist along the allowed motion X_i = (K_i, e_i), the connection's field for shape joint i
    (space_robot_monitoring.mechanical_connection.PairCurvature.fields, (n_s x nv), Pinocchio velocity coordinates).
    j_ee: (6 x nv) end-effector Jacobian, LOCAL_WORLD_ALIGNED (m/s and rad/s per unit velocity)."""
    return j_ee.dot(fields.T)


def jacobian_scale(prismatic: np.ndarray, length_scale: float) -> np.ndarray:
    """(6, n) factors that make J* dimensionless: linear rows / L, prismatic columns x L (L = length_scale, m;
    prismatic: (n,) bool, one per column)."""
    scale = np.ones((6, len(prismatic)))
    scale[:3] /= length_scale
    scale[:, np.asarray(prismatic, dtype=bool)] *= length_scale
    return scale


def conditioning(singular_values: np.ndarray) -> tuple[float, float, float]:
    """(sigma_min, inverse condition sigma_min / sigma_max (0 for a zero J*), manipulability) from the min(6, n)
    singular values of jstar * jacobian_scale(...), decreasing; the manipulability is their product,
    sqrt(det(Js Js^T)) (n >= 6) or sqrt(det(Js^T Js)) (n < 6). All dimensionless."""
    values = singular_values.tolist()
    sigma_min, sigma_max = values[-1], values[0]
    return sigma_min, sigma_min / sigma_max if sigma_max > 0.0 else 0.0, math.prod(values)
