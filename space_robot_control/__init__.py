"""ROS-free control core of space_robot: trajectory following, computed torque on the free-floating
system, reaction-wheel attitude control, and the servicer controller that combines them.

Nothing here imports rclpy; the node glue imports from here, never the reverse. This package imports
from space_robot_dynamics (the model), never the reverse.
"""
