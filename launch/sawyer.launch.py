"""The controller (and optionally the holonomy monitor) on the real Sawyer arm through the Intera SDK, and RViz.

    ros2 launch space_robot sawyer.launch.py [scenario:=PATH] [joint_states:=/robot/joint_states]
                                             [monitor:=false] [rviz:=false] [viewers:=<rviz>]
                                             [use_sim_time:=false]

Joint states come from /robot/joint_states (right_j0..right_j6; head_pan and others are ignored). The
sawyer_command_adapter republishes the arm effort commands as intera_core_msgs/JointCommand in TORQUE_MODE
on /robot/limb/right/joint_command at the control rate and keeps /robot/limb/right/joint_command_timeout
fed. Intera is ROS 1: run ros1_bridge (with intera_core_msgs built for both ROS 1 and ROS 2) between them.
Gravity: the default scenario keeps Intera's gravity compensation on and gives the controller a zero-g
model (see config/scenarios/sawyer_lab.yaml). The holonomy monitor needs a free-floating model, which the
bench arm is not: monitor:=true only with a scenario whose model floats.

rviz:=true shows the arm as it is: a robot_state_publisher with the scenario's Sawyer description on the arm's
joint states, the arm's mount in the world frame (static_transform_publisher, as the simulation has it), the
visualization node (applied and commanded efforts, the goal and end-effector paths, every
node's diagnostic level - the adapter's command timeout among them) and RViz with the scenario's configuration
(rviz/sawyer.rviz, fixed frame `base`). viewers:=true starts the first two without RViz (for an RViz elsewhere,
or a headless check of what the configuration needs).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = "space_robot"


def viewer_nodes(context, *_args, **_kwargs):
    """With viewers:=true (the default with rviz:=true): robot_state_publisher (the scenario's URDF) and the
    visualization node, both on the arm's joint states; with rviz:=true also RViz (the scenario's configuration)."""
    def flag(name: str) -> bool:
        return LaunchConfiguration(name).perform(context).lower() in ("true", "1")
    viewers = LaunchConfiguration("viewers").perform(context)
    with_rviz = flag("rviz")
    if not (flag("viewers") if viewers else with_rviz):
        return []
    from space_robot_scenario import load_scenario
    from space_robot_scenario.robot_descriptions import robot_descriptions

    path = LaunchConfiguration("scenario").perform(context)
    joint_states = LaunchConfiguration("joint_states").perform(context)
    scenario = load_scenario(path)
    sim_time = {"use_sim_time": LaunchConfiguration("use_sim_time").perform(context).lower() in ("true", "1")}
    nodes = [Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                  name=f"{d.namespace.replace('/', '_')}_robot_state_publisher" if d.namespace else
                  "robot_state_publisher",
                  parameters=[{"robot_description": ParameterValue(d.urdf, value_type=str),
                               "frame_prefix": d.frame_prefix}, sim_time],
                  remappings=[("joint_states", joint_states)] + ([("robot_description", d.topic)]
                                                                 if d.namespace else []))
             for d in robot_descriptions(scenario.model)]
    # the arm's mount in the world, as the simulation publishes it: the visualization draws in the world frame
    world = scenario.nodes.dynamics.world_frame
    for subtree in scenario.model.subtrees:
        if subtree.base_joint == "fixed" and not subtree.mount_frame:
            (x, y, z), (roll, pitch, yaw) = subtree.mount_xyz, subtree.mount_rpy
            nodes.append(Node(package="tf2_ros", executable="static_transform_publisher", output="screen",
                              name=f"{subtree.name}_mount",
                              arguments=["--x", str(x), "--y", str(y), "--z", str(z), "--roll", str(roll),
                                         "--pitch", str(pitch), "--yaw", str(yaw), "--frame-id", world,
                                         "--child-frame-id", subtree.frame_prefix + subtree.base_link]))
    # the visualization node takes the simulation's throttled state topic: here, the arm's own (~100 Hz)
    nodes.append(Node(package=PACKAGE, executable="visualization_node", name="visualization", output="screen",
                      parameters=[{"scenario": path}, sim_time],
                      remappings=[(scenario.nodes.dynamics.throttled_joint_states, joint_states)]))
    if with_rviz:
        nodes.append(Node(package="rviz2", executable="rviz2", name="rviz2", output="screen",
                          arguments=["-d", str(scenario.rviz)], parameters=[sim_time]))
    return nodes


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
        DeclareLaunchArgument("rviz", default_value="false",
                              description="show the arm, its efforts and the nodes' states in RViz"),
        DeclareLaunchArgument("viewers", default_value="",
                              description="robot_state_publisher and the visualization node (default: as rviz)"),
        DeclareLaunchArgument("use_sim_time", default_value="false"),
        Node(package=PACKAGE, executable="controller_node", name="controller", output="screen",
             parameters=common, remappings=remap),
        Node(package=PACKAGE, executable="sawyer_command_adapter", name="sawyer_command_adapter", output="screen",
             parameters=common),
        Node(package=PACKAGE, executable="holonomy_monitor_node", name="holonomy_monitor", output="screen",
             parameters=common, remappings=monitor_remap, condition=IfCondition(LaunchConfiguration("monitor"))),
        OpaqueFunction(function=viewer_nodes),
    ])
