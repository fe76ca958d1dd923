"""ROS-free core of space_robot: model building (`model`) and simulation (`simulation`).

Nothing in this package imports rclpy; the node glue imports from here, never the reverse.
"""
