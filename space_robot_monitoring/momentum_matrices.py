"""Momentum constraint matrices of seed 004 (eqs. 2.13-2.25, 2.31-2.32), built from Pinocchio's centroidal map.

Pinocchio side. `computeCentroidalMap` gives A_G(q) (6 x nv) with h_G = A_G v = (p, L_G): total linear
momentum (kg m/s) and angular momentum about the system centre of mass (kg m^2/s), world axes, for the
Pinocchio velocity v (free flyers: base-joint-frame twists). Its derivative along a velocity u,
X_u(A_G) = d/de A_G(q (+) e u), is Pinocchio's `computeCentroidalMapTimeVariation` plus one term:
Pinocchio's dA_G omits -[cdot x] A_G,lin in the angular rows (cdot = A_G,lin u / M, the centre-of-mass
velocity), a term that vanishes on the product dA_G v (cdot x M cdot = 0) and so is dropped there; we need
the full derivative (checked against finite differences in test/test_holonomy_curvature.py).

Thesis side (seed 004 sec. 2.3). Generalised velocity, eq. 2.30:
    theta_dot = [V_b, Omega_b, qdot, omega_t, v_t]
- V_b: velocity of the base centroid r_b (m/s), Omega_b: base angular velocity (rad/s), world axes;
- qdot: rates of the robot's one-DOF joints (arm, then any wheels, in Pinocchio v order; rad/s or m/s);
- omega_t = Omega_t - Omega_EE and v_t = V_t - V_EE - Omega_t x r_t/EE: motion of the target relative to
  the end effector (world axes), the definitions that make eqs. 2.7 and 2.10 hold:
    V_t = V_b + Omega_b x r_t/b + J_L(r_t) qdot + omega_t x r_t/EE + v_t,  Omega_t = Omega_b + J_A qdot + omega_t,
  with J_L evaluated at the target centroid (eq. 2.5 with r_i = r_t). A rigid grasp is omega_t = v_t = 0.
The thesis writes these relative velocities "in base coordinates"; we use world axes so that every row
and column of B is in one frame (ranks and Y_h ranks are unchanged by a rotation of axes).

Momentum rows (eqs. 2.11-2.13): [P; L] with P the total linear momentum and L the angular momentum about
the base centroid r_b (the thesis's moments: eq. 2.15 and 2.17 use r_i/b), world axes. Then
    [P; L] = B(theta) theta_dot,   B = [[H_Vb, H_VbOb, H_Vbq, H_Vbwt, H_Vbvt], [H_VbOb^T, H_Ob, H_Obq, H_Obwt, H_Obvt]]
(eq. 2.32) is computed as B = H T with H the momentum about r_b in Pinocchio velocities and T the
linear map theta_dot -> v. Without the target (free robot, or contact lost) only the robot's bodies and
columns enter (sec. 4.2: "all terms related to the target satellite are set to zero").
Printed eqs. 2.20 and 2.22 differ from this definition (2.20 takes the target's moment about the end
effector instead of r_b, 2.22 has the opposite sign); the test checks B against the direct sums over
bodies of eqs. 2.11-2.12 with velocities 2.3-2.10, and blocks 2.14-2.19, 2.21 against their printed form.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel

from .lie_algebra import skew
from .system_partition import SubtreePartition, index_or_slice

THESIS_COLUMNS = ("V_b", "Omega_b", "qdot", "omega_t", "v_t")


class CentroidalMomentum:
    """A_G(q) and its directional derivatives (see module docstring), with its own Pinocchio data."""

    rows = 6

    def __init__(self, model: pin.Model):
        self.model = model
        self.data = model.createData()
        self.mass = float(sum(inertia.mass for inertia in model.inertias))

    def matrix(self, q: np.ndarray) -> np.ndarray:
        """A_G (6 x nv), world axes, angular rows about the CoM; also leaves oMi and com[0] in self.data.
        A new array (Pinocchio 3 and 4 return a copy of data.Ag), which later calls on self.data leave alone."""
        return pin.computeCentroidalMap(self.model, self.data, q)

    def derivative(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """X_u(A_G) = d/de A_G(q (+) e u) at e = 0 (6 x nv); u is a Pinocchio velocity (nv,)."""
        d_ag = pin.computeCentroidalMapTimeVariation(self.model, self.data, q, u).copy()
        ag_lin = self.data.Ag[:3]
        com_velocity = ag_lin @ u / self.mass
        d_ag[3:] -= skew(com_velocity) @ ag_lin
        return d_ag

    def kernel_derivative(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Pinocchio's dA_G alone: equal to derivative(q, u) on vectors w with A_G,lin w = 0.

        The omitted term -[cdot x] A_G,lin w vanishes there (and cdot = 0 too when u is allowed), so the
        mechanical connection, which only applies it to allowed velocities, saves its cost.
        """
        return pin.computeCentroidalMapTimeVariation(self.model, self.data, q, u)

    def kernel_derivatives(self, q: np.ndarray, directions: np.ndarray) -> np.ndarray:
        """kernel_derivative for each column u_i of `directions` (nv x k), side by side: (6, k nv), block i."""
        model, data, variation = self.model, self.data, pin.computeCentroidalMapTimeVariation
        if directions.shape[1] == 0:
            return np.empty((6, 0))
        return np.concatenate([variation(model, data, q, u) for u in directions.T], axis=1)  # each call: a new array


