"""Scenario files (config/scenarios/*.yaml): what to simulate, how, for how long, and what to command.

A scenario names the configuration files of the model, the nodes, the controller and the monitor, with
optional dotted-key overrides of each (validated exactly like the files), plus:
- simulation: physics settings (space_robot_dynamics.simulation.simulator.read_simulation_settings);
- duration (s) and initial_state (space_robot_dynamics.simulation.initial_state);
- goals: a trajectory_msgs/JointTrajectory goal and a bus attitude setpoint, each with its publish time; a capture
  (the trajectory that follows a tumbling target's grapple fixture and the gripper's closing, planned from the
  initial state by space_robot_control.capture_approach: capture_goals.py) and gripper commands at times;
- torque_profile: open-loop arm torques (sinusoids) published on the arm command topic by the scenario player,
  in place of a controller (`controller: null`), e.g. seed 000's study;
- comparison: the same scenario run a second time with a few entries changed (`--set` syntax: another model,
  a controller option), whose differences to this run the standalone runtime reports (space_robot_runtime/
  comparison.py), e.g. seed 000's flexible arm against its rigid one under the same torques;
- recording: bag rate for high-rate topics;
- evaluation: the pre-grasp geometry and the stated requirements the summary checks;
- rviz: the RViz configuration that shows it (default rviz/space_robot.rviz).

Both the standalone runtime and the ROS 2 nodes (parameter `scenario`) read these files.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from space_robot_control.controller_config import ControllerConfig, read_controller_config
from space_robot_dynamics.config_overrides import Override, apply_with_fields, blamed
from space_robot_dynamics.config_reader import ConfigReader, load_yaml_file, parse_yaml
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.model_config import ModelConfig, read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import find_in_share, resolve
from space_robot_dynamics.simulation.initial_state import read_initial_state
from space_robot_dynamics.simulation.simulator import SimulationSettings, read_simulation_settings

from .node_config import NodesConfig, read_nodes_config

OVERRIDABLE = ("model", "nodes", "controller", "monitor")     # the files a scenario names
SCENARIO = "scenario"                                         # Override.target of the scenario's own entries
DEFAULT_DURATION = 10.0      # s, when a scenario (e.g. one for the real arm) does not say
DEFAULT_RVIZ = "rviz/space_robot.rviz"      # servicer and target; rviz/sawyer.rviz for a bench arm


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
class Sinusoid:
    """amplitude sin(2 pi t / period + phase) + offset (N m, s, rad, N m)."""

    amplitude: float
    period: float
    phase: float = 0.0
    offset: float = 0.0


@dataclass(frozen=True)
class TorqueProfile:
    """Open-loop arm torques: per arm joint a Sinusoid (joints not named get zero), published at `rate` (Hz) from
    `start` to `stop` (s; zero after stop, None: never stops). Each command is the torque at the middle of its
    period (held by the dynamics node until the next one: at rate = 1 / dt, the midpoint rule of each step)."""

    rate: float
    sinusoids: dict             # joint name -> Sinusoid
    start: float = 0.0
    stop: float | None = None


@dataclass(frozen=True)
class ComparisonConfig:
    """A second run of the scenario with `overrides` (Override objects, --set syntax) applied, labelled `name`;
    the runtime reports the end effector's (frame `end_effector_frame`), the arm joints' and the bus's
    differences between the two runs."""

    name: str
    description: str
    overrides: tuple
    end_effector_frame: str


@dataclass(frozen=True)
class RecordingConfig:
    """Bag recording: topics published faster than `rate` (Hz) are decimated to it."""

    rate: float = 100.0
    visualization: bool = True      # the visualization node's markers and paths in the bag (for RViz replay)


@dataclass(frozen=True)
class Requirements:
    """Stated figures the summary checks (rad, rad, m, rad; a capture: true, relative, s, N, N m); None: not
    stated."""

    final_tracking_error: float | None = None
    max_attitude_error: float | None = None
    final_pregrasp_distance: float | None = None
    final_pregrasp_angle: float | None = None
    grasped: bool | None = None
    max_momentum_change_across_grasp: float | None = None
    max_detumble_time: float | None = None
    max_peak_grasp_force: float | None = None
    max_peak_grasp_torque: float | None = None
    settling_time_s: float | None = None        # s: hybrid force/motion (evaluation.force_motion)
    final_force_error_n: float | None = None    # N
    max_lyapunov_increase: float | None = None  # relative to V at the grasp (adaptive force_motion)


@dataclass(frozen=True)
class ForceMotionEvaluation:
    """Hybrid force/motion runs (controller mode force_motion): the settling bands of every error (joints rad or m,
    base attitude rad, contact force N), the thesis's settling time (s) the summary reports beside the run's."""

    joint_band: float
    attitude_band: float
    force_band: float
    thesis_settling_time_s: float | None = None


@dataclass(frozen=True)
class EvaluationConfig:
    """Pre-grasp geometry: the point `standoff` m out of `grapple_frame` along its `grapple_axis`, approached
    with the end effector's `approach_axis` pointing along -grapple_axis (into the fixture)."""

    end_effector_frame: str
    approach_axis: tuple
    grapple_frame: str
    grapple_axis: tuple
    standoff: float
    bus_subtree: str
    requirements: Requirements | None
    detumble_rate: float = 1.0e-3     # rad/s: the rates below which a captured stack counts as detumbled
    force_motion: ForceMotionEvaluation | None = None


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

    def initial_state(self, system: SystemModel) -> tuple[np.ndarray, np.ndarray]:
        """(q0, v0) for `system` from the scenario's initial_state section (validated against the model)."""
        reader = ConfigReader(self.initial_state_data, self.source, "initial_state")
        return read_initial_state(reader, system)


