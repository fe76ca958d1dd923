"""ROS-free node cores: dynamics, controller, holonomy monitor and the Sawyer JointCommand adapter.

Each core takes and produces ROS message objects through a `MessageTypes` provider, so the same class runs
inside an rclpy node (`space_robot_nodes.ros`) and in the standalone runtime (`space_robot_runtime`), where
the messages come from the rosbags typestore. The public names below are importable from the package itself,
each imported on first use (space_robot_dynamics.lazy_exports); none of them imports rclpy.
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    # scenarios
    "Scenario": ".scenario", "load_scenario": ".scenario", "read_scenario": ".scenario",
    "find_scenario": ".scenario", "parse_overrides": ".scenario", "DEFAULT_SCENARIO": ".scenario",
    "TrajectoryGoal": ".scenario", "AttitudeGoal": ".scenario",
    # node configuration
    "NodesConfig": ".node_config", "load_nodes_config": ".node_config", "read_nodes_config": ".node_config",
    # message providers and the lockstep graph of the standalone runtime
    "MessageTypes": ".message_types", "RosbagsMessageTypes": ".message_types", "RosMessageTypes": ".message_types",
    "Graph": ".lockstep_graph", "NodeCore": ".node_core",
    # node cores
    "DynamicsCore": ".dynamics_core", "ControllerCore": ".controller_core", "MonitorCore": ".monitor_core",
    "build_monitor": ".monitor_core", "ScenarioPlayerCore": ".scenario_player_core",
    "SawyerAdapterCore": ".sawyer_adapter_core", "StateAssembler": ".robot_state",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
