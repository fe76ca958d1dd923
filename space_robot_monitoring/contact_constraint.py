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

    def kernel_derivatives(self, q: np.ndarray, directions: np.ndarray) -> np.ndarray:
        """derivative for each column of `directions` (nv x k), side by side: (6, k nv)."""
        return np.concatenate([self.derivative(q, u) for u in directions.T] or [np.empty((6, 0))], axis=1)


def support_mask(model: pin.Model, joint_id: int) -> np.ndarray:
    """(nv,) 1.0 on the velocity entries of joint_id and its ancestors: J_joint^WORLD = data.J * mask."""
    mask = np.zeros(model.nv)
    while joint_id > 0:
        joint = model.joints[joint_id]
        mask[joint.idx_v:joint.idx_v + joint.nv] = 1.0
        joint_id = model.parents[joint_id]
    return mask


class MomentumAndWeld:
    """Seed 004 eq. 2.34 for a rigid grasp: the momentum rows (A_G, as momentum_matrices.CentroidalMomentum)
    on top of the weld rows (as WeldConstraint), from one Pinocchio call per derivative.

    `computeCentroidalMapTimeVariation` also fills data.J and data.dJ (all joint Jacobians and their time
    variation, WORLD frame), so the weld rows are (data.J or data.dJ) * (mask_b - mask_a), mask = the
    joint's support. kernel_derivative is the cheap form used by the mechanical connection (the momentum
    part without the centre-of-mass term, see CentroidalMomentum.kernel_derivative); derivative is exact.
    """

    rows = 12

    def __init__(self, model: pin.Model, frame_a: int, frame_b: int, momentum=None):
        """momentum: a momentum_matrices.CentroidalMomentum whose Pinocchio data to share (the monitor reads
        the kinematics at q from it after matrix(q)); a new one if None."""
        from .momentum_matrices import CentroidalMomentum

        self.model = model
        self.momentum = CentroidalMomentum(model) if momentum is None else momentum
        self.weld = WeldConstraint(model, frame_a, frame_b)
        self.data = self.momentum.data
        self.mask = support_mask(model, self.weld.joint_b) - support_mask(model, self.weld.joint_a)
        self._zero = np.zeros(model.nv)

    def matrix(self, q: np.ndarray) -> np.ndarray:
        data = self.data
        out = np.empty((12, self.model.nv))
        pin.computeCentroidalMapTimeVariation(self.model, data, q, self._zero)    # fills Ag and J
        out[:6] = data.Ag
        out[6:] = data.J * self.mask
        return out

    def derivative(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.vstack((self.momentum.derivative(q, u), self.weld.derivative(q, u)))

    def kernel_derivative(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        data = self.data
        out = np.empty((12, self.model.nv))
        out[:6] = pin.computeCentroidalMapTimeVariation(self.model, data, q, u)
        out[6:] = data.dJ * self.mask
        return out

    def kernel_derivatives(self, q: np.ndarray, directions: np.ndarray) -> np.ndarray:
        """kernel_derivative for each column of `directions` (nv x k), side by side: (12, k nv)."""
        model, data, variation = self.model, self.data, pin.computeCentroidalMapTimeVariation
        momentum, weld = [], []
        for u in directions.T:
            momentum.append(variation(model, data, q, u))     # a new array
            weld.append(data.dJ.copy())                       # overwritten by the next call
        out = np.concatenate((np.concatenate(momentum or [np.empty((6, 0))], axis=1),
                              np.concatenate(weld or [np.empty((6, 0))], axis=1)))
        weld_blocks = out[6:].reshape(6, -1, self.model.nv)       # a view: block i on axis 1
        weld_blocks *= self.mask
        return out