def _referenced(reader: ConfigReader, key: str, default: str, overrides: list[Override]
                ) -> tuple[ConfigReader, Path, list[Override]]:
    """The file a scenario names under `key` (next to the scenario first, then in the package share), read
    with its overrides applied; returns the reader, the file and the overrides with their fields."""
    path = reader.file_path(key, default)
    file_reader = load_yaml_file(path)
    if overrides:
        data, overrides = apply_with_fields(file_reader.data, overrides)
        file_reader = ConfigReader(data, file_reader.source, directory=file_reader.directory)
    return file_reader, path, overrides


def _normalized(overrides) -> list[Override]:
    """Override objects from parse_overrides, or the older mapping {file: {dotted key: value}}."""
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return [Override(target, str(key), value, f"override {target}.{key}")
                for target, entries in overrides.items() for key, value in (entries or {}).items()]
    return list(overrides)


def _from_working_directory(override: Override) -> Override:
    """A file named on the command line (--set model=my_model.yaml) is where the user stands: absolute."""
    if override.key in OVERRIDABLE and isinstance(override.value, str) and Path(override.value).is_file():
        return replace(override, value=str(Path(override.value).resolve()))
    return override


def _file_overrides(reader: ConfigReader, given: list[Override]) -> dict[str, list[Override]]:
    """Per file: the scenario's own `overrides:` entries, then the given ones (which win)."""
    sub = reader.sub("overrides", {})
    out: dict[str, list[Override]] = {}
    for name in OVERRIDABLE:
        section = sub.raw(name, {}) or {}
        if not isinstance(section, dict):
            raise sub.error(name, "must be a mapping of dotted keys to values")
        out[name] = [Override(name, str(key), value, f"{reader.source}: overrides.{name}.{key}")
                     for key, value in section.items()]
        out[name] += [o for o in given if o.target == name]
    sub.reject_unknown()
    return out


