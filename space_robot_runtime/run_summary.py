"""The summary of a run: final errors, momentum drift, wheel momentum, pre-grasp geometry, requirements.

Errors are computed from what the nodes published (the recorded trace) and from the final simulator state,
never from the controller's own claims:
- final_goal_error: max over arm joints of |q_final - q_goal| (rad), q_goal the last point of the
  scenario's trajectory goal (or of the goal received, or the initial positions when there is none); null
  when the arm ends the run holding a grasped target (the goal was the approach's, not where the arm ends);
- attitude error: rotation angle between the bus attitude and the setpoint (or the initial attitude) (rad);
- momentum drift: max |p(t) - p(0)| (kg m/s) and |L(t) - L(0)| (kg m^2/s about the CoM, world frame);
- momentum_balance_residual: the largest |change of the momentum - integrated external impulse| over the run, both
  inertial (linear, and angular about a fixed inertial point), relative to the largest momentum of any body
  (dimensionless, round-off ~1e-12; docs/orbit.md sec. 5), from momentum/balance; null for a model held to the world
  or under uniform gravity (nothing integrates the forces that hold it);
- wheel momentum: spin-axis angular momentum each wheel stores relative to the bus, I_s * Omega (N m s);
- pre-grasp: distance (m) from the end effector to the point `standoff` out of the grapple frame and the
  angle (rad) between the approach axis and the fixture's inward axis, from Pinocchio frame placements;
- flexible models (docs/flexibility.md), from the recorded flexible_modes: max_tip_deflection_m (the largest
  |(w_y(L), w_z(L))| of any flexible link) and a `flexible` section (per link, per modal coordinate, per elastic
  joint's deflection, and their values over the last second of the run: the residual vibration);
- a scenario with a comparison run: the differences of comparison.py (run by simulation_run.py);
- a model with a grasp whose gripper the run uses (capture_in_use: a capture or gripper goal, a capture
  requirement, or contact; otherwise a note and nothing else) (docs/contact.md sec. 11), from grasp/state (the
  simulator's figures, peaks over every physics step), the odometries and joint_states: `grasped`, `grasp_time_s`,
  `momentum_change_across_grasp` (the largest relative change of total linear or angular momentum across the
  grasp), `detumble_time_s` (from the grasp to the instant from which the bus's and the target's angular rates and
  every arm joint's rate stay below evaluation.detumble_rate to the end of the run; null if they do not),
  `peak_grasp_force_n`, `peak_grasp_torque_nm`, and a `capture` section (impulse, energy taken, largest loop
  drift, wheel momentum, and the detumble_budget: the stack's angular momentum against the wheels' capacity, the
  thrusters' couple and the arm's effort limits, with a verdict saying which one decides).

A figure that does not apply to the model is null (with a line in `notes` saying why), never NaN: the
bus attitude of a fixed-base arm, the momentum drift of a system none of whose momentum components is conserved
(a fixed base, a pivot, thrusters; on a bearing plane or under gravity, the drift of the conserved components:
momentum_conservation.py), wheel figures without wheels. The file is strict JSON (`to_json`).

Requirements: each says whether it was met (true/false) or could not be evaluated (null, with the reason):
the `final_*` ones describe the end of the motion, so they are evaluated only when the run reached the end
of the scenario's trajectory goal and was not interrupted; `max_attitude_error` holds over whatever ran.
`requirements_met` is false when one was not met, null when none failed but some could not be evaluated; a time
limit not reached is not evaluated when the run ended before it (requirement_verdicts.py).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_control.settling import settling_time
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.reaction_wheels import wheel_spin_inertia
from space_robot_nodes.conversions import LEVEL_NAMES
from space_robot_scenario import Scenario

from .momentum_conservation import conserved_momentum, momentum_conserved  # noqa: F401 - re-exported
from .requirement_verdicts import overall, unreached_time_limit
from .run_trace import RunTrace


@dataclass
class RunStatus:
    """How a run ended: complete, or stopped early (why, by what) at `simulated_time` s."""

    requested_duration: float
    complete: bool = True
    reason: str = ""              # why the run is incomplete
    stopped_by: str = ""          # SIGINT, SIGTERM, diverged, internal_error
    simulated_time: float = 0.0   # s reached
    wall_time: float = 0.0        # s spent in the loop
    internal_error: str = ""      # a bug met during the run or while writing its outputs
    traceback: str = ""

    def stop(self, reason: str, stopped_by: str) -> None:
        self.complete, self.reason, self.stopped_by = False, reason, stopped_by

    def fail(self, what: str, exc: BaseException) -> None:
        """Record an internal error (the first one) with its traceback."""
        import traceback

        if not self.internal_error:
            self.internal_error = f"{what}: {type(exc).__name__}: {exc}"
            self.traceback = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def to_dict(self) -> dict:
        return {"complete": self.complete, "incomplete_reason": self.reason or None,
                "stopped_by": self.stopped_by or None, "simulated_time_s": self.simulated_time,
                "requested_duration_s": self.requested_duration, "internal_error": self.internal_error or None}


def to_json(summary: dict) -> str:
    """Strict JSON text (RFC 8259: no NaN or Infinity): a non-finite number left anywhere becomes null."""
    return json.dumps(_finite_or_null(summary), indent=2, sort_keys=True, allow_nan=False) + "\n"


def _finite_or_null(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite_or_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(item) for item in value]
    return value


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
              q_initial: np.ndarray, status: RunStatus | None = None, goal_end_time: float | None = None) -> dict:
    """The summary of a run (see the module docstring); `goal_end_time` (s): when the trajectory goal's
    motion ends, for the applicability of the final requirements."""
    status = status or RunStatus(requested_duration=float(trace.arm_positions.t[-1]) if len(trace.arm_positions)
                                 else 0.0, simulated_time=float(trace.arm_positions.t[-1])
                                 if len(trace.arm_positions) else 0.0)
    notes = []
    arm = list(system.arm_joints)
    q_arm = np.array([system.joint_angle(q_final, n) for n in arm])
    goal = given = scenario_goal(scenario, arm)    # the scenario's goal, even if the run ended before it was sent
    if goal is None:
        goal = trace.goal_positions if trace.goal_positions is not None else \
            np.array([system.joint_angle(q_initial, n) for n in arm])
    goal_error = q_arm - goal
    # open loop (`controller: null`, no goal sent): nothing holds the initial pose, so it is no goal
    open_loop = scenario.controller is None
    if open_loop and trace.goal_positions is None and given is None:
        arm = []
        notes.append("final goal error: none (open loop: no controller and no trajectory goal in this scenario)")
    t_att, attitude = trace.attitude_error()
    if not len(attitude):
        notes.append("bus attitude: none (no floating bus with odometry in this model)")
    elif open_loop and trace.setpoint is None:
        attitude = np.zeros(0)
        notes.append("bus attitude error: none (open loop: no controller and no attitude setpoint in this scenario; "
                     "base_attitude.png shows the rotation from the initial attitude)")
    conserved = conserved_momentum(system, scenario.orbit is not None)
    if conserved is None:
        notes.append("momentum drift: none (momentum is exchanged with the outside world: a fixed or pivoting "
                     "base, base thrusters, gravity across a bearing plane, or an orbit; momentum_balance_residual "
                     "checks a free-floating system's momentum against the external impulse)")
        dp = dl = np.zeros(0)
    else:
        _t, dp, dl = trace.momentum_drift(conserved["linear"], conserved["angular"])
        if conserved["components"] != "all":
            notes.append(f"momentum drift: of the conserved components only, {conserved['components']} "
                         f"(momentum_conservation.py)")
    spin = wheel_spin_inertia(system)
    speeds = v_final[system.wheel_v] if len(system.wheel_v) else np.zeros(0)
    _tw, wheel_history = trace.wheel_speeds.arrays()
    limits = system.wheel_max_speed
    max_speed_fraction = float(np.max(np.abs(wheel_history) / limits)) \
        if len(wheel_history) and len(limits) and np.all(np.isfinite(limits)) else None
    if not len(system.wheel_joints):
        notes.append("wheels: none in this model")

    summary = {
        "scenario": scenario.name,
        **status.to_dict(),
        "duration_s": float(trace.arm_positions.t[-1]) if len(trace.arm_positions) else status.simulated_time,
        "final_goal_error_rad": float(np.max(np.abs(goal_error))) if len(arm) else None,
        "final_goal_error_per_joint_rad": dict(zip(arm, goal_error.tolist())) if len(arm) else None,
        "max_attitude_error_rad": float(np.max(attitude)) if len(attitude) else None,
        "final_attitude_error_rad": float(attitude[-1]) if len(attitude) else None,
        "max_attitude_error_deg": float(np.degrees(np.max(attitude))) if len(attitude) else None,
        "momentum_drift": {"max_linear_kg_m_s": float(np.max(dp)) if len(dp) else 0.0,
                           "max_angular_kg_m2_s": float(np.max(dl)) if len(dl) else 0.0,
                           "components": conserved["components"]} if conserved else None,
        "momentum_balance_residual": trace.momentum_balance_residual(),
        "wheel_momentum_Nms": dict(zip(system.wheel_joints, (spin * speeds).tolist())),
        "wheel_speed_rad_s": dict(zip(system.wheel_joints, speeds.tolist())),
        "max_wheel_speed_fraction": max_speed_fraction,
        "diagnostics": {name: {LEVEL_NAMES.get(level, str(level)): count for level, count in sorted(counts.items())}
                        for name, counts in sorted(trace.diagnostic_counts.items())},
        "overrides": [o.origin for o in scenario.overrides],
        "notes": notes,
    }
    if scenario.estimators is not None:           # with estimators only (docs/sensing.md); null until recorded
        summary.update({"attitude_estimate_error_rms_rad": None, "target_position_estimate_error_rms_m": None,
                        **trace.estimate_errors()})
    if system.flexibility is not None:
        summary.update(flexible_figures(trace))
    if system.grasp is not None:
        rate = scenario.evaluation.detumble_rate if scenario.evaluation is not None else 1.0e-3
        figures = capture_figures(trace, rate, spin)
        if figures["grasped"]:
            figures["capture"]["detumble_budget"] = detumble_budget(trace, system, figures["grasp_time_s"], spin)
        if capture_in_use(scenario, figures):
            summary.update(figures)
        else:               # a gripper nobody used: no capture figures (nothing where a feature is absent)
            notes.append("capture: none (the model has a gripper, but this scenario neither closes it nor touches "
                         "the target)")
        if summary.get("grasped") and not summary["capture"]["released"]:
            # the trajectory goal is the approach's; holding the target, the arm goes where the detumble takes it
            summary["final_goal_error_rad"], summary["final_goal_error_per_joint_rad"] = None, None
            notes.append(f"final goal error: none (the arm holds the target from the grasp at "
                         f"{summary['grasp_time_s']:.3f} s on; the trajectory goal was the approach's)")
    if scenario.evaluation is not None and scenario.evaluation.force_motion is not None:
        summary.update(force_motion_figures(trace, scenario, system))
    if scenario.evaluation is not None:
        summary["pregrasp"] = pregrasp_errors(system, q_final, scenario)
        req = scenario.evaluation.requirements
        if req is not None:
            closes = [g.at for g in scenario.gripper_goals if g.close]
            summary["requirements"] = _requirements(summary, req, status, goal_end_time,
                                                    min(closes) if closes else None)
            verdicts = [c["met"] for c in summary["requirements"].values()]
            summary["requirements_met"] = overall(verdicts)
    return summary


RESIDUAL_WINDOW = 1.0      # s: the residual vibration is read over the last second of a run
# requirements that need the capture figures
CAPTURE_REQUIREMENTS = ("grasped", "max_momentum_change_across_grasp", "max_detumble_time", "max_peak_grasp_force",
                        "max_peak_grasp_torque")


def capture_in_use(scenario: Scenario, figures: dict) -> bool:
    """Whether a run's capture figures say anything: the scenario commands the gripper (a capture or gripper
    goals) or states a capture requirement, or the gripper touched or held the target."""
    req = scenario.evaluation.requirements if scenario.evaluation is not None else None
    return bool(scenario.capture_goal is not None or scenario.gripper_goals or figures["grasped"]
                or figures["capture"]["contact_events"]
                or (req is not None and any(getattr(req, k) is not None for k in CAPTURE_REQUIREMENTS)))


def capture_figures(trace: RunTrace, detumble_rate: float, wheel_spin_inertia: np.ndarray) -> dict:
    """The capture keys of the module docstring (SI)."""
    t, holding = trace.grasp_entry("holding")
    grasped = bool(len(t) and np.any(holding > 0.5))
    first = int(np.argmax(holding > 0.5)) if grasped else None
    entry = {name: trace.grasp_entry(name)[1] for name in trace.grasp_state_fields}
    out = {"grasped": grasped, "grasp_time_s": None, "momentum_change_across_grasp": None, "detumble_time_s": None,
           "peak_grasp_force_n": float(entry["peak_force_n"].max()) if grasped else None,
           "peak_grasp_torque_nm": float(entry["peak_torque_nm"].max()) if grasped else None}
    _tw, wheels = trace.wheel_speeds.arrays()
    events = trace.grasp_entry("events")[1]
    section = {"contact_events": int(events.max()) if len(events) else 0,      # grasps, failed grasps, releases
               "detumble_rate_rad_s": detumble_rate,
               "max_wheel_momentum_Nms": float(np.max(np.abs(wheels) * wheel_spin_inertia)) if len(wheels) and
               len(wheel_spin_inertia) else None}
    if not grasped:
        out["capture"] = section
        return out
    grasp_time = float(entry["grasp_time_s"][first])
    out["grasp_time_s"] = grasp_time
    out["momentum_change_across_grasp"] = float(entry["momentum_change_across_grasp"][first])
    out["detumble_time_s"] = detumble_time(trace, grasp_time, detumble_rate)
    let_go = np.flatnonzero(holding[first:] < 0.5)      # samples after the grasp where it no longer holds
    section.update({
        "impulse_force_Ns": [float(entry[f"impulse_force_{a}"][first]) for a in "xyz"],
        "impulse_torque_Nms": [float(entry[f"impulse_torque_{a}"][first]) for a in "xyz"],
        "impact_energy_loss_J": float(entry["impact_energy_loss_j"][first]),
        "max_drift_position_m": float(entry["drift_position_m"].max()),
        "max_drift_angle_rad": float(entry["drift_angle_rad"].max()),
        "released": bool(len(let_go)),
        # s: the first recorded instant the grasp no longer holds (a gripper opened, e.g. by the controller's
        # overload release: diagnostics say why); null while it holds to the end
        "release_time_s": float(t[first + let_go[0]]) if len(let_go) else None,
    })
    out["capture"] = section
    return out


def detumble_budget(trace: RunTrace, system: SystemModel, grasp_time: float, wheel_spin_inertia: np.ndarray) -> dict:
    """What detumbling the joined stack asks against what the servicer has (docs/orbit.md sec. 9): the stack's
    angular momentum about its centre of mass just after the grasp (N m s, momentum/angular: inertial in free space
    and in orbit alike), the momentum the wheels store at their speed limit, the thrusters' couple and the smallest
    effort limit of the arm's joints (every wrench between the servicer and the target passes through each joint), the
    times those torques would need, and a sentence saying which one decides."""
    t, angular = trace.momentum_angular.arrays()
    after = np.flatnonzero(t >= grasp_time)
    if not len(after):
        return {"not_evaluated_because": "no momentum sample after the grasp"}
    momentum = float(np.linalg.norm(angular[after[0]]))
    limits = system.wheel_max_speed
    wheels = float(np.sum(wheel_spin_inertia * limits)) if len(limits) and np.all(np.isfinite(limits)) else 0.0
    thrusters = system.base_thrusters.config.max_torque if system.base_thrusters is not None else None
    arm = float(np.min(system.model.effortLimit[system.arm_v])) if len(system.arm_v) else None
    budget = {"stack_angular_momentum_Nms": momentum, "wheel_capacity_Nms": wheels, "thruster_torque_Nm": thrusters,
              "arm_torque_limit_Nm": arm,
              "time_at_thruster_torque_s": momentum / thrusters if thrusters else None,
              "time_at_arm_torque_limit_s": momentum / arm if arm else None}
    if momentum <= wheels:
        verdict = f"the wheels can store the stack's {momentum:.3g} N m s ({wheels:.3g} N m s at their speed limit)"
    else:
        verdict = (f"the stack's {momentum:.3g} N m s is {momentum / max(wheels, 1e-300):.3g} times what the wheels "
                   f"store ({wheels:.3g} N m s): they cannot detumble it")
        if thrusters:
            verdict += (f"; the thrusters' {thrusters:g} N m would take {momentum / thrusters:.3g} s, and no torque "
                        f"above the arm's smallest effort limit ({arm:g} N m: {momentum / arm:.3g} s) can pass "
                        "through it to the target" if arm else f"; the thrusters' {thrusters:g} N m would take "
                        f"{momentum / thrusters:.3g} s")
    budget["verdict"] = verdict
    return budget


def force_motion_figures(trace: RunTrace, scenario: Scenario, system: SystemModel) -> dict:
    """Hybrid force/motion (controller mode force_motion; docs/controllers.md sec. 2.5), from what the nodes
    published (RunTrace.force_motion_errors: joints against controller.yaml's force_motion.joint_positions, bus
    attitude against its setpoint, contact force against force_motion.contact_force). settling_time_s: the first
    instant (s, run time) from which every error stays inside evaluation.force_motion.bands; null if one is
    outside at the end."""
    evaluation, config = scenario.evaluation.force_motion, scenario.controller.force_motion
    out = {"settling_time_s": None, "thesis_settling_time_s": evaluation.thesis_settling_time_s,
           "final_force_error_n": None, "final_joint_error": None, "final_attitude_error_rad": None,
           "force_motion": {"settling_bands": {"joint_rad_or_m": evaluation.joint_band,
                                               "base_attitude_rad": evaluation.attitude_band,
                                               "contact_force_n": evaluation.force_band}}}
    errors = trace.force_motion_errors(config.joint_positions, config.contact_force)
    if errors is None:
        out["force_motion"]["not_evaluated_because"] = "no grasp wrench recorded (the grasp never held)"
        return out
    inside = (errors["joint"] <= evaluation.joint_band) & (errors["attitude"] <= evaluation.attitude_band) & \
        (errors["force"] <= evaluation.force_band)
    _tw, thrust = trace.thruster_wrench.arrays()
    out.update({"settling_time_s": settling_time(errors["t"], inside),
                "final_force_error_n": float(errors["force"][-1]), "final_joint_error": float(errors["joint"][-1]),
                "final_attitude_error_rad": float(errors["attitude"][-1])})
    out["force_motion"].update({
        "max_force_error_n": float(errors["force"].max()), "joint_setpoints": errors["setpoints"],
        "contact_force_setpoint_n": list(config.contact_force),
        "max_thruster_force_n": float(np.linalg.norm(thrust[:, :3], axis=1).max()) if len(thrust) else None,
        "max_thruster_torque_nm": float(np.linalg.norm(thrust[:, 3:], axis=1).max()) if len(thrust) else None})
    if config.adaptation is not None:
        out.update(adaptation_figures(trace, scenario, system))
    return out


def adaptation_figures(trace: RunTrace, scenario: Scenario, system: SystemModel) -> dict:
    """The adaptive force_motion mode (docs/controllers.md sec. 3.4), from force_controller/estimates (published
    with the diagnostics, 10 Hz): each parameter's last estimate, its initial one (initial_scale x the model
    file's) and the model file's value (kg, kg m, kg m^2); V of eq. 7.12 at the grasp and at the last sample, and the
    largest rise of V between two control updates over the run relative to V at the grasp (the mode's own running
    figures: it alone sees every update)."""
    t, values = trace.estimates.arrays()
    if not len(t):
        return {"final_parameter_estimates": None, "lyapunov_initial": None, "lyapunov_final": None,
                "max_lyapunov_increase": None}
    fields = trace.estimate_fields
    column = {name: i for i, name in enumerate(fields)}
    model_values = {}         # the entries are "<joint>.<parameter>", ten per body in Pinocchio's order
    for joint in scenario.controller.force_motion.adaptation.estimated_joints:
        joint_id = system.joint_id(joint)
        names = [f for f in fields if f.startswith(system.model.names[joint_id] + ".")]
        parameters = system.model.inertias[joint_id].toDynamicParameters()
        model_values.update({name: float(x) for name, x in zip(names, parameters)})
    first_v = float(values[-1, column["lyapunov_at_grasp"]])
    scale = scenario.controller.force_motion.adaptation.initial_scale
    return {
        "final_parameter_estimates": {name: {"estimate": float(values[-1, column[name]]), "initial": scale * value,
                                             "model": value} for name, value in model_values.items()},
        "lyapunov_initial": first_v, "lyapunov_final": float(values[-1, column["lyapunov"]]),
        "max_lyapunov_increase": float(values[-1, column["max_lyapunov_increase"]]) / first_v if first_v > 0 else None}


def detumble_time(trace: RunTrace, grasp_time: float, rate: float) -> float | None:
    """s from the grasp to the first recorded instant from which every rate (bus and target angular rates, arm
    joint rates; rad/s) stays below `rate` to the end of the run; None when the last sample is above it."""
    series = []
    for data in (trace.bus_rate, trace.target_rate):
        t, w = data.arrays()
        series.append((t, np.linalg.norm(w, axis=1) if len(t) else w))
    t, rates = trace.arm_rates.arrays()
    series.append((t, np.abs(rates).max(axis=1) if len(t) else rates))
    settled = grasp_time
    for t, values in series:
        after = t >= grasp_time
        t, values = t[after], values[after]
        if not len(t) or values[-1] >= rate:
            return None
        above = np.flatnonzero(values >= rate)
        settled = max(settled, float(t[above[-1] + 1]) if len(above) else float(t[0]))
    return settled - grasp_time


def flexible_figures(trace: RunTrace) -> dict:
    """max_tip_deflection_m (top level) and the `flexible` section (see the module docstring); m and rad."""
    tips = trace.tip_deflections()
    t, positions = trace.flexible_positions.arrays()
    largest = np.abs(positions).max(axis=0) if len(t) else np.zeros(len(trace.flexible_names))
    last = t >= t[-1] - RESIDUAL_WINDOW if len(t) else np.zeros(0, dtype=bool)
    residual = np.abs(positions[last] - positions[last].mean(axis=0)).max(axis=0) if len(t) else largest
    names = trace.flexible_names
    modal = [k for k, n in enumerate(names) if not n.endswith(("/motor", "/deflection"))]
    deflection = [k for k, n in enumerate(names) if n.endswith("/deflection")]
    return {
        "max_tip_deflection_m": max((float(d.max()) for _, d in tips.values()), default=None),
        "flexible": {
            "max_tip_deflection_m": {link: float(d.max()) for link, (_, d) in tips.items()},
            "final_second_tip_deflection_m": {link: float(d[t_link >= t_link[-1] - RESIDUAL_WINDOW].max())
                                              for link, (t_link, d) in tips.items()},
            "max_modal_coordinate": {names[k]: float(largest[k]) for k in modal},
            "max_joint_deflection_rad": {names[k].rsplit("/", 1)[0]: float(largest[k]) for k in deflection},
            # largest |x - mean| over the last second: what a slew leaves ringing
            "final_second_vibration": {names[k]: float(residual[k]) for k in modal + deflection},
        },
    }


# time limits judged only when the run lasted until their end (requirement_verdicts.py): name -> what is awaited
TIME_LIMITED = {"max_detumble_time": "detumbled", "settling_time_s": "settled"}


def _requirements(summary: dict, req, status: RunStatus, goal_end_time: float | None,
                  first_close: float | None = None) -> dict:
    """name -> {value, limit, met (true/false/null), applies, not_evaluated_because}. first_close (s): when the
    scenario first commands the gripper to close (a run that ends before cannot judge `grasped`)."""
    final_reached = None
    if not status.complete:
        final_reached = f"the run is incomplete ({status.stopped_by}) at {status.simulated_time:.3f} s"
    elif goal_end_time is not None and status.simulated_time < goal_end_time - 1e-9:
        final_reached = (f"the run ended at {status.simulated_time:.3f} s, before the trajectory goal's motion "
                         f"ends ({goal_end_time:.3f} s); run at least that long")
    attitude = summary["max_attitude_error_rad"]
    held = None
    if summary.get("grasped") and summary["final_goal_error_rad"] is None:
        held = f"the arm holds the target from the grasp at {summary['grasp_time_s']:.3f} s on"
    checks = {
        "final_tracking_error": (summary["final_goal_error_rad"], req.final_tracking_error, "end of the motion",
                                 final_reached or held),
        "max_attitude_error": (attitude, req.max_attitude_error, "whole run",
                               None if attitude is not None else
                               next(n for n in summary["notes"] if n.startswith("bus attitude"))),
        "final_pregrasp_distance": (summary["pregrasp"]["distance_m"], req.final_pregrasp_distance,
                                    "end of the motion", final_reached),
        "final_pregrasp_angle": (summary["pregrasp"]["angle_rad"], req.final_pregrasp_angle, "end of the motion",
                                 final_reached),
    }
    if "grasped" in summary:          # a model with a grasp (capture_figures)
        no_grasp = None if summary["grasped"] else "no grasp closed in this run"
        incomplete = f"the run is incomplete ({status.stopped_by})" if not status.complete else None
        early = None
        if first_close is not None and status.simulated_time < first_close and not summary["grasped"]:
            early = (f"the run ended at {status.simulated_time:.3f} s, before the gripper is commanded to close "
                     f"({first_close:.3f} s); run at least that long")
        checks.update({
            "grasped": (summary["grasped"], req.grasped, "whole run",
                        (incomplete or early) if not summary["grasped"] else None),
            "max_momentum_change_across_grasp": (summary["momentum_change_across_grasp"],
                                                 req.max_momentum_change_across_grasp, "the grasp impulse", no_grasp),
            "max_detumble_time": (summary["detumble_time_s"], req.max_detumble_time, "from the grasp",
                                  no_grasp or incomplete),
            "max_peak_grasp_force": (summary["peak_grasp_force_n"], req.max_peak_grasp_force, "while held", no_grasp),
            "max_peak_grasp_torque": (summary["peak_grasp_torque_nm"], req.max_peak_grasp_torque, "while held",
                                      no_grasp),
        })
    if "settling_time_s" in summary:     # hybrid force/motion (force_motion_figures)
        why = summary["force_motion"].get("not_evaluated_because")
        # the force at the end of a run shorter than the settling limit is the transient's, not the settled one
        settle_by = req.settling_time_s if req.settling_time_s is not None else summary["thesis_settling_time_s"]
        transient = None
        if settle_by is not None and status.simulated_time < settle_by - 1e-9 and summary["settling_time_s"] is None:
            transient = (f"the run ended at {status.simulated_time:.3f} s, unsettled and before the settling limit "
                         f"({settle_by:.4g} s): its end is still the transient; run at least that long")
        checks.update({
            "settling_time_s": (summary["settling_time_s"], req.settling_time_s, "whole run", why),
            "final_force_error_n": (summary["final_force_error_n"], req.final_force_error_n, "end of the run",
                                    why or final_reached or transient),
            "max_lyapunov_increase": (summary.get("max_lyapunov_increase"), req.max_lyapunov_increase,
                                      "every control update", why),
        })
    out = {}
    for name, (value, limit, applies, blocked) in checks.items():
        if limit is None:             # not stated by this scenario
            continue
        if isinstance(limit, bool):
            met = None if blocked is not None else bool(value == limit)
        elif name in TIME_LIMITED and blocked is None and value is None:      # not detumbled (not settled)
            if name == "max_detumble_time" and summary["capture"].get("released"):
                met = False           # let go: it will not be detumbled by this grasp, however long the run
            else:
                origin = (summary.get("grasp_time_s") or 0.0) if name == "max_detumble_time" else 0.0   # s
                met, blocked = unreached_time_limit(limit, origin, status.simulated_time, TIME_LIMITED[name])
        else:
            met = None if blocked is not None or value is None else bool(value <= limit)
        out[name] = {"value": value, "limit": limit, "met": met, "applies": applies,
                     "not_evaluated_because": blocked}
    return out
