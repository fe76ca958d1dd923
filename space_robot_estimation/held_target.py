"""The held target's state from the servicer's: while the grasp holds, the target is the arm's last body.

A torque-free model is wrong the moment the gripper latches: the grasp impulse changes the target's twist at once,
and the arm and the wheels then turn the joined stack. A flight system switches the target's estimate to the
kinematic chain at the latch signal (the gripper's own sensor: grasp/state): the placement of the target's base
frame in the hand frame, M_HT, is taken from the estimates at the latch (the target filter's pose against the
hand's through the arm's forward kinematics) and held fixed; from then on

    oM_T = oM_H M_HT,        v_T = M_HT^-1 . v_H            (spatial velocities in their own frames, Pinocchio's
                                                             LOCAL convention, as a free-flyer joint's velocity)

with oM_H and v_H from the estimated bus and arm (forward kinematics). On release the target filter restarts from
this state (estimators_core).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel


class HeldTarget:
    def __init__(self, system: SystemModel, hand_frame: str, target_subtree: str):
        self.model = system.model
        self.data = self.model.createData()
        self._hand = system.model.getFrameId(hand_frame)
        joint = system.subtree(target_subtree).base_joint
        self._target_joint = system.joint_id(joint)
        self._q = system.q_slice(joint).start
        self._v = system.v_slice(joint).start
        self.hand_to_target: pin.SE3 | None = None      # M_HT, while held

    def latch(self, q: np.ndarray) -> None:
        """Take M_HT from the configuration `q` (the estimates at the latch)."""
        pin.forwardKinematics(self.model, self.data, q)
        hand = pin.updateFramePlacement(self.model, self.data, self._hand)
        self.hand_to_target = hand.actInv(self.data.oMi[self._target_joint])

    def release(self) -> None:
        self.hand_to_target = None

    def place(self, q: np.ndarray, v: np.ndarray) -> None:
        """Write the target's configuration and velocity into q, v from the rest of them (in place)."""
        pin.forwardKinematics(self.model, self.data, q, v)
        hand = pin.updateFramePlacement(self.model, self.data, self._hand)
        hand_velocity = pin.getFrameVelocity(self.model, self.data, self._hand, pin.LOCAL)
        placement = hand * self.hand_to_target
        velocity = self.hand_to_target.actInv(hand_velocity)
        q[self._q:self._q + 3] = placement.translation
        q[self._q + 3:self._q + 7] = pin.Quaternion(placement.rotation).coeffs()
        v[self._v:self._v + 3] = velocity.linear
        v[self._v + 3:self._v + 6] = velocity.angular