def read_scenario(reader: ConfigReader, overrides=None) -> Scenario:
    """Parse a scenario mapping. `overrides`: Override objects (parse_overrides) for the scenario itself
    (target 'scenario') and for the files it names ('model', 'nodes', 'controller', 'monitor'), applied on
    top of the scenario's own `overrides:` section; or a mapping {file: {dotted key: value}}. An error in
    an overridden field names the override."""
    given = _normalized(overrides)
    own = [_from_working_directory(o) for o in given if o.target == SCENARIO]
    if own:
        data, own = apply_with_fields(reader.data, own)
        reader = ConfigReader(data, reader.source, reader.path, reader.directory)
    with blamed(own):
        scenario = _read_scenario(reader, given, own)
    return replace(scenario, given_overrides=tuple(given))


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


def _read_scenario(reader: ConfigReader, given: list[Override], own: list[Override]) -> Scenario:
    file_overrides = _file_overrides(reader, given)
    model_reader, model_path, file_overrides["model"] = _referenced(
        reader, "model", "config/models/servicer_target.yaml", file_overrides["model"])
    nodes_reader, nodes_path, file_overrides["nodes"] = _referenced(reader, "nodes", "config/nodes.yaml",
                                                                    file_overrides["nodes"])
    if reader.has("controller") and reader.raw("controller") is None:   # `controller: null`: no controller node
        controller_reader, controller_path = None, None
    else:
        controller_reader, controller_path, file_overrides["controller"] = _referenced(
            reader, "controller", "config/controller.yaml", file_overrides["controller"])
    if reader.has("monitor") and reader.raw("monitor") is None:     # `monitor: null`: no holonomy monitor
        monitor_data, monitor_source, monitor_path = None, None, None
    else:
        monitor_reader, monitor_path, file_overrides["monitor"] = _referenced(
            reader, "monitor", "config/monitor.yaml", file_overrides["monitor"])
        monitor_data, monitor_source = monitor_reader.data, monitor_reader.source
    sim_reader = reader.sub("simulation", {})
    simulation = read_simulation_settings(sim_reader)
    duration = reader.number("duration", DEFAULT_DURATION, exclusive_minimum=0.0)
    initial = reader.raw("initial_state", {}) or {}
    if not isinstance(initial, dict):
        raise reader.error("initial_state", "must be a mapping")

    goals = reader.sub("goals", {})
    trajectory = None
    if goals.raw("trajectory", None) is not None:          # absent or null: no trajectory goal
        tr = goals.sub("trajectory")
        names = tuple(tr.string_list("joint_names"))
        points = []
        for pt in tr.sub_list("points"):
            points.append((pt.number("time_from_start", minimum=0.0), tuple(pt.vector("positions", len(names)))))
            pt.reject_unknown()
        trajectory = TrajectoryGoal(tr.number("publish_at", 0.0, minimum=0.0), names, tuple(points))
        tr.reject_unknown()
    attitude = None
    if goals.raw("attitude_setpoint", None) is not None:
        at = goals.sub("attitude_setpoint")
        quat = at.vector("orientation_xyzw", 4)
        if abs(np.linalg.norm(quat) - 1.0) > 1e-6:
            raise at.error("orientation_xyzw", f"must be a unit quaternion, norm is {np.linalg.norm(quat):.9g}")
        attitude = AttitudeGoal(at.number("publish_at", 0.0, minimum=0.0), tuple(quat))
        at.reject_unknown()
    capture = _capture_goal(goals) if goals.raw("capture", None) is not None else None
    if capture is not None and trajectory is not None:
        raise goals.error("capture", "plans its own trajectory: remove goals.trajectory")
    gripper = []
    if goals.raw("gripper", None) is not None:
        items = goals.raw("gripper")
        if not isinstance(items, list):
            raise goals.error("gripper", "must be a list of {at: s, close: true/false}")
        for i, item in enumerate(items):
            entry = ConfigReader(item, goals.source, goals.field(f"gripper[{i}]")) if isinstance(item, dict) else \
                None
            if entry is None:
                raise goals.error(f"gripper[{i}]", "must be a mapping {at: s, close: true/false}")
            gripper.append(GripperGoal(entry.number("at", minimum=0.0), entry.boolean("close")))
            entry.reject_unknown()
    goals.reject_unknown()

    rec = reader.sub("recording", {})
    recording = RecordingConfig(rate=rec.number("rate", 100.0, exclusive_minimum=0.0),
                                visualization=rec.boolean("visualization", True))
    rec.reject_unknown()

    evaluation = None
    if reader.raw("evaluation", None) is not None:       # absent or null: no evaluation
        ev = reader.sub("evaluation")
        requirements = None
        if ev.has("requirements"):
            rq = ev.sub("requirements")

            def stated(key):
                return rq.number(key, exclusive_minimum=0.0) if rq.raw(key, None) is not None else None

            requirements = Requirements(
                **{key: stated(key) for key in ("final_tracking_error", "max_attitude_error",
                                                "final_pregrasp_distance", "final_pregrasp_angle",
                                                "max_momentum_change_across_grasp", "max_detumble_time",
                                                "max_peak_grasp_force", "max_peak_grasp_torque",
                                                "settling_time_s", "final_force_error_n",
                                                "max_lyapunov_increase")},
                grasped=rq.boolean("grasped") if rq.raw("grasped", None) is not None else None,
            )
            rq.reject_unknown()
        evaluation = EvaluationConfig(
            end_effector_frame=ev.string("end_effector_frame"),
            approach_axis=tuple(_unit(ev, "approach_axis")),
            grapple_frame=ev.string("grapple_frame"),
            grapple_axis=tuple(_unit(ev, "grapple_axis")),
            standoff=ev.number("standoff", minimum=0.0),
            bus_subtree=ev.string("bus_subtree", "servicer"),
            requirements=requirements,
            detumble_rate=ev.number("detumble_rate", 1.0e-3, exclusive_minimum=0.0),
            force_motion=_force_motion_evaluation(ev.sub("force_motion")) if ev.has("force_motion") else None,
        )
        ev.reject_unknown()

    with blamed(file_overrides["model"]):
        model = read_model_config(model_reader)
    if trajectory is not None:                  # a typo in the scenario is its author's error, found at load
        unknown = [n for n in trajectory.joint_names if n not in model.arm_joints]
        if unknown:
            raise tr.error("joint_names", f"unknown arm joints {unknown} (the model's: {list(model.arm_joints)})")
    with blamed(file_overrides["nodes"]):
        nodes = read_nodes_config(nodes_reader)
    controller = None
    if controller_reader is not None:
        with blamed(file_overrides["controller"]):
            controller = read_controller_config(controller_reader)
        with blamed(file_overrides["nodes"] + file_overrides["controller"]):
            _check_state_rates(nodes, controller, nodes_reader, model.flexible)
    elif trajectory is not None or attitude is not None or capture is not None or gripper:
        raise reader.error("controller", "is null (no controller node), but the scenario has goals for one")
    if (capture is not None or gripper) and model.grasp is None:
        raise goals.error("capture" if capture is not None else "gripper", "the model has no gripper and no target "
                          "to grasp (model file: no `grasp` section)")
    if capture is not None and capture.approach == "cartesian" and model.flexible:
        # the resolved-rate law computes rigid joint torques: through elastic joints' springs and flexible links it
        # does not converge (on servicer_flexible the hand ends 0.10 m and 0.22 rad off the fixture)
        raise goals.sub("capture").error("approach", "cartesian needs a rigid arm, and the model has flexible links "
                                                     "or elastic joints: use approach: joint")
    if capture is not None and capture.seed_positions is not None and \
            len(capture.seed_positions) != len(model.arm_joints):
        raise goals.error("capture.seed_positions", f"must have {len(model.arm_joints)} entries (arm_joints order)")
    torque_profile = _torque_profile(reader, model) if reader.raw("torque_profile", None) is not None else None
    if torque_profile is not None and controller is not None:
        raise reader.error("torque_profile", "drives the arm open loop: set `controller: null` (two nodes would "
                                             "command the arm)")
    comparison = _comparison(reader.sub("comparison")) if reader.raw("comparison", None) is not None else None

    scenario = Scenario(
        name=reader.string("name"),
        description=reader.string("description", ""),
        source=reader.source,
        model=model,
        nodes=nodes,
        controller=controller,
        monitor_data=monitor_data,
        monitor_source=monitor_source,
        simulation=simulation,
        duration=duration,
        initial_state_data=initial,
        trajectory_goal=trajectory,
        attitude_goal=attitude,
        recording=recording,
        evaluation=evaluation,
        files={"model": model_path, "nodes": nodes_path, "controller": controller_path, "monitor": monitor_path},
        overrides=tuple(own) + tuple(o for name in OVERRIDABLE for o in file_overrides[name]),
        rviz=reader.file_path("rviz", DEFAULT_RVIZ),
        torque_profile=torque_profile,
        comparison=comparison,
        capture_goal=capture,
        gripper_goals=tuple(sorted(gripper, key=lambda g: g.at)),
    )
    reader.reject_unknown()
    return scenario


