"""What happens at a contact: the events the simulator reports (grasp, failed grasp, release, touchdown,
separation), and the momentum bookkeeping across an impulse (docs/contact.md sec. 4)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

GRASP, GRASP_FAILED, RELEASE, GRIPPER_OPENED, TOUCHDOWN, SEPARATION = (
    "grasp", "grasp_failed", "release", "gripper_opened", "touchdown", "separation")
EVENT_KINDS = (GRASP, GRASP_FAILED, RELEASE, GRIPPER_OPENED, TOUCHDOWN, SEPARATION)


@dataclass(frozen=True)
class MomentumJump:
    """Total momentum before and after an impulse (world frame; L about the system's centre of mass before the
    event, kg m/s and kg m^2/s), and the largest single-subtree momentum either side, the scale of what the
    impulse moves between bodies (as the conservation tests' 'peak single-body momentum')."""

    linear_before: np.ndarray
    linear_after: np.ndarray
    angular_before: np.ndarray
    angular_after: np.ndarray
    linear_scale: float
    angular_scale: float

    @property
    def relative_change(self) -> float:
        """max(|dp| / linear_scale, |dL| / angular_scale): zero to round-off for an internal impulse."""
        dp = float(np.linalg.norm(self.linear_after - self.linear_before))
        dl = float(np.linalg.norm(self.angular_after - self.angular_before))
        return max(dp / self.linear_scale if self.linear_scale > 0 else dp,
                   dl / self.angular_scale if self.angular_scale > 0 else dl)


def momentum_jump(model: pin.Model, data: pin.Data, q: np.ndarray, v_minus: np.ndarray, v_plus: np.ndarray,
                  subtree_columns: list) -> MomentumJump:
    """Seed 004 eqs. 2.11-2.12 through Pinocchio's centroidal map A_G(q) (rows: p, L about the CoM), before and
    after; each subtree's momentum is A_G's columns of its coordinates times their velocities (the subtrees of
    one model move independently)."""
    ag = pin.computeCentroidalMap(model, data, q)
    before, after = ag @ v_minus, ag @ v_plus
    parts = [ag[:, cols] @ vel[cols] for cols in subtree_columns for vel in (v_minus, v_plus)]
    linear_scale = max((float(np.linalg.norm(p[:3])) for p in parts), default=0.0)
    angular_scale = max((float(np.linalg.norm(p[3:])) for p in parts), default=0.0)
    return MomentumJump(before[:3].copy(), after[:3].copy(), before[3:].copy(), after[3:].copy(), linear_scale,
                        angular_scale)


@dataclass(frozen=True)
class ContactEvent:
    """One event at simulated time t (s). impulse: on the contact rows (grasp: 6, the hand's N s and N m s in the
    end-effector frame; touchdown: 1, N s along the normal), None for events without one; energy_loss (J) of the
    impulse; momentum: the totals across it; figures: the capture envelope's figures, the surface's name..."""

    t: float
    kind: str
    message: str
    impulse: np.ndarray | None = None
    energy_loss: float = 0.0
    momentum: MomentumJump | None = None
    figures: dict = field(default_factory=dict)
