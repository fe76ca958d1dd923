"""The rigid 6D loop of a grasp: the hand's frame c1 welded to a frame c2 on the target (docs/contact.md sec. 2).

Seed 004 sec. 2.4 writes the contact as Phi(chi) = 0 on the pose chi of the end effector in the target frame; for a
rigid grasp Phi fixes the whole relative pose. c1 is the end-effector frame (its placement on the hand's joint j1);
c2 is placed on the target's joint j2 so that it coincides with c1 at the instant the grasp closes: the loop keeps
the relative pose the hand had on the fixture then, within the capture envelope (capture_envelope.py). Errors and
forces are those of Pinocchio's CONTACT_6D constraint in the LOCAL frame of c1:

    e_p = -log6(c1Mc2),    e_v = v_c1 - c1Xc2 v_c2 = c1X0 (V_1 - V_2)                                  (1)

(v_ci the spatial velocity of frame ci in its own axes, V_i the spatial velocity of body i in the world frame):
e_v = J v with J = c1X0 (J_1^WORLD - J_2^WORLD), the rows of seed 004 eq. 2.30 for a weld. Differentiating (1)
(d/dt c1X0 = -[v_c1 x] c1X0, and -v_c1 x e_v = e_v x c1Xc2 v_c2):

    de_v/dt = J a + gamma,   gamma = c1X0 (A_1 - A_2)|_(a=0) + e_v x (c1Xc2 v_c2),                    (2)

A_i the bodies' spatial accelerations (world). Drift control (Baumgarte): the accelerations make
de_v/dt = -Kd e_v - Kp e_p (stabilization in the model's `grasp` section). The multiplier lambda (6) is the
spatial force the constraint applies on the hand's body, in frame c1 about its origin [N, N m]: the wrench the
target exerts on the hand at the grasp (the target feels -lambda).

Two routes to the same accelerations and lambda (checked against each other and against a KKT system assembled
from CRBA and frame Jacobians in test_contact_loop.py):
- a model without coupling rows (rigid): Pinocchio's `constraintDynamics` with the CONTACT_6D model (the fast
  path); external wrenches enter as their generalized force sum_j J_j^T f_j = h(q, v) - rnea(q, v, 0, f_ext) (two
  Pinocchio calls; the thrusters of a grasped servicer);
- otherwise: explicit_constraints.py with the rows (1)-(2) read from Pinocchio's kinematics (external wrenches
  through rnea's f_ext; a flexible model's coupling rows appended).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..model.contact_config import Stabilization
from ..pinocchio_compat import init_constraint_dynamics, rigid_constraint_6d
from .explicit_constraints import ExplicitConstraintDynamics

WORLD = pin.ReferenceFrame.WORLD


class LoopClosure:
    """The weld of c1 (placement1 on joint1) and c2 (placement2 on joint2); see the module docstring."""

    rows = 6

    def __init__(self, model: pin.Model, joint1: int, placement1: pin.SE3, joint2: int, placement2: pin.SE3,
                 stabilization: Stabilization, explicit: ExplicitConstraintDynamics):
        self.model = model
        self.joint1, self.joint2 = joint1, joint2
        self.placement1, self.placement2 = placement1.copy(), placement2.copy()
        self.kp, self.kd = stabilization.kp, stabilization.kd
        self.explicit = explicit
        self.fast = explicit.n_coupling == 0       # Pinocchio's constraintDynamics applies (no coupling rows)
        if self.fast:
            self._constraint = rigid_constraint_6d(model, joint1, placement1, joint2, placement2, self.kp, self.kd)
            self._models = pin.StdVec_RigidConstraintModel()
            self._models.append(self._constraint)
            self._datas = pin.StdVec_RigidConstraintData()
            self._datas.append(self._constraint.createData())
            self._prox = pin.ProximalSettings(1e-12, 0.0, 1)    # mu = 0, one iteration: the exact KKT solve
            self._prepared = None          # the data constraintDynamics was initialized for (held: ids get reused)
        self.force = np.zeros(6)      # lambda of the last acceleration() call (N, N m; frame c1)
        self._zero_v = np.zeros(model.nv)

    @classmethod
    def closed_at(cls, model: pin.Model, data: pin.Data, q: np.ndarray, joint1: int, placement1: pin.SE3,
                  joint2: int, stabilization: Stabilization, explicit: ExplicitConstraintDynamics) -> LoopClosure:
        """The loop that keeps the relative pose of c1 and body 2 at configuration q (c2 = c1 there)."""
        pin.forwardKinematics(model, data, q)
        placement2 = data.oMi[joint2].actInv(data.oMi[joint1] * placement1)
        return cls(model, joint1, placement1, joint2, placement2, stabilization, explicit)

    # ---- dynamics ----------------------------------------------------------------------------
    def acceleration(self, data: pin.Data, q: np.ndarray, v: np.ndarray, tau: np.ndarray, fext=None) -> np.ndarray:
        """a (nv, a new array) of the constrained system under the generalized forces tau and the external
        wrenches fext (Pinocchio joint forces or None); lambda into self.force."""
        if self.fast:
            if fext is not None:      # + sum_j J_j^T f_j = h - rnea(q, v, 0, f_ext) (module docstring); rnea last:
                # it leaves the joint velocities at (q, v) in data, which constraintDynamics keeps (the power reads)
                h = pin.nonLinearEffects(self.model, data, q, v).copy()
                tau = tau + (h - pin.rnea(self.model, data, q, v, self._zero_v, fext))
            if data is not self._prepared:
                init_constraint_dynamics(self.model, data, self._models, self._datas)
                self._prepared = data
            acceleration = pin.constraintDynamics(self.model, data, q, v, tau, self._models, self._datas,
                                                  self._prox).copy()
            self.force = data.lambda_c.copy()         # a view Pinocchio overwrites at the next call
            return acceleration
        explicit = self.explicit
        bias = explicit.kinematics(data, q, v, fext)
        jacobian, drift = self.constraint_rows(data)
        acceleration, self.force = explicit.solve(data, tau, bias, jacobian, drift)
        return acceleration

    def constraint_rows(self, data: pin.Data) -> tuple[np.ndarray, np.ndarray]:
        """(J, gamma + Kd e_v + Kp e_p): the rows of eqs. (1)-(2) with the drift control, from data after
        ExplicitConstraintDynamics.kinematics (data.oMi, data.v, data.a_gf, data.J at (q, v)). The uniform gravity
        term in a_gf cancels in A_1 - A_2."""
        oMc1 = data.oMi[self.joint1] * self.placement1
        c1Mc2 = oMc1.actInv(data.oMi[self.joint2] * self.placement2)
        vc2_in_1 = c1Mc2.act(self.placement2.actInv(data.v[self.joint2]))
        error_v = self.placement1.actInv(data.v[self.joint1]) - vc2_in_1
        drift = (self.placement1.actInv(data.a_gf[self.joint1])
                 - c1Mc2.act(self.placement2.actInv(data.a_gf[self.joint2]))
                 + error_v.cross(vc2_in_1)).vector
        drift += self.kd * error_v.vector - self.kp * pin.log6(c1Mc2).vector
        model = self.model
        jacobian = oMc1.toActionMatrixInverse() @ (pin.getJointJacobian(model, data, self.joint1, WORLD)
                                                   - pin.getJointJacobian(model, data, self.joint2, WORLD))
        return jacobian, drift

    # ---- kinematics ----------------------------------------------------------------------------
    def jacobian(self, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """J of eq. (1) at q (6, nv): e_v = J v."""
        pin.computeJointJacobians(self.model, data, q)
        oMc1 = data.oMi[self.joint1] * self.placement1
        return oMc1.toActionMatrixInverse() @ (pin.getJointJacobian(self.model, data, self.joint1, WORLD)
                                               - pin.getJointJacobian(self.model, data, self.joint2, WORLD))

    def errors(self, data: pin.Data, q: np.ndarray, v: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(e_p, e_v) of eq. (1) at (q, v) (6 each, frame c1: m and rad, m/s and rad/s; e_v zero without v)."""
        if v is None:
            pin.forwardKinematics(self.model, data, q)
        else:
            pin.forwardKinematics(self.model, data, q, v)
        oMc1 = data.oMi[self.joint1] * self.placement1
        c1Mc2 = oMc1.actInv(data.oMi[self.joint2] * self.placement2)
        error_p = -pin.log6(c1Mc2).vector
        if v is None:
            return error_p, np.zeros(6)
        error_v = self.placement1.actInv(data.v[self.joint1]) - c1Mc2.act(self.placement2.actInv(data.v[self.joint2]))
        return error_p, error_v.vector.copy()
