"""The capture envelope: may the gripper close on the fixture now? (docs/contact.md sec. 1)

Four figures at the instant the gripper is commanded closed, each against its tolerance (model `grasp.tolerances`):
- position (m): distance from the end-effector frame's origin to the fixture frame's origin (world);
- angle (rad): between the hand's approach axis and the fixture's inward axis, acos(-a_ee . a_fix) (world);
- linear velocity (m/s): velocity of the end-effector origin relative to the target's material point there;
- angular velocity (rad/s): angular velocity of the hand relative to the target.
The two velocities are the norms of the linear and angular parts of e_v of loop_closure.py eq. (1) with c2 placed
on the target at the hand's frame: what the grasp impulse has to stop.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..model.contact_config import GraspTolerances


@dataclass(frozen=True)
class CaptureCheck:
    position: float            # m
    angle: float               # rad
    linear_velocity: float     # m/s
    angular_velocity: float    # rad/s
    tolerances: GraspTolerances

    @property
    def exceeded(self) -> list[str]:
        """The figures outside their tolerance, as 'name value > limit unit' phrases (empty: within)."""
        tol, out = self.tolerances, []
        for name, value, limit, unit in (("position", self.position, tol.position, "m"),
                                         ("angle", self.angle, tol.angle, "rad"),
                                         ("linear_velocity", self.linear_velocity, tol.linear_velocity, "m/s"),
                                         ("angular_velocity", self.angular_velocity, tol.angular_velocity,
                                          "rad/s")):
            if not value <= limit:
                out.append(f"{name} {value:.4g} {unit} > {limit:.4g} {unit}")
        return out

    @property
    def within(self) -> bool:
        return not self.exceeded

    def figures(self) -> dict:
        return {"position_m": self.position, "angle_rad": self.angle, "linear_velocity_m_s": self.linear_velocity,
                "angular_velocity_rad_s": self.angular_velocity}


def check_capture(model: pin.Model, data: pin.Data, q: np.ndarray, v: np.ndarray, ee_frame: int,
                  approach_axis: np.ndarray, target_frame: int, target_axis: np.ndarray,
                  tolerances: GraspTolerances) -> CaptureCheck:
    """The four figures of the module docstring at (q, v)."""
    pin.forwardKinematics(model, data, q, v)
    oMe = pin.updateFramePlacement(model, data, ee_frame)
    oMf = pin.updateFramePlacement(model, data, target_frame)
    position = float(np.linalg.norm(oMe.translation - oMf.translation))
    cosine = -float((oMe.rotation @ approach_axis) @ (oMf.rotation @ target_axis))
    angle = float(np.arccos(np.clip(cosine, -1.0, 1.0)))
    # relative spatial velocity of the hand and the target's body, at the hand's origin, in the hand's axes
    hand = pin.getFrameVelocity(model, data, ee_frame, pin.ReferenceFrame.LOCAL)
    body = model.frames[target_frame].parentJoint
    target = oMe.actInv(data.oMi[body].act(data.v[body]))
    relative = hand - target
    return CaptureCheck(position, angle, float(np.linalg.norm(relative.linear)),
                        float(np.linalg.norm(relative.angular)), tolerances)
