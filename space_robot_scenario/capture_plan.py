"""A scenario's capture goal turned into the goals the scenario player publishes (docs/contact.md sec. 9): the
trajectory that follows the target's grapple fixture (space_robot_control.capture_approach, planned from the
scenario's initial state) and the gripper's closing at the planned instant. Used by the standalone runtime and the
ROS 2 scenario player alike, so both send the same trajectory."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from space_robot_control.capture_approach import CaptureApproachPlanner
from space_robot_control.station_keeping import hold_point_at
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .goals import START_DELAY, CartesianGoal, GripperGoal, TrajectoryGoal
from .scenario import Scenario

# m or rad: a knot's inverse kinematics left a larger 6D error only when the pose is out of the arm's reach
IK_ERROR_LIMIT = 1e-6


def _at_station(scenario: Scenario, system: SystemModel, q0, v0, start: float):
    """With the controller's station keeping moving the bus (station_keeping.py), the plan starts from where it holds
    the bus when the trajectory starts, at rest there (the target's state is the initial one: it is predicted)."""
    controller = scenario.controller
    if controller is None or "station_keeping" not in controller.modes or not controller.station_keeping.moves:
        return q0, v0
    joint = system.base_joint(controller.bus_subtree)
    q_slice, v_slice = system.q_slice(joint), system.v_slice(joint)
    q0, v0 = q0.copy(), v0.copy()
    initial = np.array(controller.station_keeping.hold_point if controller.station_keeping.hold_point is not None
                       else q0[q_slice][:3])
    q0[q_slice.start:q_slice.start + 3] = hold_point_at(controller.station_keeping, initial, start)[0]
    v0[v_slice] = 0.0
    return q0, v0


def with_capture_plan(scenario: Scenario, system: SystemModel) -> Scenario:
    """The scenario with its capture goal planned: its trajectory goal (points with rates and accelerations) and a
    gripper goal closing at the plan's instant; the scenario itself when it has no capture goal. ConfigError naming
    goals.capture when the fixture is out of reach."""
    goal = scenario.capture_goal
    if goal is None:
        return scenario
    q0, v0 = scenario.initial_state(system)
    start = goal.publish_at + START_DELAY
    q0, v0 = _at_station(scenario, system, q0, v0, start)
    plan = CaptureApproachPlanner(system, goal.timing, scenario.simulation.dt, scenario.orbit).plan(q0, v0, start,
                                                                                     goal.seed_positions)
    if not plan.ik_error <= IK_ERROR_LIMIT:
        raise ConfigError("goals.capture", f"the fixture is out of the arm's reach along the planned approach (pose "
                                           f"error {plan.ik_error:.3g} m/rad left); change the timing or the initial "
                                           "state", scenario.source)
    if goal.approach == "cartesian":
        # the trajectory takes the hand to the standoff and follows there; then the Cartesian controller (generalized
        # Jacobian, the controller's cartesian_approach mode) takes it in on a goal fixed to the fixture
        points = tuple(p for p in plan.points if p[0] <= plan.approach_at + 1e-9)
        position, xyzw = plan.contact_in_fixture
        fixture = system.model.frames[system.grasp.target_frame].name
        cartesian = (CartesianGoal(start + plan.approach_at, fixture, position, xyzw),)
        close_at = start + plan.approach_at + goal.cartesian_time
    else:
        points, cartesian, close_at = plan.points, (), start + plan.close_at
    trajectory = TrajectoryGoal(goal.publish_at, plan.joint_names, points)
    gripper = tuple(sorted(scenario.gripper_goals + (GripperGoal(close_at, True),), key=lambda g: g.at))
    return replace(scenario, trajectory_goal=trajectory, gripper_goals=gripper,
                   cartesian_goals=tuple(sorted(scenario.cartesian_goals + cartesian, key=lambda g: g.at)))
