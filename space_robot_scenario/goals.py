"""A scenario's `goals:` section: what the scenario player sends the controller, and when.

- trajectory: a trajectory_msgs/JointTrajectory (position-only points), published at `publish_at`;
- attitude_setpoint: the bus orientation the wheels hold (geometry_msgs/QuaternionStamped);
- capture: the approach to a tumbling target's grapple fixture and the gripper's closing, planned from the initial
  state when the run starts (space_robot_control.capture_approach, capture_plan.py; docs/contact.md sec. 9);
- gripper: gripper commands (close or open) at given times.
Times in s of simulated time, angles in rad, quaternions (x, y, z, w).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader

# s from a trajectory's publication to its start (its header.stamp): longer than its delivery under ROS 2 (the player
# runs on a 100 Hz /clock, the message then takes ~1 ms), short against any scenario's timing. The capture plan
# starts its motion at the same instant.
START_DELAY = 0.05
# |norm - 1| accepted in a goal's quaternion: a typo, not round-off, is what this catches
UNIT_QUATERNION_TOLERANCE = 1e-6


@dataclass(frozen=True)
class TrajectoryGoal:
    """A position-only JointTrajectory published at `publish_at` (s); points are (time_from_start s, rad)."""

    publish_at: float
    joint_names: tuple
    points: tuple


@dataclass(frozen=True)
class AttitudeGoal:
    """Bus base_link -> world orientation (x, y, z, w) published at `publish_at` (s)."""

    publish_at: float
    orientation_xyzw: tuple


@dataclass(frozen=True)
class GripperGoal:
    """A gripper command (std_msgs/Bool: close or open) published at `at` (s)."""

    at: float
    close: bool


@dataclass(frozen=True)
class CartesianGoal:
    """A Cartesian goal (geometry_msgs/PoseStamped on the controller's cartesian_goal topic) published at `at` (s):
    the hand's pose in `frame` (m; unit quaternion x, y, z, w)."""

    at: float
    frame: str
    position: tuple
    orientation_xyzw: tuple


@dataclass(frozen=True)
class CaptureGoal:
    """The approach and grasp of the target's fixture (space_robot_control.capture_approach.CaptureTiming), its
    trajectory published at `publish_at` (s); seed_positions: the arm angles (arm_joints order) the inverse
    kinematics of the pre-grasp pose starts from (None: the initial pose), which picks the arm's configuration.
    approach: "joint" (the trajectory goes in to contact) or "cartesian" (the trajectory ends at the standoff, then
    a Cartesian goal on the fixture takes the hand in; the gripper closes `cartesian_time` s later)."""

    publish_at: float
    timing: object
    seed_positions: tuple | None = None
    approach: str = "joint"
    cartesian_time: float = 0.0


@dataclass(frozen=True)
class Goals:
    """Everything the `goals:` section holds (None or empty: absent)."""

    trajectory: TrajectoryGoal | None = None
    attitude: AttitudeGoal | None = None
    capture: CaptureGoal | None = None
    gripper: tuple = ()         # GripperGoal, by time

    @property
    def for_a_controller(self) -> bool:
        """Whether any goal needs a controller node to receive it."""
        return any((self.trajectory, self.attitude, self.capture, self.gripper))


def read_goals(reader: ConfigReader) -> Goals:
    """The `goals:` section (absent: no goals). A capture plans its own trajectory, so it excludes `trajectory`."""
    goals = reader.sub("goals", {})
    trajectory = _trajectory(goals.sub("trajectory")) if goals.raw("trajectory", None) is not None else None
    attitude = _attitude(goals.sub("attitude_setpoint")) if goals.raw("attitude_setpoint", None) is not None \
        else None
    capture = _capture(goals.sub("capture")) if goals.raw("capture", None) is not None else None
    if capture is not None and trajectory is not None:
        raise goals.error("capture", "plans its own trajectory: remove goals.trajectory")
    gripper = _gripper(goals) if goals.raw("gripper", None) is not None else ()
    goals.reject_unknown()
    return Goals(trajectory, attitude, capture, tuple(sorted(gripper, key=lambda g: g.at)))


def _trajectory(tr: ConfigReader) -> TrajectoryGoal:
    names = tuple(tr.string_list("joint_names"))
    points = []
    for pt in tr.sub_list("points"):
        points.append((pt.number("time_from_start", minimum=0.0), tuple(pt.vector("positions", len(names)))))
        pt.reject_unknown()
    goal = TrajectoryGoal(tr.number("publish_at", 0.0, minimum=0.0), names, tuple(points))
    tr.reject_unknown()
    return goal


def _attitude(at: ConfigReader) -> AttitudeGoal:
    quat = at.vector("orientation_xyzw", 4)
    if abs(np.linalg.norm(quat) - 1.0) > UNIT_QUATERNION_TOLERANCE:
        raise at.error("orientation_xyzw", f"must be a unit quaternion, norm is {np.linalg.norm(quat):.9g}")
    goal = AttitudeGoal(at.number("publish_at", 0.0, minimum=0.0), tuple(quat))
    at.reject_unknown()
    return goal


def _capture(cp: ConfigReader) -> CaptureGoal:
    from space_robot_control.capture_approach import CaptureTiming

    timing = CaptureTiming(
        reach_time=cp.number("reach_time", exclusive_minimum=0.0),
        follow_time=cp.number("follow_time", minimum=0.0),
        approach_time=cp.number("approach_time", exclusive_minimum=0.0),
        dwell_time=cp.number("dwell_time", minimum=0.0),
        hold_time=cp.number("hold_time", minimum=0.0),
        standoff=cp.number("standoff", exclusive_minimum=0.0),
        sample_period=cp.number("sample_period", 0.1, exclusive_minimum=0.0),
    )
    seed = tuple(cp.vector("seed_positions")) if cp.raw("seed_positions", None) is not None else None
    approach = cp.string("approach", "joint", choices=("joint", "cartesian"))
    if approach == "cartesian":
        cartesian_time = cp.number("cartesian_time", exclusive_minimum=0.0)
    else:      # checked when given, unused: `--set goals.capture.approach=joint` on the shipped scenario must work
        if cp.raw("cartesian_time", None) is not None:
            cp.number("cartesian_time", exclusive_minimum=0.0)
        cartesian_time = 0.0
    goal = CaptureGoal(cp.number("publish_at", 0.0, minimum=0.0), timing, seed, approach, cartesian_time)
    cp.reject_unknown()
    return goal


def _gripper(goals: ConfigReader) -> list[GripperGoal]:
    items = goals.raw("gripper")
    if not isinstance(items, list):
        raise goals.error("gripper", "must be a list of {at: s, close: true/false}")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise goals.error(f"gripper[{i}]", "must be a mapping {at: s, close: true/false}")
        entry = ConfigReader(item, goals.source, goals.field(f"gripper[{i}]"))
        out.append(GripperGoal(entry.number("at", minimum=0.0), entry.boolean("close")))
        entry.reject_unknown()
    return out
