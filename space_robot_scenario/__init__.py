"""Scenarios and the configuration they gather: what to simulate, with which nodes, for how long, and what to
command, read and validated before anything runs. Between the cores (dynamics, control, monitoring), whose own
configuration readers it calls, and the glue (nodes, runtime, launch files, campaigns), which all take a Scenario.

- scenario.py: Scenario, load_scenario / read_scenario / find_scenario, one reader per section:
  goals.py, evaluation.py, torque_profile.py, comparison.py, recording.py;
- named_files.py: the model, nodes, controller and monitor files a scenario names;
- overrides.py: `--set KEY=VALUE` (and the ROS parameter `overrides`, a scenario's `overrides:`), parsed, routed,
  applied and blamed, in one module;
- consistency.py: checks across the files (rates, goals against the model);
- node_config.py: config/nodes.yaml, the one source of every topic name and node default;
- robot_descriptions.py: the robot_description of each model subtree (launch files and the runtime alike);
- capture_plan.py: a capture goal turned into the trajectory and gripper goals the scenario player sends.

ROS-free; the public names below are imported on first use (space_robot_dynamics.lazy_exports).
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    "Scenario": ".scenario", "load_scenario": ".scenario", "read_scenario": ".scenario",
    "find_scenario": ".scenario", "shipped_scenarios": ".scenario", "comparison_scenario": ".scenario",
    "DEFAULT_SCENARIO": ".scenario",
    "Override": ".overrides", "parse_overrides": ".overrides", "apply_overrides": ".overrides",
    "TrajectoryGoal": ".goals", "AttitudeGoal": ".goals", "GripperGoal": ".goals", "CartesianGoal": ".goals",
    "CaptureGoal": ".goals",
    "EvaluationConfig": ".evaluation", "Requirements": ".evaluation",
    "TorqueProfile": ".torque_profile", "ComparisonConfig": ".comparison", "RecordingConfig": ".recording",
    "NodesConfig": ".node_config", "load_nodes_config": ".node_config", "read_nodes_config": ".node_config",
    "RobotDescription": ".robot_descriptions",     # the function robot_descriptions: from its module
    "with_capture_plan": ".capture_plan",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
