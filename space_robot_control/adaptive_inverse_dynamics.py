"""Adaptive inverse-dynamics control (seed 004 ch. 7, eqs. 7.1-7.14) with the parameters linear in Pinocchio's
joint-torque regressor.

Parameters. Pinocchio's `computeJointTorqueRegressor` gives Y(q, v, a) (nv x 10 n_bodies) with
M(q) a + h(q, v) = Y pi (property 3 of sec. 7.2), pi_j = (m, m c, I about the joint origin: xx, xy, yy, xz, yz,
zz) of body j in its joint frame (`Inertia.toDynamicParameters`; kg, kg m, kg m^2). The uncertain bodies
(`estimated_joints`) have estimates pi_hat; the others are known. The controller computes with a copy of the
model whose uncertain inertias are the estimates (`EstimatedModel`).

Error dynamics (eq. 7.8 in the realization of hybrid_force_motion.py). The realized law solves (R) with the
estimated model: H_hat a* + h_hat = B u + J^T lambda_hat, J a* = -gamma, a*_m the motion accelerations. The
plant: H a + h = B u + J^T lambda, J a = -gamma. Both a and a* are admissible, a - a* = S (nudd - nudd*) with
S (nv x r) a basis of the null space of J (S^T J^T = 0, eq. 6.3), and H a + h - (H_hat a* + h_hat) =
Y(a) pi_tilde + H_hat (a - a*) with pi_tilde = pi - pi_hat. Multiplying by S^T eliminates u's common part and
the multipliers:

    S^T H_hat S (nudd - nudd*) = -S^T Y(q, v, a) pi_tilde,

and on the motion coordinates m (nu = their values, e = nu_d - nu, a*_m = nudd_d + K_D edot + K_P e):

    edd + K_D edot + K_P e = Y_1 pi_tilde,   Y_1 = E_m (S^T H_hat S)^-1 S^T Y(q, v, a)                 (7.8)

With x = (e, edot) per coordinate, A_i = [[0, 1], [-K_P,i, -K_D,i]] (Hurwitz), P_i solving A_i^T P_i + P_i A_i =
-Q_i (eq. 7.11's Lyapunov equation) and B = [0; 1]:

    pi_hat' = Gamma^-1 Y_1^T s,   s_i = B^T P_i x_i   (eq. 7.11: pi_tilde' = -pi_hat')                   (7.11)
    V = sum_i x_i^T P_i x_i + pi_tilde^T Gamma pi_tilde,   V' = -sum_i x_i^T Q_i x_i <= 0           (7.12-7.14)

Y(q, v, a) needs the acceleration a: measured (here the plant's, at the control instant under the inputs just
chosen), as eq. 7.8 needs it.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from scipy.linalg import solve_continuous_lyapunov

PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")


class EstimatedModel:
    """A copy of `model` whose bodies `joints` (joint ids) carry the estimated parameters."""

    def __init__(self, model: pin.Model, joints):
        self.true_model = model
        self.model = pin.Model(model)
        self.joints = [int(j) for j in joints]
        self.columns = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in self.joints])
        self.true_parameters = np.concatenate([model.inertias[j].toDynamicParameters() for j in self.joints])
        self._data = model.createData()

    def set_estimate(self, parameters: np.ndarray) -> None:
        for k, j in enumerate(self.joints):
            self.model.inertias[j] = pin.Inertia.FromDynamicParameters(np.asarray(parameters[10 * k:10 * k + 10]))

    def estimate(self) -> np.ndarray:
        return np.concatenate([self.model.inertias[j].toDynamicParameters() for j in self.joints])

    def regressor(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Y(q, v, a) restricted to the estimated bodies' columns (nv x 10 n_estimated)."""
        Y = pin.computeJointTorqueRegressor(self.true_model, self._data, q, v, a)
        return Y[:, self.columns]


