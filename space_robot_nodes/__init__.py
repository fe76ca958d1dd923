"""ROS-free node cores: dynamics, controller, holonomy monitor and the Sawyer JointCommand adapter.

Each core takes and produces ROS message objects through a `MessageTypes` provider, so the same class runs
inside an rclpy node (`space_robot_nodes.ros`) and in the standalone runtime (`space_robot_runtime`), where
the messages come from the rosbags typestore.
"""
