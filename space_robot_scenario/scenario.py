"""Scenario files (config/scenarios/*.yaml): what to simulate, how, for how long, and what to command.

A scenario names the configuration files of the model, the nodes, the controller and the monitor
(named_files.py), with optional dotted-key overrides of each (overrides.py: validated exactly like the files),
plus one section per concern, each read by its own module:
- simulation: physics settings (space_robot_dynamics.simulation.simulator.read_simulation_settings);
- duration (s) and initial_state (space_robot_dynamics.simulation.initial_state);
- goals (goals.py): a joint trajectory, a bus attitude setpoint, a capture of the target's grapple fixture
  (planned from the initial state when the run starts: capture_plan.py), gripper commands;
- torque_profile (torque_profile.py): open-loop arm torques in place of a controller (`controller: null`);
- comparison (comparison.py): the same scenario run a second time with a few entries changed;
- recording (recording.py): bag rate for high-rate topics;
- evaluation (evaluation.py): the pre-grasp geometry and the stated requirements the summary checks;
- rviz: the RViz configuration that shows it (default rviz/space_robot.rviz).
Checks across files (rates, goals against the model) are in consistency.py.

Both the standalone runtime and the ROS 2 nodes (parameter `scenario`) read these files.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from space_robot_control.controller_config import ControllerConfig, read_controller_config
from space_robot_dynamics.config_reader import ConfigReader, load_yaml_file
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.model_config import ModelConfig, read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.orbit.orbit_config import OrbitConfig, read_orbit
from space_robot_dynamics.package_share import find_in_share, resolve
from space_robot_dynamics.simulation.initial_state import read_initial_state
from space_robot_dynamics.simulation.simulator import SimulationSettings, read_simulation_settings
from space_robot_estimation.estimators_config import EstimatorsConfig, read_estimators
from space_robot_sensing.sensor_suite import SensorSuiteConfig, read_sensor_suite

from .comparison import ComparisonConfig, read_comparison
from .consistency import check_goals, check_orbit_model, check_state_rates, check_torque_profile
from .evaluation import EvaluationConfig, read_evaluation
from .faults import FaultSchedule, read_faults
from .goals import AttitudeGoal, CaptureGoal, TrajectoryGoal, read_goals
from .named_files import read_named_files
from .node_config import NodesConfig, read_nodes_config
from .overrides import (
    OVERRIDABLE,
    SCENARIO,
    Override,
    apply_with_fields,
    blamed,
    file_overrides,
    normalized,
    scenario_overrides,
)
from .recording import RecordingConfig, read_recording
from .state_source import StateSource, check_state_source, read_state_source, with_state_source
from .torque_profile import TorqueProfile, read_torque_profile

DEFAULT_SCENARIO = "config/scenarios/servicer_pregrasp.yaml"
SCENARIO_FOLDER = "config/scenarios"
DEFAULT_DURATION = 10.0      # s, when a scenario (e.g. one for the real arm) does not say
# The longest run a scenario may ask for, in physics steps: 1e8 is 28 h of simulated time at dt = 1 ms (17 orbits
# in low Earth orbit), about 5 h of wall time at the graph's 5-7x real time and a 75 GB bag at the default
# recording (0.75 MB per simulated second). Longer is a typo (1e30 for 1e3) or a job for a campaign of shorter
# runs; beyond ~1e308 / dt the step count is not even a number (OverflowError).
MAX_STEPS = 10**8


def duration_limit_problem(duration: float, dt: float) -> str:
    """What a duration of more than MAX_STEPS steps of dt is told."""
    return (f"{duration:g} s is more than {MAX_STEPS:.0e} steps of {dt:g} s, the most one run takes "
            f"({MAX_STEPS * dt:g} s at this dt): split a longer study into shorter runs")
DEFAULT_RVIZ = "rviz/space_robot.rviz"      # servicer and target; rviz/sawyer.rviz for a bench arm


@dataclass(frozen=True)
class Scenario:
    name: str
    source: str | None
    model: ModelConfig
    nodes: NodesConfig
    controller: ControllerConfig | None     # None (`controller: null`): no controller node (e.g. torque_profile)
    monitor_data: dict | None        # the monitor's YAML mapping after overrides; None: no monitor
    monitor_source: str | None
    simulation: SimulationSettings
    duration: float
    initial_state_data: dict
    trajectory_goal: TrajectoryGoal | None
    attitude_goal: AttitudeGoal | None
    recording: RecordingConfig
    evaluation: EvaluationConfig | None
    description: str = ""
    files: dict = field(default_factory=dict)   # name -> resolved path of each referenced file
    overrides: tuple = ()       # every Override applied (the scenario's own section and the given ones)
    rviz: Path | None = None    # the RViz configuration that shows this scenario (launch files start RViz with it)
    torque_profile: TorqueProfile | None = None
    comparison: ComparisonConfig | None = None
    given_overrides: tuple = ()     # the overrides read_scenario was given (--set, ROS parameter), as given
    capture_goal: CaptureGoal | None = None
    gripper_goals: tuple = ()       # GripperGoal, by time
    cartesian_goals: tuple = ()     # CartesianGoal, by time (a capture's Cartesian approach)
    own_overrides: tuple = ()       # the given overrides of the scenario's own entries, as applied (field set)
    sensors: SensorSuiteConfig = field(default_factory=SensorSuiteConfig)   # the model file's `sensors` (none: empty)
    faults: FaultSchedule = field(default_factory=FaultSchedule)     # `faults:` (faults.py); none: empty
    estimators: EstimatorsConfig | None = None     # the model file's `estimators` (none: None)
    state_source: StateSource = field(default_factory=StateSource)   # `state_source:` (state_source.py)
    orbit: OrbitConfig | None = None    # `orbit:` (docs/orbit.md); None: free space

    @property
    def mean_motion(self) -> float:
        """The reference orbit's mean motion n (rad/s); 0 in free space."""
        return 0.0 if self.orbit is None else self.orbit.mean_motion

    def initial_state(self, system: SystemModel) -> tuple[np.ndarray, np.ndarray]:
        """(q0, v0) for `system` from the scenario's initial_state section (validated against the model; an error
        in an entry a --set gave names the --set, as read_scenario's do)."""
        reader = ConfigReader(self.initial_state_data, self.source, "initial_state")
        with blamed(list(self.own_overrides)):
            return read_initial_state(reader, system)


