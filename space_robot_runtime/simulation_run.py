"""A scenario run in the standalone runtime: the node cores wired in one lockstep graph, recorded to a bag.

Nodes (in graph order): dynamics, robot_state_publisher (URDF, tf_static, joint tf), scenario_player
(goals, and the torque profile of an open-loop scenario), controller (unless `controller: null`), holonomy
monitor (unless `monitor: null`). Physics steps at simulation.dt; every other rate comes from config/nodes.yaml
and config/controller.yaml and must be a whole number of physics steps.

A scenario with a `comparison:` runs twice in one call: first its comparison run (the same scenario with the
comparison's overrides, no outputs of its own), then the run itself, recorded; the summary and plots add their
differences (comparison.py), e.g. seed 000's flexible arm against the rigid one under the same torques.

Everything that can be checked before running is checked when a SimulationRun is built, before any output
exists: the model, every timer's period against dt, the scenario's trajectory goal (by the controller's own
validation, from the initial state), the initial state against the joint limits. `run()` then owns its
output directory (output_directory.py) and ends cleanly on SIGINT/SIGTERM (interruption.py), on a
diverging simulation and on an internal error: the bag is closed and readable up to the last instant
reached, summary.json says whether the run is complete and why not, the plots show what was run.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import CommandError, ConfigError, SimulationDivergedError, StepTooLargeError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes.controller_core import ControllerCore
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.estimators_core import EstimatorsCore
from space_robot_nodes.lockstep_graph import Graph, largest_common_step
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.monitor_core import build_monitor
from space_robot_nodes.scenario_player_core import ScenarioPlayerCore, trajectory_message
from space_robot_nodes.sensors_core import SensorsCore
from space_robot_nodes.visualization_core import build_visualization
from space_robot_scenario import Scenario, comparison_scenario
from space_robot_scenario.capture_plan import with_capture_plan
from space_robot_scenario.scenario import MAX_STEPS, duration_limit_problem

from .bag_recorder import BagRecorder
from .comparison import ComparisonResult, compare
from .interruption import Interruption
from .momentum_conservation import conserved_momentum, momentum_conserved
from .output_directory import OutputDirectory
from .progress_bar import ProgressBar
from .robot_state_publisher import RobotStatePublisherCore
from .run_summary import RunStatus, summarize, to_json, wheel_spin_inertia
from .run_trace import INFO_KEY, ROLES_KEY, STATUS_KEY, RunTrace, TopicRoles

BAG_DIRECTORY = "bag"
SUMMARY_FILE = "summary.json"
TF_STATIC = "tf_static"
_PROGRESS_UPDATES = 200      # bar refreshes per run
_CHECK_PERIOD = 0.05         # s of simulated time between looks at an interruption request
# Finding a step to suggest when simulation.dt is unstable: builds of the graph tried (each stability check may
# bound the step lower: flexible modes, then joint damping), each below the last bound by this factor.
_STEP_SEARCH_ATTEMPTS, _STEP_SEARCH_SHRINK = 3, 0.999


class RunInterrupted(KeyboardInterrupt):
    """Raised by `SimulationRun.run()` (when it handles the signals itself) after a SIGINT, once the outputs
    of the run so far are written; `result` is the run's result."""

    def __init__(self, result: RunResult):
        super().__init__(f"run interrupted at t = {result.status.simulated_time:.3f} s; outputs kept")
        self.result = result


@dataclass
class RunResult:
    summary: dict
    trace: RunTrace
    bag: Path | None
    plots: list = field(default_factory=list)
    status: RunStatus | None = None
    out: Path | None = None            # the output directory (None: a run without outputs)

    @property
    def complete(self) -> bool:
        return self.status is None or self.status.complete


