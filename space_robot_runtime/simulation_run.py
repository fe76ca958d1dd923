"""A scenario run in the standalone runtime: the node cores wired in one lockstep graph, recorded to a bag.

Nodes (in graph order): dynamics, robot_state_publisher (URDF, tf_static, joint tf), scenario_player
(goals), controller, holonomy monitor (unless the scenario says `monitor: null`). Physics steps at
simulation.dt; every other rate comes from
config/nodes.yaml and config/controller.yaml and must be a whole number of physics steps.
"""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import Simulator
from space_robot_nodes.controller_core import ControllerCore
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.monitor_core import build_monitor
from space_robot_nodes.scenario import Scenario
from space_robot_nodes.scenario_player_core import ScenarioPlayerCore

from .bag_recorder import BagRecorder
from .progress_bar import ProgressBar
from .robot_state_publisher import RobotStatePublisherCore
from .run_plots import plot_run
from .run_summary import summarize
from .run_trace import INFO_KEY, ROLES_KEY, RunTrace, TopicRoles, bag_custom_data

BAG_DIRECTORY = "bag"
SUMMARY_FILE = "summary.json"
TF_STATIC = "tf_static"
_PROGRESS_UPDATES = 200      # bar refreshes per run


@dataclass
class RunResult:
    summary: dict
    trace: RunTrace
    bag: Path | None
    plots: list = field(default_factory=list)


class SimulationRun:
    """Builds the graph of a scenario; `run()` advances it and writes the outputs."""

    def __init__(self, scenario: Scenario, system: SystemModel | None = None):
        self.scenario = scenario
        self.types = RosbagsMessageTypes()
        self.system = system if system is not None else SystemModel(scenario.model)
        self.q0, self.v0 = scenario.initial_state(self.system)
        self.simulator = Simulator(self.system, scenario.simulation, self.q0, self.v0)
        nodes = scenario.nodes
        self.graph = Graph(scenario.simulation.dt)
        self.dynamics = self.graph.add(DynamicsCore(self.types, self.simulator, nodes.dynamics))
        self.robot_state = self.graph.add(RobotStatePublisherCore(
            self.types, self.system, nodes.dynamics.joint_states, nodes.dynamics.tf, TF_STATIC,
            nodes.dynamics.tf_rate))
        self.player = self.graph.add(ScenarioPlayerCore(self.types, scenario.trajectory_goal, scenario.attitude_goal,
                                                        nodes.controller, scenario.simulation.dt))
        self.controller = self.graph.add(ControllerCore(self.types, ServicerController(self.system,
                                                                                       scenario.controller),
                                                        nodes.controller))
        self.monitor = None if scenario.monitor_data is None else \
            self.graph.add(build_monitor(self.types, self.system, scenario))
        bus = scenario.evaluation.bus_subtree if scenario.evaluation is not None else self.system.subtrees[0].name
        if bus not in nodes.dynamics.odometry and self.system.subtree(bus).root_joint_id != 0:
            raise ConfigError("evaluation.bus_subtree", f"no odometry topic for subtree {bus!r}", scenario.source)
        self.roles = TopicRoles(
            joint_states=nodes.dynamics.joint_states, bus_odometry=nodes.dynamics.odometry.get(bus, ""),
            momentum_linear=nodes.dynamics.momentum_linear, momentum_angular=nodes.dynamics.momentum_angular,
            trajectory=nodes.controller.trajectory, attitude_setpoint=nodes.controller.attitude_setpoint,
            diagnostics=nodes.dynamics.diagnostics)

    def ticks_for(self, duration: float) -> int:
        ticks = round(duration / self.graph.tick)
        if ticks < 1 or abs(ticks * self.graph.tick - duration) > 1e-9 * max(1.0, duration):
            raise ConfigError("duration", f"must be a positive whole number of steps of {self.graph.tick} s, "
                              f"got {duration}", self.scenario.source)
        return ticks

    def run(self, duration: float | None = None, out_dir: str | Path | None = None, plots: bool = True,
            progress: bool | None = None, overwrite: bool = False) -> RunResult:
        """Run for `duration` s (default: the scenario's). With out_dir: bag, summary.json and plots there.

        An existing bag in out_dir is an error, unless `overwrite` and it is a bag this runtime wrote.
        """
        duration = self.scenario.duration if duration is None else duration
        ticks = self.ticks_for(duration)
        out = None if out_dir is None else Path(out_dir)
        bag_path = None if out is None else out / BAG_DIRECTORY
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            if bag_path.exists():
                if not (overwrite and written_by_runtime(bag_path)):
                    raise FileExistsError(f"{bag_path} exists; choose another --out directory, remove it, or pass "
                                          "--overwrite (replaces a bag written by space-robot-sim only)")
                shutil.rmtree(bag_path)
        trace = RunTrace(self.roles, self.system.arm_joints, self.system.wheel_joints)
        recorder = BagRecorder(bag_path, self.types.typestore, self.graph.topics(), self.scenario.recording.rate,
                               listeners=(trace,))
        recorder.set_custom_data(ROLES_KEY, self.roles.to_json())
        recorder.set_custom_data(INFO_KEY, json.dumps(self.run_info(), sort_keys=True))
        self.graph.tap(recorder)
        bar = ProgressBar(duration, progress)
        start = time.perf_counter()
        try:
            self.graph.start()
            chunk = max(1, ticks // _PROGRESS_UPDATES)
            done = 0
            while done < ticks:
                step = min(chunk, ticks - done)
                self.graph.run_ticks(step)
                done += step
                bar.update(done * self.graph.tick)
            # the state at the final instant: publish it (sensor phase) so the trace ends at `duration`
            self.dynamics.publish_state()
            self.dynamics.publish_momentum()
            wall = time.perf_counter() - start      # the loop only: writing the bag's index is a one-off
        finally:
            bar.close()
            recorder.close()
        state = self.simulator.state
        summary = summarize(self.scenario, self.system, trace, state.q, state.v, self.q0)
        summary["steps"] = int(self.dynamics.steps)
        summary["real_time_factor"] = duration / wall if wall > 0 else float("inf")
        summary["wall_time_s"] = wall
        summary["topics"] = {name: {"type": info.msgtype, "recorded": recorder.counts[name],
                                    "transient_local": info.transient_local}
                             for name, info in self.graph.topics().items()}
        result = RunResult(summary, trace, bag_path)
        if out is not None:
            (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
            if plots:
                info = self.run_info()
                result.plots = plot_run(trace, out, self.scenario.name, attitude_limit=info["attitude_limit"],
                                        wheel_max_speed=info["wheel_max_speed"])
        return result

    def run_info(self) -> dict:
        """What `space-robot-plot` needs besides the topics (stored in the bag's custom_data)."""
        req = self.scenario.evaluation.requirements if self.scenario.evaluation is not None else None
        wheels = self.system.wheel_max_speed
        return {"scenario": self.scenario.name, "arm_joints": list(self.system.arm_joints),
                "wheel_joints": list(self.system.wheel_joints), "dt": self.graph.tick,
                "attitude_limit": req.max_attitude_error if req is not None else None,
                "wheel_max_speed": float(np.max(wheels)) if len(wheels) and np.all(np.isfinite(wheels)) else None}


def written_by_runtime(bag: Path) -> bool:
    """A rosbag2 directory holding only what this runtime writes, with its run info in custom_data."""
    try:
        return ({p.name for p in bag.iterdir()} <= {"metadata.yaml", f"{BAG_DIRECTORY}.mcap"}
                and INFO_KEY in bag_custom_data(bag))
    except (OSError, ValueError, AttributeError):
        return False
