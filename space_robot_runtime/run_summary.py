"""The summary of a run: final errors, momentum drift, wheel momentum, pre-grasp geometry, requirements.

Errors are computed from what the nodes published (the recorded trace) and from the final simulator state,
never from the controller's own claims:
- final_goal_error: max over arm joints of |q_final - q_goal| (rad), q_goal the last point of the
  scenario's trajectory goal (or of the goal received, or the initial positions when there is none);
- attitude error: rotation angle between the bus attitude and the setpoint (or the initial attitude) (rad);
- momentum drift: max |p(t) - p(0)| (kg m/s) and |L(t) - L(0)| (kg m^2/s about the CoM, world frame);
- wheel momentum: spin-axis angular momentum each wheel stores relative to the bus, I_s * Omega (N m s);
- pre-grasp: distance (m) from the end effector to the point `standoff` out of the grapple frame and the
  angle (rad) between the approach axis and the fixture's inward axis, from Pinocchio frame placements.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_nodes.conversions import LEVEL_NAMES
from space_robot_nodes.scenario import Scenario

from .run_trace import RunTrace


def wheel_spin_inertia(system: SystemModel) -> np.ndarray:
    """Spin-axis inertia (kg m^2) of each wheel, from the Pinocchio model: S^T I S for a unit joint rate."""
    model = system.model
    data = model.createData()
    out = []
    for name in system.wheel_joints:
        v = np.zeros(model.nv)
        v[system.v_index(name)] = 1.0
        pin.forwardKinematics(model, data, system.neutral(), v)
        joint = system.joint_id(name)
        body_velocity = data.v[joint]                 # twist of the wheel body for a unit rate (joint frame)
        momentum = model.inertias[joint] * body_velocity
        out.append(float(np.dot(momentum.angular, body_velocity.angular)))
    return np.array(out)


def pregrasp_errors(system: SystemModel, q: np.ndarray, scenario: Scenario) -> dict:
    ev = scenario.evaluation
    model, data = system.model, system.model.createData()
    pin.framesForwardKinematics(model, data, q)
    ee = data.oMf[model.getFrameId(ev.end_effector_frame)]
    grapple = data.oMf[model.getFrameId(ev.grapple_frame)]
    outward = grapple.rotation @ np.asarray(ev.grapple_axis)
    point = grapple.translation + ev.standoff * outward
    approach = ee.rotation @ np.asarray(ev.approach_axis)
    angle = float(np.arccos(np.clip(np.dot(approach, -outward), -1.0, 1.0)))
    return {"distance_m": float(np.linalg.norm(ee.translation - point)), "angle_rad": angle,
            "end_effector_world_m": ee.translation.tolist(), "pregrasp_point_world_m": point.tolist()}


def scenario_goal(scenario: Scenario, arm: list[str]) -> np.ndarray | None:
    """Last point of the scenario's trajectory goal in `arm` order (None without a goal naming every arm joint)."""
    goal = scenario.trajectory_goal
    if goal is None or not set(arm) <= set(goal.joint_names):
        return None
    last = dict(zip(goal.joint_names, goal.points[-1][1]))
    return np.array([last[n] for n in arm])


def summarize(scenario: Scenario, system: SystemModel, trace: RunTrace, q_final: np.ndarray, v_final: np.ndarray,
              q_initial: np.ndarray) -> dict:
    arm = list(system.arm_joints)
    q_arm = np.array([system.joint_angle(q_final, n) for n in arm])
    goal = scenario_goal(scenario, arm)       # the scenario's goal, even if the run ended before it was sent
    if goal is None:
        goal = trace.goal_positions if trace.goal_positions is not None else \
            np.array([system.joint_angle(q_initial, n) for n in arm])
    goal_error = q_arm - goal
    t_att, attitude = trace.attitude_error()
    _t, dp, dl = trace.momentum_drift()
    spin = wheel_spin_inertia(system)
    speeds = v_final[system.wheel_v] if len(system.wheel_v) else np.zeros(0)
    _tw, wheel_history = trace.wheel_speeds.arrays()
    max_speed_fraction = float(np.max(np.abs(wheel_history) / system.wheel_max_speed)) \
        if len(wheel_history) and np.all(np.isfinite(system.wheel_max_speed)) else float("nan")

    summary = {
        "scenario": scenario.name,
        "duration_s": float(trace.arm_positions.t[-1]) if len(trace.arm_positions) else 0.0,
        "final_goal_error_rad": float(np.max(np.abs(goal_error))) if len(arm) else 0.0,
        "final_goal_error_per_joint_rad": dict(zip(arm, goal_error.tolist())),
        # None: no floating bus in this model (e.g. the bench Sawyer)
        "max_attitude_error_rad": float(np.max(attitude)) if len(attitude) else None,
        "final_attitude_error_rad": float(attitude[-1]) if len(attitude) else None,
        "max_attitude_error_deg": float(np.degrees(np.max(attitude))) if len(attitude) else None,
        "momentum_drift": {"max_linear_kg_m_s": float(np.max(dp)) if len(dp) else 0.0,
                           "max_angular_kg_m2_s": float(np.max(dl)) if len(dl) else 0.0},
        "wheel_momentum_Nms": dict(zip(system.wheel_joints, (spin * speeds).tolist())),
        "wheel_speed_rad_s": dict(zip(system.wheel_joints, speeds.tolist())),
        "max_wheel_speed_fraction": max_speed_fraction,
        "diagnostics": {name: {LEVEL_NAMES.get(level, str(level)): count for level, count in sorted(counts.items())}
                        for name, counts in sorted(trace.diagnostic_counts.items())},
    }
    if scenario.evaluation is not None:
        summary["pregrasp"] = pregrasp_errors(system, q_final, scenario)
        req = scenario.evaluation.requirements
        if req is not None:
            checks = {
                "final_tracking_error": (summary["final_goal_error_rad"], req.final_tracking_error),
                "max_attitude_error": (summary["max_attitude_error_rad"], req.max_attitude_error),
                "final_pregrasp_distance": (summary["pregrasp"]["distance_m"], req.final_pregrasp_distance),
                "final_pregrasp_angle": (summary["pregrasp"]["angle_rad"], req.final_pregrasp_angle),
            }
            summary["requirements"] = {name: {"value": value, "limit": limit, "met": bool(value <= limit)}
                                       for name, (value, limit) in checks.items()}
            summary["requirements_met"] = all(c["met"] for c in summary["requirements"].values())
    return summary