def lyapunov_blocks(kp: np.ndarray, kd: np.ndarray, q_weight: float) -> np.ndarray:
    """P_i (n x 2 x 2) solving A_i^T P_i + P_i A_i = -q_weight I for each coordinate's A_i (eq. 7.10)."""
    blocks = []
    for p_gain, d_gain in zip(np.broadcast_to(kp, np.shape(kd)), kd):
        A = np.array([[0.0, 1.0], [-p_gain, -d_gain]])
        blocks.append(solve_continuous_lyapunov(A.T, -q_weight * np.eye(2)))
    return np.array(blocks)


def null_space_basis(J: np.ndarray, independent: np.ndarray, dependent: np.ndarray | None = None) -> np.ndarray:
    """S (nv x r) with J S = 0 whose rows `independent` (r of them) are the identity: nu = thetadot[independent]
    (eq. 6.3 with nu the robot's coordinates; the others, the target's, follow from J thetadot = 0). `dependent`:
    the other rows, ascending (worked out when not given)."""
    nv = J.shape[1]
    if dependent is None:
        dependent = np.setdiff1d(np.arange(nv), independent)
    S = np.zeros((nv, len(independent)))
    S[independent] = np.eye(len(independent))
    S[dependent] = -np.linalg.solve(J[:, dependent], J[:, independent])
    return S


class AdaptationLaw:
    """Eq. 7.11 with its Lyapunov function (7.12). motion_rows: positions of the motion coordinates in nu (the
    robot coordinates of null_space_basis); gamma_inverse: diagonal of Gamma^-1 per estimated parameter."""

    def __init__(self, estimated: EstimatedModel, kp, kd, q_weight: float, gamma_inverse: np.ndarray,
                 independent_v: np.ndarray, motion_rows: np.ndarray):
        self.estimated = estimated
        self.P = lyapunov_blocks(np.asarray(kp, dtype=float), np.asarray(kd, dtype=float) *
                                 np.ones(len(motion_rows)), q_weight)
        self.gamma_inverse = np.asarray(gamma_inverse, dtype=float)
        self.independent = np.asarray(independent_v, dtype=int)
        self.motion_rows = np.asarray(motion_rows, dtype=int)
        self._data = estimated.model.createData()
        nv = estimated.model.nv
        self._dependent = np.setdiff1d(np.arange(nv), self.independent)
        self._lower = np.tril_indices(nv, -1)        # crba fills H's upper triangle: the lower one is copied from it

    def regressor_1(self, q, v, a, J) -> np.ndarray:
        """Y_1 = E_m (S^T H_hat S)^-1 S^T Y(q, v, a) (eq. 7.8), with J the contact rows at q."""
        S = null_space_basis(J, self.independent, self._dependent)
        H = pin.crba(self.estimated.model, self._data, q).copy()
        H[self._lower] = H.T[self._lower]
        reduced = S.T.dot(self.estimated.regressor(q, v, a))
        return np.linalg.solve(S.T.dot(H).dot(S), reduced)[self.motion_rows]

    def sliding(self, error: np.ndarray, error_rate: np.ndarray) -> np.ndarray:
        """s_i = B^T P_i x_i."""
        return self.P[:, 1, 0] * error + self.P[:, 1, 1] * error_rate

    def rate(self, q, v, a, J, error, error_rate) -> np.ndarray:
        """pi_hat' (eq. 7.11)."""
        return self.gamma_inverse * self.regressor_1(q, v, a, J).T.dot(self.sliding(error, error_rate))

    def lyapunov(self, error: np.ndarray, error_rate: np.ndarray, estimate: np.ndarray) -> float:
        """V of eq. 7.12 (Gamma = diag(1 / gamma_inverse)); parameters not adapted (gamma_inverse 0) are left out
        (their Gamma is infinite: V is then the tracking part with theirs)."""
        x = np.stack((error, error_rate), axis=1)
        adapted = self.gamma_inverse > 0.0
        tilde = (self.estimated.true_parameters - estimate)[adapted]
        return float(np.einsum("ni,nij,nj->", x, self.P, x) + np.sum(tilde**2 / self.gamma_inverse[adapted]))