def _force_motion_evaluation(reader: ConfigReader) -> ForceMotionEvaluation:
    bands = reader.sub("bands")
    out = ForceMotionEvaluation(bands.number("joint", exclusive_minimum=0.0),
                                bands.number("base_attitude", exclusive_minimum=0.0),
                                bands.number("force", exclusive_minimum=0.0),
                                reader.number("thesis_settling_time_s", exclusive_minimum=0.0)
                                if reader.raw("thesis_settling_time_s", None) is not None else None)
    bands.reject_unknown()
    reader.reject_unknown()
    return out


def _capture_goal(goals: ConfigReader) -> CaptureGoal:
    from space_robot_control.capture_approach import CaptureTiming

    cp = goals.sub("capture")
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


def _check_state_rates(nodes: NodesConfig, controller: ControllerConfig, nodes_reader: ConfigReader,
                       flexible: bool = False) -> None:
    """The controller computes a command from a fresh state every period: joint_states, and the odometry of
    the bus its wheels turn, must come at least at the control rate (other bases, e.g. the free-drifting
    target, may come slower: the state assembler keeps their last pose and twist); so must flexible_modes on a
    flexible model (the motor angles it feeds back). The force_motion mode computes the contact rows between the
    hand and the target from the state: every odometry at the control rate, and grasp/wrench (its force loop)."""
    dynamics, rate = nodes.dynamics, controller.rate
    if dynamics.state_rate < rate:
        raise nodes_reader.error("dynamics.rates.state", f"{dynamics.state_rate:g} Hz is below the controller's "
                                 f"rate ({rate:g} Hz): every control period needs a new joint state")
    if flexible and dynamics.flexible_modes_rate < rate:
        raise nodes_reader.error("dynamics.rates.flexible_modes", f"{dynamics.flexible_modes_rate:g} Hz is below "
                                 f"the controller's rate ({rate:g} Hz): it feeds the motor angles back")
    bus = controller.bus_subtree
    if bus in dynamics.odometry and dynamics.odometry_rates.get(bus, dynamics.state_rate) < rate:
        raise nodes_reader.error(f"dynamics.rates.odometry.{bus}", f"{dynamics.odometry_rates[bus]:g} Hz is below "
                                 f"the controller's rate ({rate:g} Hz): the bus odometry is part of every "
                                 "control period's state")
    if "force_motion" in controller.modes:
        for subtree, topic_rate in dynamics.odometry_rates.items():
            if subtree in dynamics.odometry and topic_rate < rate:
                raise nodes_reader.error(f"dynamics.rates.odometry.{subtree}", f"{topic_rate:g} Hz is below the "
                                         f"controller's rate ({rate:g} Hz): the force_motion mode's contact rows "
                                         "need every body's state each control period")
        if dynamics.grasp_wrench_rate < rate:
            raise nodes_reader.error("dynamics.rates.grasp_wrench", f"{dynamics.grasp_wrench_rate:g} Hz is below the "
                                     f"controller's rate ({rate:g} Hz): the force_motion mode's force loop reads it")


