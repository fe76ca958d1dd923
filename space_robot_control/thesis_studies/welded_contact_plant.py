"""The thesis studies' plant: a model whose end effector is held on a target by a rigid 6D contact from t = 0
(seed 004 sec. 2.4 and ch. 6: the contact constraints J(theta) thetadot = 0 of eq. 6.2 with the target's and the
robot's coordinates together, the contact established as ch. 6 and 7 assume), simulated with Pinocchio's
constraint dynamics. The ch. 6 and ch. 7 studies (force_motion_study.py, adaptive_study.py) run on it, and with
them it is the oracle of the node-graph scenarios thesis_force_motion_graph and hubble_adaptive_graph. It is not
the product's grasp: the simulator closes and holds a grasp in its contact loop (space_robot_dynamics/contact/).

Contact frames: c1 = frame `frame1` (the hand) on its parent joint j1; c2 on the target's joint j2, placed so
that it coincides with c1 at the initial configuration (the weld keeps that relative pose). Pinocchio's
CONTACT_6D model in the LOCAL frame of c1 gives

    M(q) a + h(q, v) = tau + J_c^T lambda,    J_c a + gamma = -Kd e_v - Kp e_p       (eq. 5.14 / 6.1-6.2)

with lambda (6) the spatial force the constraint applies on the hand's body, in c1 about its origin (N, N m):
the wrench the target exerts on the hand; the target feels -lambda. Baumgarte gains (kp 1/s^2, kd 1/s) hold
the drift of the position-level constraint (reported: `constraint_error`).

Integration: the project's RKMK4 (space_robot_dynamics/simulation/integrators.py) on (q, v) with tau held over
the step (zero-order hold).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.pinocchio_compat import init_constraint_dynamics, rigid_constraint_6d
from space_robot_dynamics.simulation.integrators import ManifoldRK4


class WeldedContactPlant:
    """Constrained forward dynamics and stepping of `system` with c1 (frame1) welded to the body of frame2."""

    def __init__(self, system: SystemModel, frame1: str, frame2: str, q0: np.ndarray, v0: np.ndarray,
                 dt: float, baumgarte_kp: float, baumgarte_kd: float):
        model = system.model
        for field, name in (("frame1", frame1), ("frame2", frame2)):
            if not model.existFrame(name):
                raise ConfigError(f"contact.{field}", f"no frame named {name!r} in the model")
        if not (dt > 0.0 and baumgarte_kp >= 0.0 and baumgarte_kd >= 0.0):
            raise ConfigError("contact", "dt must be > 0 and the Baumgarte gains >= 0")
        self.system, self.model = system, model
        self.data = model.createData()
        f1 = model.frames[model.getFrameId(frame1)]
        f2 = model.frames[model.getFrameId(frame2)]
        self.joint1, self.joint2 = f1.parentJoint, f2.parentJoint
        self.placement1 = f1.placement.copy()
        q0 = pin.normalize(model, np.asarray(q0, dtype=float).copy())
        pin.forwardKinematics(model, self.data, q0)
        self.placement2 = self.data.oMi[self.joint2].actInv(self.data.oMi[self.joint1] * self.placement1)
        constraint = rigid_constraint_6d(model, self.joint1, self.placement1, self.joint2, self.placement2,
                                         baumgarte_kp, baumgarte_kd)
        self._models = pin.StdVec_RigidConstraintModel()
        self._models.append(constraint)
        self._datas = pin.StdVec_RigidConstraintData()
        self._datas.append(constraint.createData())
        init_constraint_dynamics(model, self.data, self._models, self._datas)
        self._prox = pin.ProximalSettings(1e-12, 0.0, 1)     # mu = 0, one iteration: the exact KKT solve
        self.integrator = ManifoldRK4(model)
        self.dt = float(dt)
        self.t = 0.0
        self.q, self.v = q0, np.asarray(v0, dtype=float).copy()
        self._tau = np.zeros(model.nv)

    def acceleration(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a, lambda) of the constrained system at (q, v) under generalized forces tau (new arrays)."""
        a = pin.constraintDynamics(self.model, self.data, q, v, tau, self._models, self._datas, self._prox)
        return a.copy(), self.data.lambda_c.copy()

    def contact_force(self, tau: np.ndarray | None = None) -> np.ndarray:
        """lambda (6: force N, torque N m; c1 frame; on the hand) at the current state under tau (default: the
        force held over the last step)."""
        return self.acceleration(self.q, self.v, self._tau if tau is None else tau)[1]

    def step(self, tau: np.ndarray) -> None:
        """Advance one dt with tau (nv, N / N m in Pinocchio's generalized coordinates) held."""
        self._tau = np.asarray(tau, dtype=float).copy()

        def rhs(q, y):
            return self.acceleration(q, y, self._tau)[0]

        q, v, _ = self.integrator.step(rhs, self.q, self.v, self.dt)
        self.q, self.v, self.t = q, v, self.t + self.dt

    def constraint_error(self) -> tuple[float, float]:
        """(position m, angle rad) of the weld's drift at the current configuration: |log6(c1Mc2)|."""
        pin.forwardKinematics(self.model, self.data, self.q)
        c1 = self.data.oMi[self.joint1] * self.placement1
        c2 = self.data.oMi[self.joint2] * self.placement2
        error = pin.log6(c1.actInv(c2)).vector
        return float(np.linalg.norm(error[:3])), float(np.linalg.norm(error[3:]))