class SimulationRun:
    """Builds the graph of a scenario and checks it; `run()` advances it and writes the outputs."""

    def __init__(self, scenario: Scenario, system: SystemModel | None = None, check_periods: bool = True):
        """check_periods: False only to learn the timers' periods at a step they may not fit (see
        `_whole_stable_step`)."""
        self.types = RosbagsMessageTypes()
        self.system = system if system is not None else SystemModel(scenario.model)
        scenario = self.scenario = with_capture_plan(scenario, self.system)     # a capture's approach, planned
        self.q0, self.v0 = scenario.initial_state(self.system)
        try:
            self.simulator = Simulator(self.system, scenario.simulation, self.q0, self.v0, orbit=scenario.orbit)
        except StepTooLargeError as exc:
            raise self._whole_stable_step(exc) from None
        nodes = scenario.nodes
        self.graph = Graph(scenario.simulation.dt)
        self.dynamics = self.graph.add(DynamicsCore(self.types, self.simulator, nodes.dynamics,
                                                        scenario.faults.actuator_faults()))
        self.dynamics.raise_on_divergence = True      # the run stops there (a ROS node keeps reporting it)
        self.robot_state = self.graph.add(RobotStatePublisherCore(
            self.types, self.system, nodes.dynamics.joint_states, nodes.dynamics.tf, TF_STATIC,
            nodes.dynamics.tf_rate))
        self.sensors = None
        if scenario.sensors.sensors:                 # the model carries sensors (docs/sensing.md)
            self.sensors = self.graph.add(SensorsCore(self.types, self.system, scenario.sensors, nodes.sensors,
                                                      scenario.model.source, scenario.faults))
        self.estimators = None
        if scenario.estimators is not None and self.sensors is not None:    # after the sensors: their samples first
            self.estimators = self.graph.add(EstimatorsCore(self.types, self.system, scenario.sensors,
                                                            scenario.estimators, nodes.estimators, self.q0, self.v0))
        self.player = self.graph.add(ScenarioPlayerCore(self.types, scenario.trajectory_goal, scenario.attitude_goal,
                                                        nodes.controller, scenario.simulation.dt,
                                                        scenario.torque_profile, self.system.arm_joints,
                                                        scenario.gripper_goals, scenario.cartesian_goals))
        self.servicer_controller = self.controller = None
        if scenario.controller is not None:
            self.servicer_controller = ServicerController(self.system, scenario.controller)
            self.controller = self.graph.add(ControllerCore(self.types, self.servicer_controller, nodes.controller,
                                                             scenario.mean_motion))
        self.monitor = None if scenario.monitor_data is None else \
            self.graph.add(build_monitor(self.types, self.system, scenario))
        self.visualization = self.graph.add(build_visualization(self.types, self.system, scenario)) \
            if scenario.recording.visualization else None
        bus = scenario.evaluation.bus_subtree if scenario.evaluation is not None else self.system.subtrees[0].name
        if bus not in nodes.dynamics.odometry and self.system.subtree(bus).root_joint_id != 0:
            raise ConfigError("evaluation.bus_subtree", f"no odometry topic for subtree {bus!r}", scenario.source)
        self.bus_subtree = bus
        self.roles = TopicRoles(
            joint_states=nodes.dynamics.joint_states, bus_odometry=nodes.dynamics.odometry.get(bus, ""),
            momentum_linear=nodes.dynamics.momentum_linear, momentum_angular=nodes.dynamics.momentum_angular,
            momentum_balance=nodes.dynamics.momentum_balance,
            trajectory=nodes.controller.trajectory, attitude_setpoint=nodes.controller.attitude_setpoint,
            diagnostics=nodes.dynamics.diagnostics, flexible_modes=nodes.dynamics.flexible_modes,
            target_odometry=nodes.dynamics.odometry.get("target", "target/odom"),
            grasp_state=nodes.dynamics.grasp_state, grasp_wrench=nodes.dynamics.grasp_wrench,
            base_thrusters=nodes.controller.base_thrusters_command, force_estimates=nodes.controller.force_estimates)
        if not check_periods:
            return
        self.graph.check(self.setting_sources())
        known = self.graph.topics()
        for topic, _rate in scenario.recording.topics:        # the recording plan names topics of this graph
            if topic not in known:
                raise ConfigError(f"recording.topics.{topic}", f"no topic {topic!r} in this scenario's graph (its "
                                  f"topics: {', '.join(sorted(known))})", scenario.source)
        self.goal_end_time = self._check_trajectory_goal()
        # the comparison run, built (and so checked) now; run first by run()
        self.reference = SimulationRun(comparison_scenario(scenario)) if scenario.comparison is not None else None
        self.comparison: ComparisonResult | None = None
        if self.reference is not None:
            frame = scenario.comparison.end_effector_frame
            for system in (self.system, self.reference.system):
                if not system.model.existFrame(frame):
                    raise ConfigError("comparison.end_effector_frame", f"no frame {frame!r} in model "
                                      f"{system.config.name!r}", scenario.source)

    def _whole_stable_step(self, error: StepTooLargeError) -> StepTooLargeError:
        """`error` naming a step that both the stability check and the graph accept: the graph of this scenario
        built at the largest stable step (so every node's timers are as they will be) gives the timer periods
        that the step must divide (lockstep_graph.largest_common_step)."""
        limit = error.largest_stable_dt * _STEP_SEARCH_SHRINK      # at the bound itself, round-off decides
        for _attempt in range(_STEP_SEARCH_ATTEMPTS):          # another stability check may bound it lower
            at_limit = replace(self.scenario, simulation=replace(self.scenario.simulation, dt=limit))
            try:
                graph = SimulationRun(at_limit, self.system, check_periods=False).graph
                break
            except StepTooLargeError as lower:
                limit = min(limit, lower.largest_stable_dt) * _STEP_SEARCH_SHRINK
        else:
            return error
        periods = [timer.period for node in graph.nodes for timer in node.timers
                   if timer.setting is None or timer.setting[1] != "simulation.dt"]
        step = largest_common_step(periods, limit)
        return error.suggesting(step, "every node rate of this scenario is a whole number of such steps",
                                str(self.scenario.source) if self.scenario.source else None)

    def setting_sources(self) -> dict:
        """File role -> the file a setting of that role comes from (for error messages)."""
        files = {role: path for role, path in self.scenario.files.items() if path is not None}
        return {**files, "scenario": self.scenario.source}

    def _check_trajectory_goal(self) -> float | None:
        """The scenario's trajectory goal through the controller's own validation, as the controller will
        receive it (the message the scenario player sends), from the initial state. Returns the time (s) the
        goal's motion ends (after any time scaling), None without a goal."""
        goal = self.scenario.trajectory_goal
        if goal is None:
            return None
        if self.servicer_controller is None:
            raise ConfigError("goals.trajectory", "this scenario has no controller (controller: null) to follow it; "
                              "remove the goal or name a controller", self.scenario.source)
        msg = trajectory_message(self.types, goal)          # as the scenario player sends it
        names, points, start = cv.read_joint_trajectory(msg)
        try:
            report = self.servicer_controller.check_trajectory(names, points, goal.publish_at, self.q0, self.v0,
                                                               start)
        except CommandError as exc:
            raise ConfigError(f"goals.trajectory.{exc.field}", exc.problem, self.scenario.source) from None
        return report.start_time + report.duration

    def ticks_for(self, duration: float, field: str = "duration") -> int:
        """Whole physics steps in `duration` s; ConfigError for a duration that is not finite, positive, a
        whole number of steps and at most MAX_STEPS of them. `field`: what the error names ("--duration" for the
        command line's, which has no file; otherwise the scenario's entry)."""
        source = None if field.startswith("--") else self.scenario.source
        if not isinstance(duration, (int, float)) or not np.isfinite(duration) or duration <= 0:
            raise ConfigError(field, f"must be a finite number of seconds > 0, got {duration}", source)
        if duration / self.graph.tick > MAX_STEPS:        # before round(): 1e308 / dt is inf
            raise ConfigError(field, duration_limit_problem(duration, self.graph.tick), source)
        ticks = round(duration / self.graph.tick)
        if ticks < 1 or abs(ticks * self.graph.tick - duration) > 1e-9 * max(1.0, duration):
            raise ConfigError(field, f"must be a positive whole number of steps of {self.graph.tick} s, "
                              f"got {duration} (e.g. {max(1, ticks) * self.graph.tick:.6g})", source)
        return ticks

    def run(self, duration: float | None = None, out_dir: str | Path | None = None, plots: bool = True,
            progress: bool | None = None, overwrite: bool = False, stop: Interruption | None = None,
            output: OutputDirectory | None = None) -> RunResult:
        """Run for `duration` s (default: the scenario's). With out_dir: bag/, summary.json and the plots
        there (see output_directory.py for the rules; `overwrite` replaces an earlier run of this tool).

        Interruption: `stop` is polled between steps (an Interruption the caller holds, e.g. the CLI's). Without
        it, run() handles SIGINT/SIGTERM itself (main thread): the outputs of the run so far are written, then
        RunInterrupted (a KeyboardInterrupt) or SystemExit(143) is raised. A diverging simulation or an internal
        error also ends the run with its outputs written; the result's status says why (check
        `result.complete`).
        """
        duration = self.scenario.duration if duration is None else duration
        ticks = self.ticks_for(duration)
        if output is None and out_dir is not None:
            output = OutputDirectory(out_dir, overwrite)
        if stop is not None:
            return self._run_with_comparison(ticks, duration, output, plots, progress, stop)
        with Interruption() as own:
            result = self._run_with_comparison(ticks, duration, output, plots, progress, own)
        if own.name == "SIGINT":
            raise RunInterrupted(result)
        if own.requested:
            raise SystemExit(own.exit_status)
        return result

    def _run_with_comparison(self, ticks: int, duration: float, output: OutputDirectory | None, plots: bool,
                             progress: bool | None, stop: Interruption) -> RunResult:
        """The comparison run first (in memory), then this one; the comparison is computed while summarizing."""
        if self.reference is not None:
            self.reference_result = self.reference._run(ticks, duration, None, False, progress, stop)
        return self._run(ticks, duration, output, plots, progress, stop)

    def _run(self, ticks: int, duration: float, output: OutputDirectory | None, plots: bool,
             progress: bool | None, stop: Interruption) -> RunResult:
        staging = None if output is None else output.staging
        bag_path = None if staging is None else staging / BAG_DIRECTORY
        trace = self.trace = RunTrace(self.roles, self.system.arm_joints, self.system.wheel_joints)
        try:
            recorder = BagRecorder(bag_path, self.types.typestore, self.graph.topics(), self.scenario.recording.rate,
                                   listeners=(trace,), topic_rates=dict(self.scenario.recording.topics))
        except BaseException:
            if output is not None:
                output.discard()
            raise
        recorder.set_custom_data(ROLES_KEY, self.roles.to_json())
        recorder.set_custom_data(INFO_KEY, json.dumps(self.run_info(), sort_keys=True))
        self.graph.tap(recorder)
        status = self.status = RunStatus(requested_duration=duration)
        bar = ProgressBar(duration, progress)
        check_every = max(1, round(_CHECK_PERIOD / self.graph.tick))
        chunk = max(1, min(check_every, ticks // _PROGRESS_UPDATES))
        start = time.perf_counter()
        try:
            self.graph.start()
            done = 0
            while done < ticks:
                if stop.requested:
                    status.stop(f"interrupted by {stop.name}", stop.name)
                    break
                step = min(chunk, ticks - done)
                try:
                    self.graph.run_ticks(step)
                except SimulationDivergedError as exc:
                    status.stop(str(exc), "diverged")
                    break
                done += step
                bar.update(done * self.graph.tick)
            self._final_sample(recorder)
        except Exception as exc:  # noqa: BLE001 - a bug: keep what was recorded, and say so
            status.stop(f"internal error: {type(exc).__name__}: {exc}", "internal_error")
            status.fail("during the run", exc)
        finally:
            status.wall_time = time.perf_counter() - start       # the loop only: the bag's index is a one-off
            bar.close()
            status.simulated_time = float(self.simulator.state.t)
            recorder.set_custom_data(STATUS_KEY, json.dumps(status.to_dict(), sort_keys=True))
            recorder.close()
        return self._outputs(trace, recorder, status, output, bag_path, plots)

    def _final_sample(self, recorder: BagRecorder) -> None:
        """Publish the state at the instant reached (sensor phase), recorded whatever the decimation, so the
        bag and the trace end exactly where the run ended (a duration that is not a multiple of the
        recording period, or an interruption, loses nothing)."""
        recorder.take_next_message_of_every_stream()
        self.dynamics.publish_state()
        self.dynamics.publish_momentum()
        if self.dynamics.publishes_momentum_balance:
            self.dynamics.publish_momentum_balance()

    def _outputs(self, trace: RunTrace, recorder: BagRecorder, status: RunStatus, output: OutputDirectory | None,
                 bag_path: Path | None, plots: bool) -> RunResult:
        q, v = self.simulator.lvlh_state()      # the world frame's (LVLH in orbit), as everything published
        try:
            summary = summarize(self.scenario, self.system, trace, q, v, self.q0, status,
                                self.goal_end_time)
            if self.reference is not None:
                self.comparison = compare(self.scenario.comparison.name, self.scenario.comparison.description,
                                          self.scenario.comparison.end_effector_frame, self.bus_subtree,
                                          (self.system, trace), (self.reference.system, self.reference.trace))
                summary.update(self.comparison.summary())
                summary["comparison"]["complete"] = self.reference.status.complete
                reference = self.reference_result.summary     # its own figures, next to this run's
                summary["comparison"]["run"] = {key: reference.get(key) for key in (
                    "max_tip_deflection_m", "flexible", "final_goal_error_rad", "max_attitude_error_rad")
                    if key in reference}
        except Exception as exc:  # noqa: BLE001 - a bug: still write what can be written, and say so
            status.fail("while summarizing", exc)
            summary = {"scenario": self.scenario.name, **status.to_dict()}
        summary["steps"] = int(self.dynamics.steps)
        if self.system.flexibility is not None:     # compiled_flexible_step.py; the reason is "" when compiled
            summary["flexible_step"] = {"backend": self.simulator.step_backend,
                                        "not_compiled_because": self.simulator.step_backend_reason}
        summary["real_time_factor"] = status.simulated_time / status.wall_time if status.wall_time > 0 else None
        summary["wall_time_s"] = status.wall_time
        summary["topics"] = {name: {"type": info.msgtype, "recorded": recorder.counts[name],
                                    "transient_local": info.transient_local}
                             for name, info in self.graph.topics().items()}
        result = RunResult(summary, trace, bag_path, status=status)
        if output is None:
            return result
        staging = output.staging
        (staging / SUMMARY_FILE).write_text(to_json(summary))
        if plots and trace_has_samples(trace):
            try:
                from .run_plots import plot_run  # matplotlib only where plots are drawn

                info = self.run_info()
                paths = plot_run(trace, staging, self.scenario.name, attitude_limit=info["attitude_limit"],
                                 wheel_max_speed=info["wheel_max_speed"],
                                 momentum_conserved=info["momentum_conserved"], comparison=self.comparison,
                                 momentum_axes=info["momentum_axes"],
                                 capture=info.get("capture"), force_motion=info.get("force_motion"))
                result.plots = [p.name for p in paths]
            except Exception as exc:  # noqa: BLE001 - the bag and summary stand without plots: keep them
                status.fail("while plotting", exc)
                summary.update(status.to_dict())
                (staging / SUMMARY_FILE).write_text(to_json(summary))
        final = output.commit({"scenario": self.scenario.name, "complete": status.complete})
        result.out = final
        result.bag = final / BAG_DIRECTORY
        result.plots = [final / name for name in result.plots]
        return result

    def run_info(self) -> dict:
        """What `space-robot-plot` needs besides the topics (stored in the bag's custom_data)."""
        req = self.scenario.evaluation.requirements if self.scenario.evaluation is not None else None
        wheels = self.system.wheel_max_speed
        in_orbit = self.scenario.orbit is not None
        return {"scenario": self.scenario.name, "arm_joints": list(self.system.arm_joints),
                "wheel_joints": list(self.system.wheel_joints), "dt": self.graph.tick,
                "attitude_limit": req.max_attitude_error if req is not None else None,
                "wheel_max_speed": float(np.max(wheels)) if len(wheels) and np.all(np.isfinite(wheels)) else None,
                "momentum_conserved": momentum_conserved(self.system, in_orbit),
                "momentum_axes": conserved_momentum(self.system, in_orbit), **self._capture_info(),
                **self._force_motion_info()}

    def _force_motion_info(self) -> dict:
        """With a force_motion evaluation: the setpoints and bands its plot draws (run_plots.py)."""
        evaluation = self.scenario.evaluation
        if evaluation is None or evaluation.force_motion is None:
            return {}
        config, bands = self.scenario.controller.force_motion, evaluation.force_motion
        return {"force_motion": {"joint_positions": config.joint_positions, "contact_force": list(config.contact_force),
                                 "bands": {"joint": bands.joint_band, "base_attitude": bands.attitude_band,
                                           "force": bands.force_band}}}

    def _capture_info(self) -> dict:
        """With a grasp: what the capture plots draw besides the topics (wheel spin inertia kg m^2, the
        controller's grasp wrench limits N and N m, the wheels' momentum limit N m s)."""
        if self.system.grasp is None:
            return {}
        controller = self.scenario.controller
        speeds = self.system.wheel_max_speed
        spin = wheel_spin_inertia(self.system)
        finite = len(speeds) and np.all(np.isfinite(speeds))
        return {"capture": {
            "wheel_spin_inertia": spin.tolist(),
            "wheel_max_momentum": float(np.max(spin * speeds)) if finite else None,
            "grasp_force_limit": controller.capture.force_limit if controller is not None else None,
            "grasp_torque_limit": controller.capture.torque_limit if controller is not None else None}}


def trace_has_samples(trace: RunTrace) -> bool:
    return len(trace.arm_positions) > 0 or len(trace.bus_orientation) > 0 or len(trace.momentum_linear) > 0
