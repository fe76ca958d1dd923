"""The controller (and optionally the holonomy monitor) on the real Sawyer arm through the Intera SDK.

    ros2 launch space_robot sawyer.launch.py [scenario:=PATH] [joint_states:=/robot/joint_states]
                                             [monitor:=false] [use_sim_time:=false]

Joint states come from /robot/joint_states (right_j0..right_j6; head_pan and others are ignored). The
sawyer_command_adapter republishes the arm effort commands as intera_core_msgs/JointCommand in TORQUE_MODE
on /robot/limb/right/joint_command at the control rate and keeps /robot/limb/right/joint_command_timeout
fed. Intera is ROS 1: run ros1_bridge (with intera_core_msgs built for both ROS 1 and ROS 2) between them.
Gravity: the default scenario keeps Intera's gravity compensation on and gives the controller a zero-g
model (see config/scenarios/sawyer_lab.yaml). The holonomy monitor needs a free-floating model, which the
bench arm is not: monitor:=true only with a scenario whose model floats.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = "space_robot"


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    scenario = LaunchConfiguration("scenario")
    joint_states = LaunchConfiguration("joint_states")
    common = [{"scenario": scenario, "use_sim_time": LaunchConfiguration("use_sim_time")}]
    remap = [("joint_states", joint_states)]
    # the monitor reads the simulation's throttled state topic (config/nodes.yaml); on the arm, the arm's state
    monitor_remap = [("joint_states_throttle", joint_states)]
    return LaunchDescription([
        DeclareLaunchArgument("scenario", default_value=PathJoinSubstitution(
            [share, "config", "scenarios", "sawyer_lab.yaml"]), description="scenario YAML for the real arm"),
        DeclareLaunchArgument("joint_states", default_value="/robot/joint_states",
                              description="sensor_msgs/JointState topic of the arm"),
        DeclareLaunchArgument("monitor", default_value="false", description="start the holonomy monitor"),
        DeclareLaunchArgument("use_sim_time", default_value="false"),
        Node(package=PACKAGE, executable="controller_node", name="controller", output="screen",
             parameters=common, remappings=remap),
        Node(package=PACKAGE, executable="sawyer_command_adapter", name="sawyer_command_adapter", output="screen",
             parameters=common),
        Node(package=PACKAGE, executable="holonomy_monitor_node", name="holonomy_monitor", output="screen",
             parameters=common, remappings=monitor_remap, condition=IfCondition(LaunchConfiguration("monitor"))),
    ])
