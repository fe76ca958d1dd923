"""Rigid-grasp contact constraint of seed 004 eqs. 2.27-2.30, for a weld between two frames.

Seed 004 sec. 2.4 writes the contact as Phi(chi) = 0 on the pose chi of the end effector in the target
frame, differentiated into J theta_dot = 0 (eq. 2.29). For a rigid grasp Phi fixes the whole relative
pose, and its velocity form is "the two bodies have the same spatial twist". In Pinocchio velocities:

    C_w(q) v = J_b^WORLD(q) v - J_a^WORLD(q) v = 0      (6 rows: linear, angular; world axes)

where J^WORLD is the spatial (world-frame, world-origin) Jacobian of the joint carrying each frame.
Spatial twists of rigidly joined bodies are equal whatever the frames' offsets, so no relative placement
enters. Linear rows: m/s (spatial linear velocity), angular rows: rad/s. In the thesis ordering the
same constraint is simply omega_t = 0, v_t = 0 (see momentum_matrices.py).
Derivative X_u(C_w) = d/de C_w(q (+) e u): Pinocchio's joint-Jacobian time variation with velocity u,
which in the WORLD frame is the exact derivative (checked by finite differences in the tests).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin


class WeldConstraint:
    """Equal spatial twists of the bodies carrying frame_a and frame_b (frame ids of `model`)."""

    rows = 6

    def __init__(self, model: pin.Model, frame_a: int, frame_b: int):
        self.model = model
        self.data = model.createData()
        self.joint_a = model.frames[frame_a].parentJoint
        self.joint_b = model.frames[frame_b].parentJoint

    def matrix(self, q: np.ndarray) -> np.ndarray:
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        return (pin.getJointJacobian(model, data, self.joint_b, pin.ReferenceFrame.WORLD)
                - pin.getJointJacobian(model, data, self.joint_a, pin.ReferenceFrame.WORLD))

    def derivative(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        model, data = self.model, self.data
        pin.computeJointJacobiansTimeVariation(model, data, q, u)
        return (pin.getJointJacobianTimeVariation(model, data, self.joint_b, pin.ReferenceFrame.WORLD)
                - pin.getJointJacobianTimeVariation(model, data, self.joint_a, pin.ReferenceFrame.WORLD))

    def kernel_derivative(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Same as derivative (the interface of constraint_stack.py)."""
        return self.derivative(q, u)