def shipped_scenarios() -> list[str]:
    """Names of the scenarios in the package share (what `space-robot-sim NAME` accepts besides paths)."""
    folder = resolve(SCENARIO_FOLDER)
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def find_scenario(scenario: str | Path) -> Path:
    """A scenario file from what a user gives: a path (absolute, or relative to the working directory), a path
    relative to the package share, or the name of a shipped scenario ('servicer_pregrasp'). ConfigError
    saying where it looked otherwise."""
    return find_in_share(scenario, SCENARIO_FOLDER, "scenario")


def load_scenario(scenario: str | Path = DEFAULT_SCENARIO, overrides=None) -> Scenario:
    """Read and validate a scenario given as find_scenario accepts it (a path or a shipped name).
    overrides: parse_overrides(["simulation.dt=0.0005", "model.gravity=[0, 0, -9.81]"]) (see read_scenario)."""
    return read_scenario(load_yaml_file(find_scenario(scenario)), overrides)


def read_scenario(reader: ConfigReader, overrides=None) -> Scenario:
    """Parse a scenario mapping. `overrides`: Override objects (parse_overrides) for the scenario itself
    (target 'scenario') and for the files it names ('model', 'nodes', 'controller', 'monitor'), applied on
    top of the scenario's own `overrides:` section; or a mapping {file: {dotted key: value}}. An error in
    an overridden field names the override."""
    given = normalized(overrides)
    own = scenario_overrides(given)
    if own:
        data, own = apply_with_fields(reader.data, own)
        reader = ConfigReader(data, reader.source, reader.path, reader.directory)
    with blamed(own):
        scenario = _read_sections(reader, given, own)
    return replace(scenario, given_overrides=tuple(given), own_overrides=tuple(own))


