"""Normal and tangential parts of a constraint wrench (seed 004 sec. 5.3, eqs. 5.17-5.24; docs/contact.md sec. 7).

Every wrench F in C^6 splits uniquely as F = F_n + F_t, F_n in the normal subspace N, F_t in the tangential
subspace T, N + T = C^6 (5.17-5.18). With bases of T and N as the columns of F_t and F_n, the projector on T along N
is (5.21)

    P_NT = [F_t  0] [F_t  F_n]^-1,     F_t = P_NT F,   F_n = (1 - P_NT) F                              (5.23-5.24)

At the grasp (wrench [force; torque] in the end-effector frame, about its origin) N is spanned by the force along
the approach axis a (pressing on or pulling off the fixture's face) and the torque about it (twisting), T by the
force across a (shear) and the torque about the two axes across it (bending): orthogonal subspaces, so P_NT is the
orthogonal projector there. At a frictionless surface contact the force is normal by construction.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def oblique_projector(tangential_basis: np.ndarray, normal_basis: np.ndarray) -> np.ndarray:
    """P_NT of eq. 5.21 from bases (as columns) of T and N; ValueError when they are not complementary."""
    basis = np.hstack((tangential_basis, normal_basis))
    if basis.shape[0] != basis.shape[1] or np.linalg.matrix_rank(basis) < basis.shape[0]:
        raise ValueError("the tangential and normal bases must together span the whole space (eq. 5.17)")
    kept = np.hstack((tangential_basis, np.zeros_like(normal_basis)))
    return kept @ np.linalg.inv(basis)


def grasp_subspaces(axis) -> tuple[np.ndarray, np.ndarray]:
    """(T, N) bases (6 x 4, 6 x 2) for a grasp whose approach axis is `axis` (end-effector frame)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    t1 = np.cross(a, helper)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(a, t1)
    zero = np.zeros(3)
    tangential = np.column_stack([np.r_[t1, zero], np.r_[t2, zero], np.r_[zero, t1], np.r_[zero, t2]])
    normal = np.column_stack([np.r_[a, zero], np.r_[zero, a]])
    return tangential, normal


@dataclass(frozen=True)
class WrenchParts:
    """F_n and F_t of eqs. 5.23-5.24 (6 each, the frame of the wrench), and their summary figures: the normal
    force along the axis (N, positive when the hand presses on the fixture, i.e. the target pushes the hand
    back along -a), the twisting torque about it (N m), the shear force and bending torque magnitudes."""

    normal: np.ndarray
    tangential: np.ndarray
    axial_force: float
    twist_torque: float
    shear_force: float
    bending_torque: float


class GraspWrenchDecomposition:
    def __init__(self, axis):
        self.axis = np.asarray(axis, float) / np.linalg.norm(axis)
        self.projector = oblique_projector(*grasp_subspaces(self.axis))

    def __call__(self, wrench: np.ndarray) -> WrenchParts:
        """`wrench`: the wrench the target exerts on the hand, [N, N m], end-effector frame."""
        tangential = self.projector @ wrench
        normal = wrench - tangential
        return WrenchParts(normal, tangential, -float(normal[:3] @ self.axis), float(normal[3:] @ self.axis),
                           float(np.linalg.norm(tangential[:3])), float(np.linalg.norm(tangential[3:])))
