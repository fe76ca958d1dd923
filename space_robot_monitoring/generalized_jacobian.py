"""Generalized Jacobian of a free-floating manipulator (Umetani & Yoshida; seed 004 sec. 5: the reduced
Jacobian of the robot holding a target is its generalisation).

With zero momentum the base moves as xi_b = K qdot (mechanical_connection.py, K = -H_b^-1 H_bm for the
free robot, or the combined momentum + grasp connection when the target is held), so the end-effector
twist is

    V_EE = J_b xi_b + J_m qdot = (J_m + J_b K) qdot = J* qdot,   J* = J_m - J_b H_b^-1 H_bm,

with J the end-effector frame Jacobian (LOCAL_WORLD_ALIGNED: velocity of the frame origin and angular
velocity, world axes). Its smallest singular value going to zero is a dynamic singularity: joint motion
can no longer move the end effector in some direction because the base absorbs it. Singular values and
the manipulability sqrt(det(J* J*^T)) are reported for the length-scaled J* (linear rows divided by L,
prismatic columns multiplied by L), so they are dimensionless and comparable across robots. With fewer
joints than 6 (planar arms) the min(6, n) singular values are used: manipulability sqrt(det(J*^T J*)).
"""
from __future__ import annotations

import math

import numpy as np


def generalized_jacobian(j_ee: np.ndarray, fields: np.ndarray) -> np.ndarray:
    """J* = J_m + J_f K (6 x n_s) as J X^T: column i is the end-effector twist along the allowed motion
    X_i = (K_i, e_i), the connection's field for shape joint i (mechanical_connection.PairCurvature.fields,
    (n_s x nv), Pinocchio velocity coordinates). j_ee: (6 x nv) end-effector Jacobian."""
    return j_ee.dot(fields.T)


def jacobian_scale(prismatic: np.ndarray, length_scale: float) -> np.ndarray:
    """(6, n) factors that make J* dimensionless: linear rows / L, prismatic columns x L."""
    scale = np.ones((6, len(prismatic)))
    scale[:3] /= length_scale
    scale[:, np.asarray(prismatic, dtype=bool)] *= length_scale
    return scale


def conditioning(singular_values: np.ndarray) -> tuple[float, float, float]:
    """(sigma_min, inverse condition sigma_min / sigma_max (0 for a zero J*), manipulability) from the min(6, n)
    singular values of jstar * jacobian_scale(...), decreasing; the manipulability is their product,
    sqrt(det(Js Js^T)) (n >= 6) or sqrt(det(Js^T Js)) (n < 6)."""
    values = singular_values.tolist()
    sigma_min, sigma_max = values[-1], values[0]
    return sigma_min, sigma_min / sigma_max if sigma_max > 0.0 else 0.0, math.prod(values)

