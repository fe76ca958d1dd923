"""The controller's Cartesian goal and contact-force setpoint inputs (docs/controllers.md sec. 1 and 2), ROS-free
like every node core.

Messages (standard types, documented in docs/controllers.md sec. 4):
- Cartesian goal: geometry_msgs/PoseStamped, the desired pose of the end effector (m; unit quaternion x, y, z, w)
  in header.frame_id: the world frame (a fixed goal) or a frame of the model (e.g. ``target/grapple_frame``: the
  goal then moves with it, cartesian_approach.py). An empty frame_id means the world frame.
- Contact-force setpoint: geometry_msgs/WrenchStamped, the wrench the end effector is to exert on the target
  (force N, torque N m) in the contact frame named by header.frame_id (empty: that frame), as the hybrid law's
  f_d (hybrid_force_motion.py; the study files' `desired.contact_force`).
Bad input (NaN, a non-unit quaternion, an unknown or wrong frame, a wrench above the configured limits, gains out
of range) raises nothing into the node: the message is rejected, the current goal kept, and an ERROR event is
recorded for the node's diagnostics (`events`), its text naming the field.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from space_robot_control.cartesian_approach import CartesianApproachController
from space_robot_control.hybrid_force_motion import HybridGains
from space_robot_dynamics.errors import CommandError, ConfigError, SpaceRobotError

from . import conversions as cv

POSE_STAMPED = cv.POSE_STAMPED
WRENCH_STAMPED = cv.WRENCH_STAMPED


def _finite(values: np.ndarray, field: str) -> np.ndarray:
    if not np.isfinite(values).all():
        raise CommandError(field, f"non-finite value {values.tolist()}")
    return values


def read_pose_goal(msg, known_frame, world_frame: str, field: str, norm_tolerance: float
                   ) -> tuple[str, np.ndarray, np.ndarray]:
    """(frame, position m, unit quaternion x, y, z, w) of a PoseStamped; `known_frame(name)` says whether a frame
    exists. CommandError naming the field otherwise."""
    frame = msg.header.frame_id or world_frame
    if frame != world_frame and not known_frame(frame):
        raise CommandError(f"{field}.header.frame_id", f"unknown frame {frame!r} (the world frame {world_frame!r} or "
                                                       "a frame of the model)")
    position = _finite(cv.xyz_of(msg.pose.position), f"{field}.pose.position")
    xyzw = _finite(cv.xyzw_of(msg.pose.orientation), f"{field}.pose.orientation")
    norm = float(np.linalg.norm(xyzw))
    if abs(norm - 1.0) > norm_tolerance:
        raise CommandError(f"{field}.pose.orientation", f"not a unit quaternion (norm {norm:.6g})")
    return frame, position, xyzw / norm


@dataclass(frozen=True)
class ContactGoalSettings:
    """Topics and limits of the inputs (the node's configuration)."""

    cartesian_goal: str = "cartesian_controller/goal"
    force_setpoint: str = "force_controller/setpoint"
    world_frame: str = "world"
    contact_frame: str = "end_effector"
    norm_tolerance: float = 1e-3             # |q| - 1 accepted (then normalized)
    force_limit: float = 1000.0              # N
    torque_limit: float = 1000.0             # N m

    def check(self) -> None:
        for name in ("norm_tolerance", "force_limit", "torque_limit"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                raise ConfigError(f"contact_goals.{name}", f"must be a finite number > 0, got {value!r}")


class ContactGoalInput:
    """Receives the two messages for a CartesianApproachController and holds the contact-force setpoint.

    on_cartesian_goal / on_force_setpoint: a message as the node receives it; set_approach_gains /
    set_force_gains: gains changed at run time (e.g. from a parameter), validated. Each records (level, text) in
    `events` (cv.OK or cv.ERROR); `status(types)` turns the events since the last call into a DiagnosticStatus
    (ERROR if any was rejected)."""

    def __init__(self, approach: CartesianApproachController | None, settings: ContactGoalSettings):
        settings.check()
        self.approach, self.settings = approach, settings
        self.force_setpoint = np.zeros(3)        # N, on the target, contact frame
        self.torque_setpoint = np.zeros(3)       # N m
        self.force_gains: HybridGains | None = None
        self.events: list[tuple[int, str]] = []
        self.accepted = self.rejected = 0

    def _event(self, ok: bool, text: str) -> None:
        self.events.append((cv.OK if ok else cv.ERROR, text))
        if ok:
            self.accepted += 1
        else:
            self.rejected += 1

    def on_cartesian_goal(self, msg) -> None:
        s = self.settings
        try:
            if self.approach is None:
                raise CommandError(s.cartesian_goal, "this controller has no Cartesian mode configured")
            model = self.approach.model
            frame, position, xyzw = read_pose_goal(msg, model.existFrame, s.world_frame, s.cartesian_goal,
                                                   s.norm_tolerance)
            self.approach.set_goal_pose(position, xyzw, "world" if frame == s.world_frame else frame)
        except SpaceRobotError as exc:
            self._event(False, f"Cartesian goal rejected, keeping the current one: {exc}")
            return
        self._event(True, f"Cartesian goal accepted: {np.round(position, 4).tolist()} m in {frame!r}")

    def on_force_setpoint(self, msg) -> None:
        s = self.settings
        try:
            force, torque = cv.read_wrench_stamped(msg, s.contact_frame, s.force_setpoint, s.force_limit,
                                                 s.torque_limit)
        except SpaceRobotError as exc:
            self._event(False, f"force setpoint rejected, keeping the current one: {exc}")
            return
        self.force_setpoint, self.torque_setpoint = force, torque
        self._event(True, f"force setpoint accepted: {np.round(force, 4).tolist()} N")

    def set_approach_gains(self, **gains) -> None:
        """Replace Cartesian gains (CartesianApproachController.set_gains); rejected whole if one is out of range."""
        try:
            if self.approach is None:
                raise CommandError("cartesian_approach", "this controller has no Cartesian mode configured")
            self.approach.set_gains(**gains)
        except SpaceRobotError as exc:
            self._event(False, f"Cartesian gains rejected, keeping the current ones: {exc}")
            return
        self._event(True, "Cartesian gains accepted")

    def set_force_gains(self, kp, kd, kf, ki) -> None:
        """Gains of the hybrid law (eqs. 6.6-6.7); rejected if one is out of range (HybridGains.check)."""
        try:
            gains = HybridGains(kp, kd, kf, ki)
            gains.check("force_controller.gains")
        except SpaceRobotError as exc:
            self._event(False, f"force gains rejected, keeping the current ones: {exc}")
            return
        self.force_gains = gains
        self._event(True, "force gains accepted")

    def status(self, types, name: str = "controller: contact goals"):
        """DiagnosticStatus of the events since the last call (ERROR if one was rejected)."""
        events, self.events = self.events, []
        level = max((lvl for lvl, _ in events), default=cv.OK)
        message = " | ".join(text for _, text in events) or "no Cartesian goal or force setpoint received"
        return cv.diagnostic_status(types, level, name, message, "controller",
                                    [("accepted", self.accepted), ("rejected", self.rejected),
                                     ("force_setpoint_n", np.linalg.norm(self.force_setpoint))])
