"""The momentum balance of the whole system: change of its momentum = integrated external impulse (docs/orbit.md
sec. 5), where momentum is not conserved (external wrenches, an orbit) and where it is (then the impulse is zero).

Both sides are inertial: the linear momentum P (N s) and the angular momentum L_X (N m s) about a point X fixed in
inertial space, W axes. In free space W is the world frame and X its origin. In orbit (orbital_environment.py) W
falls with the reference point r_O at velocity v_O, X = r_O(0), D = r_O - X; a body k (a Pinocchio joint's body, the
links a fixed joint merges into it included) with momentum P'_k, angular momentum about W's origin L'_k, mass m_k and
centre of mass c_k in W has P_k = P'_k + m_k v_O and L_X,k = L'_k + D x P'_k + m_k (D + c_k) x v_O.
The residual's scale is the largest momentum any body carries (a total momentum of zero by design is no scale; nor is
a subtree's, which the arm's internal torques leave at zero for a servicer starting at rest).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin


@dataclass(frozen=True)
class MomentumBalance:
    """At one instant: residual = momentum change since the start - integrated external impulse (inertial, W axes;
    linear N s, angular N m s about X); body_linear, body_angular: the largest |P_k|, |L_X,k| of the bodies now."""

    linear_residual: np.ndarray
    angular_residual: np.ndarray
    body_linear: float
    body_angular: float


def balance_applies(system) -> bool:
    """Whether the external impulse is all that changes the system's momentum: every subtree on a free flyer at the
    world's origin (a fixed, spherical or planar base, or a mount, is held by the world with forces nobody
    integrates) and no uniform gravity (the model file's `gravity`; an orbit's gravity is integrated)."""
    return not np.any(system.config.gravity) and all(
        s.config.base_joint == "free_flyer" and not s.config.mount_frame and not np.any(s.config.mount_xyz)
        and not np.any(s.config.mount_rpy) for s in system.subtrees)


class BodyMomenta:
    """Per massive body of a model, its inertial momentum at a state (module docstring)."""

    def __init__(self, model: pin.Model):
        self.model = model
        self.data = model.createData()
        self.joints = [j for j in range(1, model.njoints) if model.inertias[j].mass > 0.0]
        self.masses = np.array([model.inertias[j].mass for j in self.joints])

    def __call__(self, q: np.ndarray, v: np.ndarray, offset=None, frame_velocity=None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(P_k, L_X,k), arrays (bodies, 3), at W's state (q, v); offset D (m) and frame_velocity v_O (m/s) in
        orbit (None: free space, X = W's origin)."""
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v)
        linear, angular, centres = (np.empty((len(self.joints), 3)) for _ in range(3))
        for k, j in enumerate(self.joints):
            inertia, placement = model.inertias[j], data.oMi[j]
            h = placement.act(inertia * data.v[j])           # about W's origin, W axes
            linear[k], angular[k], centres[k] = h.linear, h.angular, placement.act(inertia.lever)
        if offset is not None:
            angular += np.cross(offset, linear) + np.cross(self.masses[:, None] * (offset + centres), frame_velocity)
            linear += self.masses[:, None] * frame_velocity
        return linear, angular
