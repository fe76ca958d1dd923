"""ROS-free node cores: dynamics, controller, holonomy monitor and the Sawyer JointCommand adapter.

Each core takes and produces ROS message objects through a `MessageTypes` provider, so the same class runs
inside an rclpy node (`space_robot_nodes.ros`) and in the standalone runtime (`space_robot_runtime`), where
the messages come from the rosbags typestore. The public names below are importable from the package itself,
each imported on first use (space_robot_dynamics.lazy_exports); none of them imports rclpy.

Scenarios and the node configuration moved to space_robot_scenario; their old names here still work for one
release, with a DeprecationWarning.
"""
import warnings

from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    # message providers and the lockstep graph of the standalone runtime
    "MessageTypes": ".message_types", "RosbagsMessageTypes": ".message_types", "RosMessageTypes": ".message_types",
    "Graph": ".lockstep_graph", "NodeCore": ".node_core",
    # node cores
    "DynamicsCore": ".dynamics_core", "ControllerCore": ".controller_core", "MonitorCore": ".monitor_core",
    "build_monitor": ".monitor_core", "ScenarioPlayerCore": ".scenario_player_core",
    "SawyerAdapterCore": ".sawyer_adapter_core", "StateAssembler": ".robot_state",
}
# moved to space_robot_scenario (space_robot_nodes.moved_modules)
_MOVED = ("Scenario", "load_scenario", "read_scenario", "find_scenario", "parse_overrides", "DEFAULT_SCENARIO",
          "TrajectoryGoal", "AttitudeGoal", "NodesConfig", "load_nodes_config", "read_nodes_config")
__all__ = sorted(_EXPORTS)
_exported, __dir__ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> object:
    if name in _MOVED:
        import space_robot_scenario

        from .moved_modules import REMOVED_IN

        warnings.warn(f"space_robot_nodes.{name} moved to space_robot_scenario.{name}: import it from there (the old "
                      f"name will be removed in {REMOVED_IN})", DeprecationWarning, stacklevel=2)
        return getattr(space_robot_scenario, name)
    return _exported(name)
