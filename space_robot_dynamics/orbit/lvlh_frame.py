"""Between the integration frame and the LVLH frame: the free-flying bases' poses and twists (docs/orbit.md sec. 3).

The simulator integrates in the frame W: origin on the reference orbit (a point in free fall), axes fixed in
inertial space, equal to the LVLH axes at t = 0. The LVLH frame L shares W's origin and turns relative to W: its axes
are the columns of A (W axes) and its angular velocity is omega (W axes). Every joint but the free flyers' describes
a body relative to another body, the same in both frames. For a free-flyer joint with placement oMj_W in W (the
joint's mount M times its configuration) and twist nu_W in its own frame (Pinocchio's LOCAL velocity):
- pose: oMj_L = (A^T, 0) oMj_W (the origins coincide), so the configuration is M^-1 (A^T, 0) M q_W;
- twist relative to L: nu_L = nu_W - oMj_W^-1 (0, omega), the body's twist less that of L's rigid motion where the
  body is (linear omega x p, angular omega), in the body's axes.
The positions are the same numbers at t = 0 (A = I); the velocities never are while omega is not zero.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin


@dataclass(frozen=True)
class LvlhFrame:
    """The LVLH frame at one instant, seen from the integration frame W: axes (3x3, columns x, y, z in W) and
    angular velocity omega (rad/s, W axes)."""

    axes: np.ndarray
    omega: np.ndarray


class FreeFlyerTransform:
    """The W <-> LVLH conversion of (q, v) for a model whose free-flyer joints are `joint_ids` (module docstring)."""

    def __init__(self, model: pin.Model, joint_ids):
        self.model = model
        self._joints = [(model.joints[j].idx_q, model.joints[j].idx_v, model.jointPlacements[j])
                        for j in joint_ids]

    def to_lvlh(self, q: np.ndarray, v: np.ndarray, frame: LvlhFrame) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) of the W state q, v in the LVLH frame (new arrays)."""
        return self._convert(q, v, frame, to_lvlh=True)

    def from_lvlh(self, q: np.ndarray, v: np.ndarray, frame: LvlhFrame) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) in W of the LVLH state q, v (new arrays)."""
        return self._convert(q, v, frame, to_lvlh=False)

    def _convert(self, q, v, frame: LvlhFrame, to_lvlh: bool):
        q, v = np.array(q, dtype=float), np.array(v, dtype=float)
        turn = pin.SE3(frame.axes.T if to_lvlh else frame.axes, np.zeros(3))     # W -> L, or L -> W
        lvlh_motion = pin.Motion(np.zeros(3), np.asarray(frame.omega, float))
        sign = -1.0 if to_lvlh else 1.0
        for idx_q, idx_v, mount in self._joints:
            placement = mount * pin.XYZQUATToSE3(q[idx_q:idx_q + 7])
            turned = turn * placement
            in_w = placement if to_lvlh else turned          # the joint's placement in W
            q[idx_q:idx_q + 7] = pin.SE3ToXYZQUAT(mount.inverse() * turned)
            v[idx_v:idx_v + 6] += sign * in_w.actInv(lvlh_motion).vector
        return q, v
