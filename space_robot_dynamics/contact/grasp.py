"""The gripper on the hand and the rigid grasp it makes: the grasp as an event (docs/contact.md sec. 1-4).

The gripper has two commanded states, open and closed, and acts at the start of the next simulation step:
- closing, with the hand within the capture envelope (capture_envelope.py): a plastic impulse (impulse.py) stops
  the relative motion of hand and fixture, and the loop (loop_closure.py) keeps their relative pose from then on:
  event `grasp`, with the impulse, the energy it took and the momentum on either side;
- closing outside the envelope: event `grasp_failed`, naming the figures out of tolerance; nothing is forced, the
  gripper is closed on nothing and must be opened before it can grasp again;
- opening: the loop is removed (event `release`), or the empty gripper opens (`gripper_opened`).
Closing or opening takes no time (a latching capture mechanism).

While the grasp holds, `record_force` keeps the largest grasp force and torque since it closed, from the multipliers
of each step's first stage (the wrench at every step's start state under that step's command).
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from ..model.contact_sites import GraspSite
from .capture_envelope import CaptureCheck, check_capture
from .contact_events import GRASP, GRASP_FAILED, GRIPPER_OPENED, RELEASE, ContactEvent, momentum_jump
from .explicit_constraints import ExplicitConstraintDynamics
from .impulse import plastic_impulse
from .loop_closure import LoopClosure


class Grasp:
    def __init__(self, model: pin.Model, site: GraspSite, explicit: ExplicitConstraintDynamics, subtree_columns: list):
        self.model = model
        self.site = site
        self.data = model.createData()
        self.explicit = explicit
        self.ee_joint = model.frames[site.ee_frame].parentJoint
        self.ee_placement = model.frames[site.ee_frame].placement
        self.target_joint = model.frames[site.target_frame].parentJoint     # the body carrying the fixture
        self.subtree_columns = subtree_columns    # v indices per subtree, for the momentum bookkeeping
        self.commanded_closed = False
        self.closed = False                       # the gripper's state
        self.loop: LoopClosure | None = None
        self.last_check: CaptureCheck | None = None
        self.grasp_time: float | None = None
        self.peak_force = 0.0                     # N, since the grasp closed
        self.peak_torque = 0.0                    # N m
        self.last_force = np.zeros(6)             # the latest first-stage multiplier (EE frame)

    @property
    def holding(self) -> bool:
        return self.loop is not None

    def command(self, closed: bool) -> None:
        self.commanded_closed = bool(closed)

    def reset(self) -> None:
        """Open and empty (a simulator reset)."""
        self.commanded_closed = self.closed = False
        self.loop, self.grasp_time = None, None
        self.peak_force = self.peak_torque = 0.0
        self.last_force = np.zeros(6)

    def check(self, q: np.ndarray, v: np.ndarray) -> CaptureCheck:
        site = self.site
        return check_capture(self.model, self.data, q, v, site.ee_frame, site.approach_axis, site.target_frame,
                             site.target_axis, site.config.tolerances)

    def at_step_start(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ContactEvent | None]:
        """Act on a changed command at the state (t, q, v): returns (v, possibly after the grasp impulse; the event
        or None)."""
        if self.commanded_closed == self.closed:
            return v, None
        if not self.commanded_closed:            # opening
            self.closed = False
            if self.loop is None:
                return v, ContactEvent(t, GRIPPER_OPENED, "gripper opened (it held nothing)")
            self.loop = None
            return v, ContactEvent(t, RELEASE, f"released the target after {t - self.grasp_time:.3f} s; peak grasp "
                                               f"force {self.peak_force:.4g} N, torque {self.peak_torque:.4g} N m")
        self.closed = True
        check = self.last_check = self.check(q, v)
        if not check.within:
            return v, ContactEvent(t, GRASP_FAILED, "grasp failed, the hand is outside the capture envelope: "
                                   + "; ".join(check.exceeded) + " (the gripper closed on nothing: open it to try "
                                   "again)", figures=check.figures())
        loop = LoopClosure.closed_at(self.model, self.data, q, self.ee_joint, self.ee_placement, self.target_joint,
                                     self.site.config.stabilization, self.explicit)
        jacobian = self.explicit.impulse_jacobian(loop.jacobian(self.data, q))
        result = plastic_impulse(self.model, self.data, q, v, jacobian, loop.rows)
        jump = momentum_jump(self.model, self.data, q, v, result.v_plus, self.subtree_columns)
        self.loop, self.grasp_time = loop, t
        self.peak_force = self.peak_torque = 0.0
        force, torque = np.linalg.norm(result.impulse[:3]), np.linalg.norm(result.impulse[3:])
        return result.v_plus, ContactEvent(
            t, GRASP, f"grasped the fixture: impulse {force:.4g} N s, {torque:.4g} N m s on the hand, "
                      f"{result.energy_loss:.4g} J dissipated, total momentum change {jump.relative_change:.2g} "
                      f"(relative); envelope: " + ", ".join(f"{k} {x:.3g}" for k, x in check.figures().items()),
            impulse=result.impulse, energy_loss=result.energy_loss, momentum=jump, figures=check.figures())

    def record_force(self, force: np.ndarray) -> None:
        self.last_force = force
        fx, fy, fz, nx, ny, nz = force.tolist()          # math.hypot: a fifth of np.linalg.norm's cost per step
        self.peak_force = max(self.peak_force, math.hypot(fx, fy, fz))
        self.peak_torque = max(self.peak_torque, math.hypot(nx, ny, nz))