@dataclass(frozen=True)
class ThesisMomentumMatrices:
    """B of eq. 2.32 (6 x N) in the thesis ordering, and the map T (nv x N) with v = T theta_dot.

    columns: name -> slice of theta_dot (THESIS_COLUMNS; omega_t and v_t only with the target).
    Rows 0:3 are the linear momentum constraint, rows 3:6 the angular one (sec. 4.2's two A matrices).
    """

    B: np.ndarray
    to_pinocchio: np.ndarray
    columns: dict
    with_target: bool

    @property
    def linear(self) -> np.ndarray:
        return self.B[:3]

    @property
    def angular(self) -> np.ndarray:
        return self.B[3:]

    def block(self, row: str, column: str) -> np.ndarray:
        """e.g. block('P', 'Omega_b') = H_VbOmegab (eq. 2.15), block('L', 'qdot') = H_Omegabq (eq. 2.18)."""
        rows = {"P": slice(0, 3), "L": slice(3, 6)}[row]
        return self.B[rows, self.columns[column]]


class ThesisMomentumModel:
    """Builds seed 004's momentum constraint matrices for one robot subtree and, optionally, its target.

    ee_frame_id: the robot's end-effector frame (the point EE of eqs. 2.6-2.7).
    centroidal: a CentroidalMomentum to share (the caller may then pass the A_G it computed at q).
    """

    def __init__(self, system: SystemModel, robot: SubtreePartition, target: SubtreePartition | None,
                 ee_frame_id: int, centroidal: CentroidalMomentum | None = None):
        self.model = system.model
        self.robot = robot
        self.target = target
        self.ee_frame_id = ee_frame_id
        self.centroidal = CentroidalMomentum(self.model) if centroidal is None else centroidal
        self.data = self.model.createData()
        n = len(robot.joint_v)
        self.n_joints = n
        columns = {"V_b": slice(0, 3), "Omega_b": slice(3, 6), "qdot": slice(6, 6 + n)}
        self.columns_robot = MappingProxyType(columns)
        self.columns_target = MappingProxyType(dict(columns, omega_t=slice(6 + n, 9 + n), v_t=slice(9 + n, 12 + n)))
        # Constant parts of the map T (joint rates are the thesis's qdot one to one).
        # A flexible model's shape coordinates move its tip chains too: their columns are the shape basis (T).
        self._basis = robot.shape_basis
        self._template_robot = np.zeros((self.model.nv, 6 + n))
        self._template_target = np.zeros((self.model.nv, 12 + n))
        if self._basis is None:
            self._template_robot[robot.joint_v, 6 + np.arange(n)] = 1.0
            self._template_target[robot.joint_v, 6 + np.arange(n)] = 1.0
        else:
            self._template_robot[:, 6:6 + n] = self._basis
            self._template_target[:, 6:6 + n] = self._basis
        self._robot_v = index_or_slice(robot.all_v)
        self._base_v = index_or_slice(robot.base_v)
        self._target_v = index_or_slice(target.base_v) if target is not None else None
        # v rows of a free flyer from (velocity of its centroid c, angular velocity), world axes, with R its
        # rotation: [[R^T, [c x] R^T], [0, R^T]] (v_lin = R^T (V - Omega x R c) = R^T V + [c x] R^T Omega,
        # w = R^T Omega). Linear in R, so one product with a constant (36 x 9) map builds the 6x6 block.
        self._base_block = _velocity_block_map(robot.base_com_local)
        self._target_block = _velocity_block_map(target.base_com_local) if target is not None else None
        self._eye3 = np.eye(3)

    def constraint_matrix(self, with_target: bool, ag: np.ndarray, ee_jacobian: np.ndarray | None = None,
                          ee_position: np.ndarray | None = None) -> np.ndarray:
        """compute(...).B alone, without building T (the monitor's per-cycle path; equal to it up to round-off,
        test_thesis_momentum_matrices.py). ag = self.centroidal.matrix(q), whose data then holds the kinematics
        at q; with the target also the end-effector Jacobian (LOCAL_WORLD_ALIGNED) and origin at q.

        With A_r, A_t the columns of A_G on the robot's and the target's velocities, T_r the robot rows of T
        and P = A_t T_t the target's momentum per world twist of its centroid (T_t its 6x6 velocity block),
        the target rows of T give A_t T_t W with W = S_w (J_EE T) + E, S_w = [[E_3, -[r_t/EE x]], [0, E_3]]
        (compute()'s V_t and Omega_t) and E the unit blocks of omega_t, v_t. With Q = P S_w:
            A_G T = (A_r + Q J_EE,r) T_r + [0 | Q[:, 3:6] (omega_t) | P[:, :3] (v_t)].
        """
        robot, kinematics = self.robot, self.centroidal.data
        base = kinematics.oMi[robot.root_joint_id]
        robot_cols = self._robot_columns(ag)                                 # (6, 6 + n): base, joints
        if with_target:
            if self.target is None:
                raise ValueError("with_target=True needs a target subtree")
            target = self.target
            tgt = kinematics.oMi[target.root_joint_id]
            momentum = ag[:, self._target_v].dot(self._target_block.dot(tgt.rotation.ravel()).reshape(6, 6))  # P
            lever = momentum[:, 3:] - momentum[:, :3].dot(skew(tgt.act(target.base_com_local) - ee_position))
            robot_cols = robot_cols + np.concatenate((momentum[:, :3], lever), axis=1).dot(
                self._robot_columns(ee_jacobian))
            robot_cols = np.concatenate((robot_cols, lever, momentum[:, :3]), axis=1)
        # angular rows about the base centroid r_b (a left factor), base columns per (V_b, Omega_b)
        b = momentum_shift(kinematics.com[0] - base.act(robot.base_com_local)).dot(robot_cols)
        b[:, :6] = b[:, :6].dot(self._base_block.dot(base.rotation.ravel()).reshape(6, 6))
        return b

    def _robot_columns(self, matrix: np.ndarray) -> np.ndarray:
        """The columns of a (rows x nv) matrix on the robot's base velocity and shape coordinates."""
        if self._basis is None:
            return matrix[:, self._robot_v]
        return np.concatenate((matrix[:, self._base_v], matrix.dot(self._basis)), axis=1)

    def compute(self, q: np.ndarray, with_target: bool, ag: np.ndarray | None = None,
                ee_jacobian: np.ndarray | None = None, ee_position: np.ndarray | None = None
                ) -> ThesisMomentumMatrices:
        """B and T at q. Optional inputs the caller may already have at q: `ag` from self.centroidal.matrix(q)
        (self.centroidal.data then holds the kinematics at q), the end-effector frame Jacobian
        (LOCAL_WORLD_ALIGNED, 6 x nv) and its origin (world)."""
        model, data, robot = self.model, self.data, self.robot
        if ag is None:
            ag = self.centroidal.matrix(q)
        kinematics = self.centroidal.data
        base = kinematics.oMi[robot.root_joint_id]
        # A_G's angular rows are about the system centre of mass r_G, B's about the base centroid r_b:
        # L_b = L_G + (r_G - r_b) x P, applied to the rows of A_G T (a left factor, so after the product).
        shift = skew(kinematics.com[0] - base.act(robot.base_com_local))
        b0 = int(robot.base_v[0])
        t_map = (self._template_target if with_target else self._template_robot).copy()
        t_map[b0:b0 + 6, 0:6] = self._base_block.dot(base.rotation.ravel()).reshape(6, 6)
        if not with_target:
            b = ag[:, self._robot_v].dot(t_map[self._robot_v]) if self._basis is None else ag.dot(t_map)
            b[3:] += shift.dot(b[:3])
            return ThesisMomentumMatrices(b, t_map, self.columns_robot, False)
        if self.target is None:
            raise ValueError("with_target=True needs a target subtree")
        target, n = self.target, self.n_joints
        if ee_jacobian is None or ee_position is None:
            pin.computeJointJacobians(model, data, q)
            ee_position = pin.updateFramePlacement(model, data, self.ee_frame_id).translation
            ee_jacobian = pin.getFrameJacobian(model, data, self.ee_frame_id, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        # Target centroid motion (world): Omega_t = Omega_EE + omega_t, V_t = V_EE - [r_t/EE x] Omega_t + v_t,
        # from the end-effector twist (origin velocity, angular velocity) in terms of theta_dot.
        motion = ee_jacobian.dot(t_map)                       # 6 x n_theta (target columns still zero)
        motion[3:, 6 + n:9 + n] = self._eye3
        tgt = kinematics.oMi[target.root_joint_id]
        motion[:3] -= skew(tgt.act(target.base_com_local) - ee_position).dot(motion[3:])
        motion[:3, 9 + n:12 + n] += self._eye3
        t0 = int(target.base_v[0])
        t_map[t0:t0 + 6] = self._target_block.dot(tgt.rotation.ravel()).reshape(6, 6).dot(motion)
        b = ag.dot(t_map)
        b[3:] += shift.dot(b[:3])
        return ThesisMomentumMatrices(b, t_map, self.columns_target, True)


# S = [[E_3, 0], [[d x], E_3]] flattened, as _SHIFT_IDENTITY + d @ _SHIFT_LINEAR
_SHIFT_IDENTITY = np.eye(6).ravel()
_SHIFT_LINEAR = np.zeros((3, 6, 6))
_SHIFT_LINEAR[:, 3:, :3] = skew(np.eye(3))          # [e_k x] for k = 0, 1, 2
_SHIFT_LINEAR = _SHIFT_LINEAR.reshape(3, 36)


def momentum_shift(offset: np.ndarray) -> np.ndarray:
    """(6, 6) S = [[E_3, 0], [[d x], E_3]] with d = offset = a - b ((3,) array, world axes, m): S (P, L_a) =
    (P, L_b), the same momentum with its angular part about point b instead of a (L_b = L_a + (a - b) x P)."""
    return (_SHIFT_IDENTITY + offset.dot(_SHIFT_LINEAR)).reshape(6, 6)


def _velocity_block_map(com_local: np.ndarray) -> np.ndarray:
    """(36, 9) M with M @ vec(R) = vec([[R^T, [c x] R^T], [0, R^T]]) (row-major vec), c = com_local."""
    out = np.empty((36, 9))
    c_skew = skew(com_local)
    for e in range(9):
        unit = np.zeros(9)
        unit[e] = 1.0
        rt = unit.reshape(3, 3).T
        out[:, e] = np.block([[rt, c_skew @ rt], [np.zeros((3, 3)), rt]]).ravel()
    return out
