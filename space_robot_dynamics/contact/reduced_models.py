"""The reduced models of seed 004 ch. 5-6 for a constrained system (docs/contact.md sec. 6), on the matrices of
the full model: M (crba), h (rnea at a = 0), the constraint rows J and their drift gamma (loop_closure.py,
surface_contact.py: J a + gamma = 0 holds the constraint, gamma including the drift control).

Full constrained model (seed 004 eqs. 5.14, 2.29):  M a + h = tau + J^T lambda,  J a + gamma = 0.

1. Orthogonal projection (null space; seed 004 ch. 6 eqs. 6.3-6.5): S, an orthonormal basis of the null space of
   J (right singular vectors), parametrises the admissible velocities, theta_dot = S nu. At one instant eq. 6.4's
   S_dot nu term is the particular acceleration a_p = -J^+ gamma (the least-norm solution of J a_p = -gamma), so
   a = S nu_dot + a_p with

       S^T M S nu_dot = S^T (tau - h - M a_p),                                                          (6.5)

   and the constraint force is what the rows of J carry: J^T lambda = M a + h - tau, lambda = (J J^T)^-1 J (M a + h
   - tau). S^T J^T = 0 removes the multipliers from the motion equations, as in eq. 6.8.

2. Target elimination (seed 004 eqs. 5.25-5.30): the target's 6 coordinates t are replaced by the relative twist
   w = J v (the thesis's (omega_t, v_t), relative to the end effector), so theta_dot = [v_r; w], v = W theta_dot with

       W = [[1, 0], [-J_t^-1 J_r, J_t^-1]],    J W = [0, 1]

   (J_t, the target's columns of J, invertible for a weld on a free-floating target). In these coordinates the
   weld is w = 0 and the multipliers act on the w rows only (J_theta^T lambda = [0; lambda]); the dynamics
   W^T (M (W theta_ddot + W_dot theta_dot) + h) = W^T tau + [0; lambda], with W_dot theta_dot = [0; -J_t^-1 J_dot v]
   (from d/dt (J v) = w_dot), has the blocks H = W^T M W (eq. 5.4 in the relative coordinates), C = W^T (M W_dot
   theta_dot + h), and the target unactuated (W^T tau = [tau_r; 0] for tau_t = 0, eq. 5.16's input). Its target
   rows (5.25) give the multipliers, its robot rows with them substituted the reduced model (5.27-5.30):

       lambda = H_tr a_r + H_tt w_dot + C_t                                                              (5.25)
       H~ a_r + C~ = tau_r + J~^T lambda,   H~ = H_rr - H_rt H_tt^-1 H_tr,  C~ = C_r - H_rt H_tt^-1 C_t,
       J~^T = -H_rt H_tt^-1                                                                              (5.27-5.30)

   which together are H_rr a_r + C_r + H_rt w_dot = tau_r: H_rr is the inertia of the joined system in the robot's
   coordinates (what a controller of the captured target computes with). w_dot is the drift control's
   -Kd w - Kp e_p (zero on the constraint manifold).

3. Base linear elimination (seed 004 eqs. 5.31-5.32): from the rows of the base's linear velocity, with no force
   on them (no thrusters), a_bl = -H_bl^-1 (H_bl,o a_o + C_bl - tau_bl); the other rows then read
   (H_oo - H_o,bl H_bl^-1 H_bl,o) a_o + C_o - H_o,bl H_bl^-1 C_bl = tau_o - H_o,bl H_bl^-1 tau_bl. Applied to the
   model of 2 (whose multipliers are already eliminated).

test_contact_reduced_models.py checks each against the full constrained model (Pinocchio's constraintDynamics and a
KKT system): the same accelerations and multipliers to round-off.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ConstrainedSolution:
    acceleration: np.ndarray      # a (nv), Pinocchio's velocity coordinates
    force: np.ndarray             # lambda (m)


def orthogonal_projection(mass: np.ndarray, bias: np.ndarray, tau: np.ndarray, jacobian: np.ndarray,
                          drift: np.ndarray) -> ConstrainedSolution:
    """Model 1 of the module docstring (seed 004 eqs. 6.3-6.5)."""
    _, singular, vt = np.linalg.svd(jacobian)
    rank = int(np.sum(singular > singular[0] * 1e-12))
    basis = vt[rank:].T                                   # S: orthonormal, J S = 0
    particular = -np.linalg.pinv(jacobian) @ drift        # a_p: J a_p = -gamma
    reduced_mass = basis.T @ mass @ basis
    nu_dot = np.linalg.solve(reduced_mass, basis.T @ (tau - bias - mass @ particular))
    acceleration = basis @ nu_dot + particular
    force = np.linalg.solve(jacobian @ jacobian.T, jacobian @ (mass @ acceleration + bias - tau))
    return ConstrainedSolution(acceleration, force)


@dataclass(frozen=True)
class EliminatedTarget:
    """The blocks of model 2 (seed 004 eqs. 5.25-5.30) at one state, robot coordinates r first."""

    robot_v: np.ndarray           # indices of v_r in v
    target_v: np.ndarray          # indices of v_t in v (6)
    H_rr: np.ndarray              # inertia of the joined system in robot coordinates
    H_rt: np.ndarray
    H_tt: np.ndarray
    C_r: np.ndarray
    C_t: np.ndarray
    W: np.ndarray                 # v = W theta_dot
    target_drift: np.ndarray      # the t rows of W_dot theta_dot: -J_t^-1 J_dot v

    @property
    def reduced_inertia(self) -> np.ndarray:
        """H~ of eq. 5.28."""
        return self.H_rr - self.H_rt @ np.linalg.solve(self.H_tt, self.H_rt.T)

    @property
    def reduced_bias(self) -> np.ndarray:
        """C~ of eq. 5.29."""
        return self.C_r - self.H_rt @ np.linalg.solve(self.H_tt, self.C_t)

    @property
    def reduced_jacobian_transpose(self) -> np.ndarray:
        """J~^T of eq. 5.30 (J_r = 0, J_t = 1 in the relative coordinates)."""
        return -self.H_rt @ np.linalg.inv(self.H_tt)

    def force(self, robot_acceleration: np.ndarray, relative_acceleration: np.ndarray) -> np.ndarray:
        """lambda of eq. 5.25 for a_r and w_dot."""
        return self.H_rt.T @ robot_acceleration + self.H_tt @ relative_acceleration + self.C_t

    def solve(self, tau_r: np.ndarray, relative_acceleration: np.ndarray) -> ConstrainedSolution:
        """a (nv) and lambda with the target unactuated, from eqs. 5.27 and 5.25."""
        robot = np.linalg.solve(self.H_rr, tau_r - self.C_r - self.H_rt @ relative_acceleration)
        theta_ddot = np.concatenate((robot, relative_acceleration))
        full = self.W @ theta_ddot
        full[self.target_v] += self.target_drift
        return ConstrainedSolution(full, self.force(robot, relative_acceleration))


def eliminate_target(mass: np.ndarray, bias: np.ndarray, jacobian: np.ndarray, velocity_drift: np.ndarray,
                     target_v) -> EliminatedTarget:
    """Model 2 of the module docstring. velocity_drift: J_dot v (the drift of the weld without its drift control)."""
    nv = len(mass)
    target_v = np.asarray(target_v, dtype=int)
    robot_v = np.setdiff1d(np.arange(nv), target_v)
    J_r, J_t = jacobian[:, robot_v], jacobian[:, target_v]
    J_t_inv = np.linalg.inv(J_t)
    W = np.zeros((nv, nv))                       # columns: theta_dot = [v_r; w]
    W[robot_v, np.arange(len(robot_v))] = 1.0
    W[np.ix_(target_v, np.arange(len(robot_v)))] = -J_t_inv @ J_r
    W[np.ix_(target_v, len(robot_v) + np.arange(6))] = J_t_inv
    target_drift = -J_t_inv @ velocity_drift
    w_dot_theta = np.zeros(nv)
    w_dot_theta[target_v] = target_drift
    H = W.T @ mass @ W
    C = W.T @ (mass @ w_dot_theta + bias)
    n_r = len(robot_v)
    return EliminatedTarget(robot_v, target_v, H[:n_r, :n_r], H[:n_r, n_r:], H[n_r:, n_r:], C[:n_r], C[n_r:], W,
                            target_drift)


def eliminate_base_linear(inertia: np.ndarray, bias: np.ndarray, tau: np.ndarray, linear_rows
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Model 3 (seed 004 eqs. 5.31-5.32) on a model H a + C = tau: eliminate the rows `linear_rows` (the base's
    linear velocity). Returns (H^, C^, tau^, other_rows) with H^ a_o + C^ = tau^ on the other rows."""
    n = len(inertia)
    b = np.asarray(linear_rows, dtype=int)
    o = np.setdiff1d(np.arange(n), b)
    H_bb, H_bo = inertia[np.ix_(b, b)], inertia[np.ix_(b, o)]
    K = np.linalg.solve(H_bb, H_bo).T                    # H_ob H_bb^-1
    return (inertia[np.ix_(o, o)] - K @ H_bo, bias[o] - K @ bias[b], tau[o] - K @ tau[b], o)
