"""Simulation bring-up: dynamics, controller, holonomy monitor, sensors and estimators (a model that declares them),
scenario goals, robot_state_publishers, the visualization node and RViz.

    ros2 launch space_robot simulation.launch.py [scenario:=PATH] [rviz:=true|false] [use_sim_time:=true|false]
                                                 [start_delay:=S]

The dynamics node paces simulated time on the wall clock and publishes /clock; every other node runs on
simulated time (use_sim_time). One robot_state_publisher per subtree of the scenario's model (the URDFs the
dynamics node simulates, space_robot_scenario.robot_descriptions): the servicer's on robot_description, the
target's with frame_prefix `target/` on target/robot_description, matched by the RViz RobotModel's TF Prefix
`target`. Every node stays in the launch's namespace, so joint_states and the rest resolve alike for all.
RViz opens the scenario's own configuration (its `rviz` entry: rviz/space_robot.rviz for the servicer and
target, rviz/sawyer.rviz for a bench arm), so every display has its topic. With RViz, simulated time starts
`start_delay` s (default 10) after the controller is connected: software-rendered RViz needs ~15 s to show the
robots, and the default mission is over in 7 s.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = "space_robot"
RVIZ_START_DELAY = 10.0      # s


def scenario_nodes(context, *_args, **_kwargs):
    """The nodes that depend on what the scenario holds, read when the launch runs (the scenario argument is
    known only then): a robot_state_publisher per model subtree, the controller unless the scenario drives the
    arm open loop (controller: null, a torque profile the scenario player plays), the holonomy monitor if
    the scenario has one (a fixed-base model has none), and the sensors node if its model declares sensors (and the
    estimators node if it declares estimators too)."""
    from space_robot_scenario import load_scenario
    from space_robot_scenario.robot_descriptions import DESCRIPTION_TOPIC, robot_descriptions

    path = LaunchConfiguration("scenario").perform(context)
    scenario = load_scenario(path)
    sim_time = {"use_sim_time": LaunchConfiguration("use_sim_time").perform(context).lower() in ("true", "1")}
    nodes = []
    for description in robot_descriptions(scenario.model):
        prefixed = bool(description.namespace)
        nodes.append(Node(
            package="robot_state_publisher", executable="robot_state_publisher", output="screen",
            name=f"{description.namespace.replace('/', '_')}_robot_state_publisher" if prefixed
            else "robot_state_publisher",
            # a string parameter (without value_type launch_ros would try to parse the URDF as YAML)
            # ignore_timestamp: Humble's robot_state_publisher sends a joint state only once its stamp is
            # 1/publish_frequency past the last one sent, counting from 0, so the state at t = 0 (all of it while
            # start_delay holds simulated time, ~10 s under RViz) would never reach tf; it now sends every
            # throttled state (50 Hz) instead of 20 Hz.
            parameters=[{"robot_description": ParameterValue(description.urdf, value_type=str),
                         "frame_prefix": description.frame_prefix, "ignore_timestamp": True}, sim_time],
            # the throttled joint states: robot_state_publisher sends /tf at 20 Hz (publish_frequency) however
            # fast joint_states comes, so the 1 kHz topic would cost it and the dynamics node for nothing
            remappings=[("joint_states", scenario.nodes.dynamics.throttled_joint_states)]
            + ([(DESCRIPTION_TOPIC, description.topic)] if prefixed else [])))
    if scenario.controller is not None:      # (a scenario with an open-loop torque profile has none)
        nodes.append(Node(package=PACKAGE, executable="controller_node", name="controller", output="screen",
                          parameters=[{"scenario": path}, sim_time]))
    if scenario.monitor_data is not None:
        nodes.append(Node(package=PACKAGE, executable="holonomy_monitor_node", name="holonomy_monitor",
                          output="screen", parameters=[{"scenario": path}, sim_time]))
    if scenario.sensors.sensors:             # the model carries sensors (docs/sensing.md)
        nodes.append(Node(package=PACKAGE, executable="sensors_node", name="sensors", output="screen",
                          parameters=[{"scenario": path}, sim_time]))
        if scenario.estimators is not None:      # and estimators: what state_source: estimates reads
            nodes.append(Node(package=PACKAGE, executable="estimators_node", name="estimators", output="screen",
                              parameters=[{"scenario": path}, sim_time]))
    with_rviz = LaunchConfiguration("rviz").perform(context).lower() in ("true", "1")
    if with_rviz:
        nodes.append(Node(package="rviz2", executable="rviz2", name="rviz2", output="screen",
                          arguments=["-d", str(scenario.rviz)], parameters=[sim_time]))
    start_delay = LaunchConfiguration("start_delay").perform(context)
    delay = float(start_delay) if start_delay else RVIZ_START_DELAY if with_rviz else 0.0
    # The clock source: never on simulated time itself. Simulated time starts once the controller's command
    # publishers are there (at most 30 s of waiting), so the run starts at t = 0 with its controller.
    nodes.append(Node(package=PACKAGE, executable="dynamics_node", name="dynamics", output="screen",
                      parameters=[{"scenario": path, "wait_for_commands": 30.0, "start_delay": delay}]))
    return nodes


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    scenario = LaunchConfiguration("scenario")
    use_sim_time = LaunchConfiguration("use_sim_time")
    sim_time = {"use_sim_time": use_sim_time}
    return LaunchDescription([
        DeclareLaunchArgument("scenario", default_value=PathJoinSubstitution(
            [share, "config", "scenarios", "servicer_pregrasp.yaml"]), description="scenario YAML file"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("use_sim_time", default_value="true",
                              description="run the controller, monitor and viewers on the simulation's /clock"),
        DeclareLaunchArgument("start_delay", default_value="",
                              description=f"s of wall time at t = 0 before the simulation runs (default "
                                          f"{RVIZ_START_DELAY:g} with RViz, 0 without)"),
        OpaqueFunction(function=scenario_nodes),
        Node(package=PACKAGE, executable="scenario_player", name="scenario_player", output="screen",
             parameters=[{"scenario": scenario}, sim_time]),
        Node(package=PACKAGE, executable="visualization_node", name="visualization", output="screen",
             parameters=[{"scenario": scenario}, sim_time]),
    ])
