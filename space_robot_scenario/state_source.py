"""A scenario's `state_source`: what the controller and the monitor read, the truth or the estimates.

    state_source:
      controller: estimates          # truth (default) | estimates
      monitor: truth                 # truth (default) | estimates

truth: the dynamics node's exact state (joint_states, the odometry of each base), as before sensing existed: the
outputs are those of a scenario without this section, bit for bit. estimates: the estimators node's
(config/nodes.yaml `estimators.topics`: estimate/joint_states, estimate/base/odom, estimate/target/odom), which
needs the model file's `sensors` and `estimators` sections to give every part of the state the reader takes:
the bus attitude (gyro, star tracker, attitude filter), the arm (encoders on every arm joint, joints tracker),
the wheels (tachometers on every wheel), and on a model with a target, the target (pose sensor, target filter).
The switch is a remapping of the reader's state topics, made here at load, so the standalone runtime and the ROS 2
nodes (which read the same scenario) switch alike.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_estimation.estimators_config import EstimatorsConfig
from space_robot_sensing.sensor_suite import SensorSuiteConfig

from .node_config import NodesConfig

SOURCES = ("truth", "estimates")
READERS = ("controller", "monitor")


@dataclass(frozen=True)
class StateSource:
    controller: str = "truth"
    monitor: str = "truth"

    @property
    def any_estimates(self) -> bool:
        return "estimates" in (self.controller, self.monitor)


def read_state_source(reader: ConfigReader) -> StateSource:
    sub = reader.sub("state_source", {})
    source = StateSource(**{name: sub.string(name, "truth", choices=SOURCES) for name in READERS})
    sub.reject_unknown()
    return source


def missing_for_estimates(sensors: SensorSuiteConfig, estimators: EstimatorsConfig | None, arm_joints, wheel_joints,
                          has_target: bool) -> list[str]:
    """What the model file lacks for the estimates to be a whole state ([] when nothing)."""
    if estimators is None:
        return ["an estimators section"]
    have = sensors.sensors
    missing = [f"sensors.{name}" for name in ("gyro", "star_tracker") if name not in have]
    missing += [] if estimators.attitude is not None else ["estimators.attitude"]
    if arm_joints:
        encoders = have.get("joint_encoders")
        if encoders is None or (encoders.joints is not None and set(encoders.joints) != set(arm_joints)):
            missing.append("sensors.joint_encoders on every arm joint")
        if estimators.joint_acceleration_noise is None:
            missing.append("estimators.joints")
    if wheel_joints:
        tachometers = have.get("wheel_tachometers")
        if tachometers is None or (tachometers.joints is not None and set(tachometers.joints) != set(wheel_joints)):
            missing.append("sensors.wheel_tachometers on every wheel")
    if has_target:
        missing += [] if "target_pose" in have else ["sensors.target_pose"]
        missing += [] if estimators.target is not None else ["estimators.target"]
    return missing


def check_state_source(source: StateSource, sensors: SensorSuiteConfig, estimators: EstimatorsConfig | None,
                       model, scenario_source: str | None) -> None:
    """ConfigError naming state_source.<reader> when the model cannot give that reader an estimated state."""
    if not source.any_estimates:
        return
    reader = "controller" if source.controller == "estimates" else "monitor"
    if model.flexible:
        raise ConfigError(f"state_source.{reader}", "estimates: the estimators do not estimate a flexible model's "
                          "modal coordinates; use truth", scenario_source)
    if model.base_thrusters is not None or any(g != 0.0 for g in model.gravity):
        raise ConfigError(f"state_source.{reader}", "estimates: the bus position comes from the conserved momentum "
                          "(space_robot_estimation/bus_translation.py), which base thrusters or gravity break; use "
                          "truth", scenario_source)
    missing = missing_for_estimates(sensors, estimators, model.arm_joints, model.wheel_joints,
                                    len(model.subtrees) > 1)
    if missing:
        raise ConfigError(f"state_source.{reader}", f"estimates: the model file {model.source or ''} lacks "
                          f"{', '.join(missing)} (docs/sensing.md)", scenario_source)


def with_state_source(nodes: NodesConfig, source: StateSource) -> NodesConfig:
    """The nodes' configuration with the controller's and the monitor's state topics remapped to the estimates
    where `source` says so (unchanged otherwise)."""
    estimates = nodes.estimators
    controller, monitor = nodes.controller, nodes.monitor
    if source.controller == "estimates":
        controller = replace(controller, joint_states=estimates.joint_states, odometry=dict(estimates.odometry))
    if source.monitor == "estimates":
        monitor = replace(monitor, joint_states=estimates.joint_states, odometry=dict(estimates.odometry))
    return replace(nodes, controller=controller, monitor=monitor)
