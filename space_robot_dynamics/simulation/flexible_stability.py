"""Start-up check that the explicit integrator resolves the stiffest flexible mode (docs/flexibility.md sec. 6).

Linearised about the initial configuration, M_r xddot + C_r xdot + K_r x = 0 in the reduced coordinates
(M_r = T^T M_f T; K_r, C_r the elastic and damping matrices of flexibility.py, plus the URDF joint damping and the
linearised friction b + f_c / v_s when they are on). The eigenvalues s of [[0, 1], [-M_r^-1 K_r, -M_r^-1 C_r]]
must satisfy |s| dt <= limit * margin with the stability limits and margin of joint_dissipation.py (the same rule
the damping check applies); otherwise the simulator refuses, naming the coordinate that carries most of the
mode's elastic energy and the largest stable dt.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..errors import StepTooLargeError
from ..model.system_model import SystemModel
from .joint_dissipation import STABILITY_LIMIT, STABILITY_MARGIN, JointDissipation


def linearized_matrices(system: SystemModel, q: np.ndarray, dissipation: JointDissipation | None = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """(M_r, K_r, C_r, names of the reduced coordinates) at configuration q."""
    flexibility, model = system.flexibility, system.model
    coordinates = flexibility.coordinates
    mass = pin.crba(model, model.createData(), q)
    T = coordinates.T
    reduced_of = np.full(model.nv, -1)
    reduced_of[coordinates.independent_v] = np.arange(coordinates.nr)
    stiffness, damping = np.zeros((coordinates.nr,) * 2), np.zeros((coordinates.nr,) * 2)
    rows = reduced_of[flexibility.selected_v]
    stiffness[np.ix_(rows, rows)] = flexibility.K
    damping[np.ix_(rows, rows)] = flexibility.C
    if dissipation is not None:
        linear = dissipation.damping + dissipation.friction / dissipation.smoothing
        damping[reduced_of[dissipation.v_indices], reduced_of[dissipation.v_indices]] += linear
    names = [""] * coordinates.nr
    for j in range(1, model.njoints):
        joint = model.joints[j]
        for k in range(joint.nv):
            if reduced_of[joint.idx_v + k] >= 0:
                names[reduced_of[joint.idx_v + k]] = model.names[j]
    return T.T @ mass @ T, stiffness, damping, names


def check_flexible_stability(system: SystemModel, q: np.ndarray, dt: float, integrator: str,
                             dissipation: JointDissipation | None = None) -> float:
    """Raise ConfigError if dt does not resolve the stiffest mode; returns the largest |s| (1/s)."""
    mass, stiffness, damping, names = linearized_matrices(system, q, dissipation)
    n = len(mass)
    inverse = np.linalg.inv(mass)
    state = np.zeros((2 * n, 2 * n))
    state[:n, n:] = np.eye(n)
    state[n:, :n] = -inverse @ stiffness
    state[n:, n:] = -inverse @ damping
    values, vectors = np.linalg.eig(state)
    worst = int(np.argmax(np.abs(values)))
    rate = float(abs(values[worst]))
    limit = STABILITY_LIMIT[integrator] * STABILITY_MARGIN
    if rate * dt > limit:
        mode = vectors[:n, worst]
        share = np.abs(np.conj(mode) * (stiffness @ mode))
        if not share.any():             # a damping-dominated rate: the coordinate it damps
            share = np.abs(np.conj(mode) * (damping @ mode))
        where = names[int(np.argmax(share))]
        raise StepTooLargeError(
            f"the stiffest flexible mode ({rate / (2 * np.pi):.4g} Hz, |s| = {rate:.4g} 1/s, mostly in {where!r}) is "
            f"not resolved: {integrator} at dt={dt} s is unstable", limit / rate, "or softer springs, fewer modes")
    return rate