def _torque_profile(reader: ConfigReader, model: ModelConfig) -> TorqueProfile:
    tp = reader.sub("torque_profile")
    sinusoids = {}
    sub = tp.sub("sinusoids")
    for name in list(sub.data):
        if name not in model.arm_joints:
            raise sub.error(name, f"not an arm joint of the model (have {list(model.arm_joints)})")
        entry = sub.sub(name)
        sinusoids[name] = Sinusoid(entry.number("amplitude"), entry.number("period", exclusive_minimum=0.0),
                                   entry.number("phase", 0.0), entry.number("offset", 0.0))
        entry.reject_unknown()
    if not sinusoids:
        raise tp.error("sinusoids", "must name at least one arm joint")
    start = tp.number("start", 0.0, minimum=0.0)
    stop = tp.raw("stop", None)
    if stop is not None:
        stop = tp.number("stop", exclusive_minimum=start)
    profile = TorqueProfile(tp.number("rate", 1000.0, exclusive_minimum=0.0), sinusoids, start, stop)
    tp.reject_unknown()
    return profile


def _comparison(reader: ConfigReader) -> ComparisonConfig:
    entries = reader.raw("overrides")
    if not isinstance(entries, dict) or not entries:
        raise reader.error("overrides", "must be a non-empty mapping KEY: VALUE (the --set syntax)")
    overrides = parse_overrides([f"{key}={_yaml_text(value)}" for key, value in entries.items()],
                                origin=f"{reader.source}: comparison.overrides")
    for o in overrides:
        if o.target == SCENARIO and o.key.split(".")[0] == "comparison":
            raise reader.error("overrides", "cannot change the comparison itself")
    config = ComparisonConfig(name=reader.string("name"), description=reader.string("description", ""),
                              overrides=tuple(overrides), end_effector_frame=reader.string("end_effector_frame"))
    reader.reject_unknown()
    return config


