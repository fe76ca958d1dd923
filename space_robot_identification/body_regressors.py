"""Momentum and joint torques of a multibody system, linear in the inertial parameters of one body.

The identified body B is what the model attaches rigidly at a frame F (a link merged through a fixed joint, or
the root link of a fixed-base subtree mounted on a frame, e.g. a captured target on the hand): Pinocchio keeps
its spatial inertia in `Frame.inertia` (zero for a frame that carries none) and adds it to the inertia of F's
parent joint. Everything else in the model is known. With pi the dynamic parameters of B in F
(body_inertia.py):

Momentum (seed 004 eqs. 2.9-2.12; Pinocchio's centroidal momentum moved to the world origin O):
    h_O(q, v) = h_O,known(q, v) + X*_OF Y_h(v_F) pi,          h_O = [p; L_O], world axes,
  with v_F the spatial velocity of F in F (LOCAL), Y_h(v_F) = `pin.bodyRegressor(0, v_F)` (I_F v_F = Y_h pi: the
  body's momentum about F's origin in F axes) and X*_OF = `SE3.toDualActionMatrix()` of the placement of F in
  the world, which moves a momentum (force-like) vector to O in world axes.
Joint torques (equations of motion):
    tau(q, v, a) = RNEA_known(q, v, a) + J_F^T Y_f(v_F, a_F - g_F) pi,
  with Y_f = `pin.frameBodyRegressor` after RNEA (the wrench I_F (a_F - g_F) + v_F x* I_F v_F = Y_f pi that
  moves B, F axes; a_F the spatial acceleration of F in F, g_F gravity in F) and J_F the frame Jacobian in F
  (LOCAL).
The known model is the model with B's inertia taken out of F's parent joint. Checked against Pinocchio's
centroidal momentum and RNEA of the whole model in test/test_identification_regressors.py.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.system_momentum import momentum_about_point

from .body_inertia import physical_parameters

_ORIGIN = np.zeros(3)


class BodyRegressors:
    """Regressors of the body attached at `frame` (a link or frame name) of `system`'s model."""

    def __init__(self, system: SystemModel, frame: str):
        model = system.model
        self.system = system
        self.frame = frame
        self.frame_id = system.frame_id(frame)
        placed = model.frames[self.frame_id]
        self.joint_id = placed.parentJoint
        if self.joint_id == 0:
            raise ValueError(f"frame {frame!r} is fixed to the world: its body does not move")
        self.prior = pin.Inertia(placed.inertia)        # B as the model has it, in F
        self.known_model = model.copy()
        self.known_model.inertias[self.joint_id] = model.inertias[self.joint_id] - placed.placement.act(self.prior)
        self.known_data = self.known_model.createData()
        self.data = model.createData()

    def prior_parameters(self) -> np.ndarray:
        """The model's own physical parameters of B (body_inertia.PARAMETERS order)."""
        return physical_parameters(self.prior)

    def momentum(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(h_known (6,), Y (6 x 10)): momentum of the known bodies [p; L_O] (kg m/s, kg m^2/s; world frame, about
        the world origin) and the regressor of B's momentum, at (q, v)."""
        linear, angular = momentum_about_point(self.known_model, self.known_data, q, v, _ORIGIN)
        model, data = self.system.model, self.data
        pin.forwardKinematics(model, data, q, v)
        placement = pin.updateFramePlacement(model, data, self.frame_id)
        velocity = pin.getFrameVelocity(model, data, self.frame_id, pin.ReferenceFrame.LOCAL)
        regressor = placement.toDualActionMatrix() @ pin.bodyRegressor(pin.Motion.Zero(), velocity)
        return np.concatenate((linear, angular)), regressor

    def torques(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(tau_known (nv,), Y (nv x 10)): generalized forces of the known bodies (N, N m; Pinocchio's v order) and
        the regressor of B's share, at (q, v, a), gravity included (the model's)."""
        tau_known = pin.rnea(self.known_model, self.known_data, q, v, a).copy()
        model, data = self.system.model, self.data
        pin.rnea(model, data, q, v, a)        # frameBodyRegressor reads the velocities and accelerations RNEA leaves
        body = pin.frameBodyRegressor(model, data, self.frame_id)
        jacobian = pin.computeFrameJacobian(model, data, q, self.frame_id, pin.ReferenceFrame.LOCAL)
        return tau_known, jacobian.T @ body
