"""Simulation bring-up: dynamics, controller, holonomy monitor, scenario goals, two robot_state_publishers, RViz.

    ros2 launch space_robot simulation.launch.py [scenario:=PATH] [rviz:=true|false] [use_sim_time:=true|false]

The dynamics node paces simulated time on the wall clock and publishes /clock; every other node runs on
simulated time (use_sim_time). The target's robot_state_publisher runs in namespace `target` with
frame_prefix `target/`, matched by the RViz RobotModel's TF Prefix `target`.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = "space_robot"


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    scenario = LaunchConfiguration("scenario")
    use_sim_time = LaunchConfiguration("use_sim_time")
    rviz = LaunchConfiguration("rviz")

    def description(urdf: str):
        # xacro-expanded URDF as a string parameter (without value_type launch_ros would try to parse it as YAML)
        return ParameterValue(Command(["xacro ", PathJoinSubstitution([share, "urdf", urdf])]), value_type=str)

    sim_time = {"use_sim_time": use_sim_time}
    return LaunchDescription([
        DeclareLaunchArgument("scenario", default_value=PathJoinSubstitution(
            [share, "config", "scenarios", "servicer_pregrasp.yaml"]), description="scenario YAML file"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("use_sim_time", default_value="true",
                              description="run the controller, monitor and viewers on the simulation's /clock"),
        Node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
             output="screen", parameters=[{"robot_description": description("servicer.urdf.xacro")}, sim_time]),
        Node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
             namespace="target", output="screen",
             parameters=[{"robot_description": description("target.urdf.xacro"), "frame_prefix": "target/"},
                         sim_time]),
        # The clock source: never on simulated time itself.
        Node(package=PACKAGE, executable="dynamics_node", name="dynamics", output="screen",
             parameters=[{"scenario": scenario}]),
        Node(package=PACKAGE, executable="controller_node", name="controller", output="screen",
             parameters=[{"scenario": scenario}, sim_time]),
        Node(package=PACKAGE, executable="holonomy_monitor_node", name="holonomy_monitor", output="screen",
             parameters=[{"scenario": scenario}, sim_time]),
        Node(package=PACKAGE, executable="scenario_player", name="scenario_player", output="screen",
             parameters=[{"scenario": scenario}, sim_time]),
        Node(package="rviz2", executable="rviz2", name="rviz2", output="screen", condition=IfCondition(rviz),
             arguments=["-d", PathJoinSubstitution([share, "rviz", "space_robot.rviz"])], parameters=[sim_time]),
    ])
