"""ROS-free core of space_robot: model building (`model`) and simulation (`simulation`).

Nothing in this package imports rclpy; the node glue imports from here, never the reverse.
The public names below are importable from the package itself (`from space_robot_dynamics import Simulator`);
each is imported on first use, so `import space_robot_dynamics` alone loads neither Pinocchio nor SciPy.
docs/python_api.md shows them at work.
"""
from .lazy_exports import lazy_exports

_EXPORTS = {
    # errors: every bad input is one of these, naming the offending field
    "SpaceRobotError": ".errors", "ConfigError": ".errors", "CommandError": ".errors",
    "SimulationDivergedError": ".errors",
    # configuration files
    "ConfigReader": ".config_reader", "load_yaml_file": ".config_reader",
    "resolve": ".package_share", "share_directory": ".package_share", "find_in_share": ".package_share",
    # the model
    "ModelConfig": ".model.model_config", "SubtreeConfig": ".model.model_config",
    "load_model_config": ".model.model_config", "read_model_config": ".model.model_config",
    "SystemModel": ".model.system_model", "Subtree": ".model.system_model", "build_model": ".model.system_model",
    "SphericalAirBearing": ".model.air_bearing",
    # simulation
    "Simulator": ".simulation.simulator", "SimulationSettings": ".simulation.simulator",
    "read_simulation_settings": ".simulation.simulator", "Observation": ".simulation.simulator",
    "BaseState": ".simulation.simulator", "SimState": ".simulation.state",
    "ExternalWrench": ".simulation.external_wrenches",
    "MomentumState": ".simulation.system_momentum", "momentum_state": ".simulation.system_momentum",
    "momentum_about_point": ".simulation.system_momentum",
    "read_initial_state": ".simulation.initial_state", "initial_state_from": ".simulation.initial_state",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
