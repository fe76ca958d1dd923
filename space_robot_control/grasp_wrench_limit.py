"""Keep the grasp wrench below a limit after a capture: scale the arm's commanded accelerations (docs/contact.md
sec. 8).

With the target held, the control model is the joined system (the servicer with the target's inertia I_t on the
hand's body). The target moves with the hand's body, so the wrench the hand applies to it is its Newton-Euler
wrench, and the target exerts the opposite on the hand (the grasp wrench, as the simulator reports it):

    W = -(I_t A_h + V_h x* I_t V_h)   (hand body frame),   A_h = J_h a + J_h_dot v                         (1)

For the computed torque of a desired arm acceleration a_c* with the wheel torques tau_w, the passive accelerations
(bus, wheels) follow from computed_torque.py eq. (1), a_p = M_pp^-1 (tau_p - h_p - M_pc a_c), affine in a_c, so
the predicted wrench is affine in the scale alpha of a_c = alpha a_c*: W(alpha) = W_0 + alpha (W_1 - W_0). The
limiter takes the largest alpha in [0, 1] with |force| <= F_max and |torque| <= T_max (a quadratic inequality in
alpha for each); when the velocity terms alone exceed a limit (alpha = 0 does not satisfy it) it returns 0 and says
so. Scaling the PD's acceleration slows the arm's stop down; it does not change where it stops.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from .computed_torque import ComputedTorqueStep, FreeFloatingComputedTorque


def largest_scale(start: np.ndarray, change: np.ndarray, limit: float) -> float:
    """The largest alpha in [0, 1] with |start + alpha change| <= limit; 0 when alpha = 0 is already outside."""
    c = float(start @ start) - limit * limit
    if c > 0.0:
        return 0.0
    a, b = float(change @ change), float(start @ change)
    if a == 0.0:
        return 1.0
    root = (-b + math.sqrt(max(b * b - a * c, 0.0))) / a
    return min(1.0, max(0.0, root))


class GraspWrenchLimiter:
    """Eq. (1) on the joined control model; `hand_joint` carries the target, `target_inertia` is I_t in that
    joint's frame, `ee_placement` the end-effector frame on it (the wrench is reported there, about its origin)."""

    def __init__(self, dynamics: FreeFloatingComputedTorque, wheel_v, hand_joint: int, target_inertia: pin.Inertia,
                 ee_placement: pin.SE3, force_limit: float, torque_limit: float):
        self.dynamics = dynamics
        self.model = dynamics.model
        self.data = self.model.createData()
        self.hand_joint = hand_joint
        self.target_inertia = target_inertia
        self.ee_placement = ee_placement
        self.force_limit, self.torque_limit = force_limit, torque_limit
        passive = list(dynamics.passive)
        self._wheel_rows = [passive.index(int(i)) for i in wheel_v]
        self.predicted = np.zeros(6)       # the wrench predicted for the last scaled command [N, N m], EE frame
        self.scale_applied = 1.0

    def wrench(self, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Eq. (1) for the accelerations a (the joined model's), end-effector frame."""
        pin.forwardKinematics(self.model, self.data, q, v, a)
        velocity, acceleration = self.data.v[self.hand_joint], self.data.a[self.hand_joint]
        inertia = self.target_inertia
        on_target = inertia * acceleration + velocity.cross(inertia * velocity)
        return self.ee_placement.actInv(-on_target).vector

    def scale(self, q: np.ndarray, v: np.ndarray, controlled_acceleration: np.ndarray,
              wheel_torque: np.ndarray) -> float:
        """alpha of the module docstring for a_c* and the wheel torques (order of the limiter's wheel_v), from the
        reduced dynamics at (q, v) (computed_torque.py eqs. 1-3: a factorization of its own)."""
        reduced = self.dynamics.reduce(q, v)
        passive_force = np.zeros(len(self.dynamics.passive))
        passive_force[self._wheel_rows] = wheel_torque
        ends = []
        for a_c in (np.zeros(len(controlled_acceleration)), controlled_acceleration):
            a = np.zeros(self.model.nv)
            a[self.dynamics.controlled] = a_c
            a[self.dynamics.passive] = reduced.passive_acceleration(a_c, passive_force)
            ends.append(a)
        return self._largest_scale(q, v, *ends)

    def scale_step(self, q: np.ndarray, v: np.ndarray, step: ComputedTorqueStep, wheel_torque: np.ndarray) -> float:
        """scale() for the a_c* of `step`'s last solve() at (q, v) (same dynamics, forced_v the limiter's wheel_v),
        from that solve's factorization: the controller's path, one crba and one Cholesky per update."""
        forces = wheel_torque if len(wheel_torque) else None
        return self._largest_scale(q, v, step.accelerations(forces, 0.0), step.accelerations(forces, 1.0))

    def _largest_scale(self, q: np.ndarray, v: np.ndarray, at_zero: np.ndarray, at_full: np.ndarray) -> float:
        """alpha from the accelerations of the joined model at alpha = 0 and 1 (eq. 1 is affine in alpha)."""
        start = self.wrench(q, v, at_zero)
        change = self.wrench(q, v, at_full) - start
        alpha = min(largest_scale(start[:3], change[:3], self.force_limit),
                    largest_scale(start[3:], change[3:], self.torque_limit))
        self.scale_applied = alpha
        self.predicted = start + alpha * change
        return alpha

    @property
    def beyond_limits(self) -> bool:
        """The last scale() could not keep the wrench within the limits: even alpha = 0 (the arm's accelerations
        scaled away) leaves the predicted wrench above one of them (the stack's motion alone loads the fixture)."""
        predicted = self.predicted
        return self.scale_applied == 0.0 and (float(np.linalg.norm(predicted[:3])) > self.force_limit
                                              or float(np.linalg.norm(predicted[3:])) > self.torque_limit)
