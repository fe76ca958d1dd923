"""The `elastic_joint` problem: seed 003's identification on the simulator's elastic-joint model
(elastic_joint_simulation.py), matched to recorded signals (parameterized_simulation.py).

problem:
  kind: elastic_joint
  model: config/models/airbearing_testbed_flexible_joint.yaml   # a model with elastic joints (the nominal values)
  trajectory: {duration: S, start: {JOINT: rad}, acceleration: {JOINT: rad/s^2}}   # joint_space_trajectory.py
  prescribed: [joint_2, joint_3]       # arm joints that follow the trajectory exactly (default: none)
  integration: {max_step: 0.1, step_times_rate: 0.2}                             # elastic_joint_simulation.py
  signals: {OUTPUT: {data: SIGNAL, weight: W}}   # outputs `<joint>.link_angle`, `<joint>.motor_angle` (rad)

Parameters `<joint>.motor_inertia` (reflected, kg m^2), `.stiffness` (N m/rad), `.damping` (N m s/rad),
`.spring_offset` (initial deflection lambda(0), rad) per elastic joint. A recording made by space-robot-sim names
the link angle `joint_states.position.<joint>` and the motor angle `flexible_modes.position.<joint>/motor`
(docs/flexibility.md sec. 7). The truth of synthetic data comes from `truth` (this problem's own simulation), not
from a scenario: a scenario's run has its controller's actuation, not the test's (docs/identification.md).
"""
from __future__ import annotations

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import build_model

from .elastic_joint_simulation import ElasticJointSimulation, IntegrationSettings
from .joint_space_trajectory import read_trajectory
from .parameterized_simulation import SimulationProblemSpec, read_matched_signals


def read_elastic_joint_problem(reader: ConfigReader, kind: str) -> SimulationProblemSpec:
    path = reader.file_path("model")
    try:
        system = build_model(path)
    except ConfigError as exc:
        raise reader.error("model", f"{path}: {exc}") from None
    arm = tuple(system.arm_joints)
    if not arm:
        raise reader.error("model", f"{path} names no arm_joints")
    trajectory = read_trajectory(reader.sub("trajectory"), arm)
    prescribed = tuple(reader.string_list("prescribed", []))
    defaults = IntegrationSettings()
    integration_reader = reader.sub("integration", {})
    integration = IntegrationSettings(
        max_step=integration_reader.number("max_step", defaults.max_step, exclusive_minimum=0.0, maximum=1.0),
        step_times_rate=integration_reader.number("step_times_rate", defaults.step_times_rate,
                                                  exclusive_minimum=0.0, maximum=1.0))
    integration_reader.reject_unknown()
    try:
        simulation = ElasticJointSimulation(system, trajectory, prescribed, integration, reader.path)
    except ConfigError as exc:
        raise ConfigError(exc.field, f"{exc.problem} ({path})", reader.source) from None
    matched = read_matched_signals(reader, simulation.outputs())
    reader.reject_unknown()
    return SimulationProblemSpec(kind, simulation, matched, reader.path, reader.source)
