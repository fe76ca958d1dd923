"""Surface contact: a point of the robot kept on a surface of another body, with a unilateral normal force
(seed 004 sec. 2.4, eqs. 2.27-2.29 with Phi the signed distance; docs/contact.md sec. 5).

The surface is fixed on body B (a plane: point p0 and outward normal n; a circular cylinder: point c on its axis,
unit axis u, radius R; all in the coordinates of a frame on B), the contact point P is the origin of a frame on the
robot. Signed distance (positive outside) and outward normal, world frame:

    plane:     Phi = n . (P - p0)
    cylinder:  r = (1 - u u^T)(P - c),  Phi = |r| - R,  n = r / |r|                                  (1)

With w = v_P - v_B(P) the velocity of P relative to B's material point at P (both classical, world axes):

    dPhi/dt = n . w = J_n v,     J_n = n^T (J_P - J_B(P))   (linear rows, LOCAL_WORLD_ALIGNED)          (2)
    d2Phi/dt2 = J_n a + gamma,   gamma = n . (a_P - a_B(P))|_(a=0) + 2 (w_B x n) . w  [+ (t . w)^2 / |r|]   (3)

(w_B the angular velocity of B, t = u x n the cylinder's circumferential direction; the bracket is the cylinder's
curvature term, R on the surface). While in contact the constraint Phi = 0 holds with drift control d2Phi/dt2 = -Kd
dPhi/dt - Kp Phi, and the multiplier lambda_n (N) is the normal force on the robot's point, pushing it out of the
surface when positive. The contact is unilateral: lambda_n < 0 (the surface would have to pull) means separation.
Tangential motion is free (frictionless): the constraint force is purely normal, which is the decomposition of seed
004 sec. 5.3 with N = span(n).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..model.contact_config import SurfaceConfig
from .explicit_constraints import ExplicitConstraintDynamics

ALIGNED = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class SurfaceContact:
    """One surface of a model and the robot point that can touch it (frame ids of `model`)."""

    rows = 1

    def __init__(self, model: pin.Model, config: SurfaceConfig, surface_frame: int, contact_frame: int,
                 explicit: ExplicitConstraintDynamics):
        self.model = model
        self.config = config
        frame = model.frames[surface_frame]
        self.body = frame.parentJoint
        self.body_placement = frame.placement                    # surface frame on the body's joint
        self.contact = model.frames[contact_frame]
        self.contact_joint = self.contact.parentJoint
        self.point = np.asarray(config.point, float)
        self.direction = np.asarray(config.normal if config.shape == "plane" else config.axis, float)
        self.cylinder = config.shape == "cylinder"
        self.radius = config.radius
        self.kp, self.kd = config.stabilization.kp, config.stabilization.kd
        self.explicit = explicit
        self.force = np.zeros(1)      # lambda_n of the last acceleration() call (N)

    # ---- geometry ------------------------------------------------------------------------------
    def geometry(self, data: pin.Data) -> tuple[float, np.ndarray, np.ndarray]:
        """(Phi, n, P) of eq. (1) from data.oMi (world; m, unit, m)."""
        oMs = data.oMi[self.body] * self.body_placement
        point = (data.oMi[self.contact_joint] * self.contact.placement).translation
        if not self.cylinder:
            normal = oMs.rotation @ self.direction
            return float(normal @ (point - oMs.act(self.point))), normal, point
        axis = oMs.rotation @ self.direction
        radial = point - oMs.act(self.point)
        radial = radial - (radial @ axis) * axis
        distance = float(np.linalg.norm(radial))
        if distance < 1e-12:
            raise FloatingPointError(f"contact point on the axis of cylinder {self.config.name!r}: no normal")
        return distance - self.radius, radial / distance, point

    def distance(self, data: pin.Data, q: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        """(Phi, dPhi/dt) at (q, v): m, m/s."""
        model = self.model
        pin.forwardKinematics(model, data, q, v)
        pin.computeJointJacobians(model, data, q)
        phi, normal, point = self.geometry(data)
        return phi, float((self.normal_jacobian(data, normal, point) @ v)[0])

    def normal_jacobian(self, data: pin.Data, normal: np.ndarray, point: np.ndarray) -> np.ndarray:
        """J_n of eq. (2) (1, nv) from data.J at q."""
        model = self.model
        on_robot = pin.getFrameJacobian(model, data, self.contact_joint, self.contact.placement, ALIGNED)[:3]
        on_body = pin.getFrameJacobian(model, data, self.body, pin.SE3(np.eye(3), data.oMi[self.body].actInv(point)),
                                       ALIGNED)[:3]
        return (normal @ (on_robot - on_body))[None, :]

    # ---- dynamics ----------------------------------------------------------------------------
    def constraint_rows(self, data: pin.Data) -> tuple[np.ndarray, np.ndarray]:
        """(J_n, gamma + Kd dPhi/dt + Kp Phi) of eqs. (2)-(3), from data after
        ExplicitConstraintDynamics.kinematics (data.v, data.a_gf, data.oMi, data.J at (q, v))."""
        phi, normal, point = self.geometry(data)
        jacobian = self.normal_jacobian(data, normal, point)
        robot_frame = pin.SE3(np.eye(3), self.contact.placement.translation)
        a_p, v_p = self._classical(data, self.contact_joint, robot_frame)
        a_b, v_b = self._classical(data, self.body, pin.SE3(np.eye(3), data.oMi[self.body].actInv(point)))
        omega_body = data.oMi[self.body].rotation @ data.v[self.body].angular
        relative = v_p - v_b
        drift = normal @ (a_p - a_b) + 2.0 * np.cross(omega_body, normal) @ relative
        if self.cylinder:
            tangent = np.cross(data.oMi[self.body].rotation @ (self.body_placement.rotation @ self.direction), normal)
            drift += (tangent @ relative) ** 2 / (phi + self.radius)      # |r| of eq. (1)
        rate = float(normal @ relative)
        return jacobian, np.array([drift + self.kd * rate + self.kp * phi])

    @staticmethod
    def _classical(data: pin.Data, joint: int, placement: pin.SE3) -> tuple[np.ndarray, np.ndarray]:
        """Classical acceleration at a = 0 and velocity of the point `placement.translation` of `joint`'s body,
        world axes (from data.v and data.a_gf; the uniform gravity term cancels in the differences of eq. 3)."""
        velocity = placement.actInv(data.v[joint])
        acceleration = placement.actInv(data.a_gf[joint])
        rotation = data.oMi[joint].rotation @ placement.rotation
        classical = acceleration.linear + np.cross(velocity.angular, velocity.linear)
        return rotation @ classical, rotation @ velocity.linear

    def acceleration(self, data: pin.Data, q: np.ndarray, v: np.ndarray, tau: np.ndarray, fext=None) -> np.ndarray:
        """a (nv) with the contact held; lambda_n into self.force."""
        explicit = self.explicit
        bias = explicit.kinematics(data, q, v, fext)
        jacobian, drift = self.constraint_rows(data)
        acceleration, self.force = explicit.solve(data, tau, bias, jacobian, drift)
        return acceleration

    def jacobian(self, data: pin.Data, q: np.ndarray) -> np.ndarray:
        """J_n (1, nv) at q."""
        pin.framesForwardKinematics(self.model, data, q)
        pin.computeJointJacobians(self.model, data, q)
        _phi, normal, point = self.geometry(data)
        return self.normal_jacobian(data, normal, point)