def _read_sections(reader: ConfigReader, given: list[Override], own: list[Override]) -> Scenario:
    """Each section by its reader, then the named files (each error blamed on the overrides of its file), then
    the checks across them."""
    files = read_named_files(reader, file_overrides(reader, given))
    simulation = read_simulation_settings(reader.sub("simulation", {}))
    duration = reader.number("duration", DEFAULT_DURATION, exclusive_minimum=0.0)
    if duration / simulation.dt > MAX_STEPS:
        raise reader.error("duration", duration_limit_problem(duration, simulation.dt))
    initial = reader.raw("initial_state", {}) or {}
    if not isinstance(initial, dict):
        raise reader.error("initial_state", "must be a mapping")
    goals = read_goals(reader)
    recording = read_recording(reader)
    evaluation = read_evaluation(reader)

    with blamed(list(files["model"].overrides)):
        model = read_model_config(files["model"].reader)
        sensors = read_sensor_suite(files["model"].reader.sub("sensors", {}))
        estimators = read_estimators(files["model"].reader.sub("estimators", {}))
    with blamed(list(files["nodes"].overrides)):
        nodes = read_nodes_config(files["nodes"].reader)
    controller = None
    if files["controller"].reader is not None:
        with blamed(list(files["controller"].overrides)):
            controller = read_controller_config(files["controller"].reader)
        with blamed(list(files["nodes"].overrides + files["controller"].overrides)):
            check_state_rates(nodes, controller, files["nodes"].reader, model.flexible)
    check_goals(goals, model, controller, reader.source)
    orbit = read_orbit(reader.sub("orbit")) if reader.raw("orbit", None) is not None else None
    if orbit is not None:
        with blamed(list(files["model"].overrides)):
            check_orbit_model(model, sensors, files["model"].reader.source)
    state_source = read_state_source(reader)
    with blamed(list(files["model"].overrides)):
        check_state_source(state_source, sensors, estimators, model, reader.source)
    nodes = with_state_source(nodes, state_source)
    faults = read_faults(reader, duration, model.wheel_joints, model.arm_joints, tuple(sensors.sensors))
    torque_profile = read_torque_profile(reader, model)
    check_torque_profile(torque_profile, controller, reader.source)
    comparison = read_comparison(reader)
    monitor = files["monitor"].reader

    scenario = Scenario(
        name=reader.string("name"),
        description=reader.string("description", ""),
        source=reader.source,
        model=model,
        nodes=nodes,
        controller=controller,
        monitor_data=monitor.data if monitor is not None else None,
        monitor_source=monitor.source if monitor is not None else None,
        simulation=simulation,
        duration=duration,
        initial_state_data=initial,
        trajectory_goal=goals.trajectory,
        attitude_goal=goals.attitude,
        recording=recording,
        evaluation=evaluation,
        files={key: named.path for key, named in files.items()},
        overrides=tuple(own) + tuple(o for key in OVERRIDABLE for o in files[key].overrides),
        rviz=reader.file_path("rviz", DEFAULT_RVIZ),
        torque_profile=torque_profile,
        comparison=comparison,
        capture_goal=goals.capture,
        gripper_goals=goals.gripper,
        sensors=sensors,
        faults=faults,
        estimators=estimators,
        state_source=state_source,
        orbit=orbit,
    )
    reader.reject_unknown()
    return scenario


def comparison_scenario(scenario: Scenario) -> Scenario:
    """The scenario of `scenario`'s comparison run: its file read again with the same given overrides, then the
    comparison's, and without a comparison of its own. When the comparison names another model file, the given
    overrides of the model file are left out (they address this run's model: seed 000's rigid arm has no
    flexible_links to override)."""
    if scenario.comparison is None:
        raise ConfigError("comparison", "this scenario has no comparison", scenario.source)
    if scenario.source is None or not Path(scenario.source).is_file():
        raise ConfigError("comparison", "a comparison needs the scenario's file (scenario.source)", scenario.source)
    own_model = any(o.target == SCENARIO and o.key == "model" for o in scenario.comparison.overrides)
    given = [o for o in scenario.given_overrides if not (own_model and o.target == "model")]
    overrides = given + list(scenario.comparison.overrides) + [Override(SCENARIO, "comparison", None, "comparison run")]
    return read_scenario(load_yaml_file(scenario.source), overrides)