def _yaml_text(value) -> str:
    import yaml

    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def _unit(reader: ConfigReader, key: str) -> np.ndarray:
    vector = reader.vector(key, 3)
    norm = float(np.linalg.norm(vector))
    if norm < 1e-9:
        raise reader.error(key, "must be a non-zero vector")
    return vector / norm


DEFAULT_SCENARIO = "config/scenarios/servicer_pregrasp.yaml"
SCENARIO_FOLDER = "config/scenarios"


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


def parse_overrides(items, origin: str = "--set") -> list[Override]:
    """Overrides from KEY=VALUE strings (the syntax of `space-robot-sim --set` and of the ROS parameter
    `overrides`); VALUE is YAML. A KEY starting with `model.`, `nodes.`, `controller.` or `monitor.` sets an
    entry of that file (controller.controller.modes=[joint_tracking]); any other KEY sets an entry of the
    scenario itself (simulation.dt=0.0005, duration=3, model=my_model.yaml, initial_state.target.
    angular_velocity=[0, 0, 0.05]). Keys are dotted paths; list entries by index or by `name`
    (model.subtrees.servicer.xacro_args.wheel_layout=pyramid). `origin` names the source in error messages.
    """
    import yaml

    out = []
    for item in items:
        text = str(item)
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError("overrides", f"{text!r} is not KEY=VALUE (e.g. simulation.dt=0.0005 or "
                              f"FILE.KEY=VALUE with FILE one of {list(OVERRIDABLE)})")
        try:
            parsed = parse_yaml(value)
        except yaml.YAMLError as exc:
            raise ConfigError("overrides", f"{text!r}: the value is not YAML: {exc}") from exc
        target, dot, dotted = key.partition(".")
        if target in OVERRIDABLE and dot:
            out.append(Override(target, dotted, parsed, f"{origin} {text}"))
        else:
            out.append(Override(SCENARIO, key, parsed, f"{origin} {text}"))
    return out
