"""rclpy glue: entry points that host the ROS-free node cores in ROS 2 (Humble or newer).

Every module here imports rclpy only inside its functions, so the package (and `--help`-less imports such as
the tests') works on a machine without ROS; `main()` then says that rclpy is missing and returns 1.
"""
