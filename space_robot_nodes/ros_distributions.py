"""What differs between the supported ROS 2 distributions, Humble (LTS to 2027-05) and Jazzy (LTS to 2029-05), and how
this package handles it: the one place for it, as space_robot_dynamics/pinocchio_compat.py is for Pinocchio 3 and 4.

- Message definitions. The node cores build and read messages from a rosbags typestore and exchange them as CDR
  bytes (ros/node_host.py): the bytes must be what the distribution's own types serialise to. Every message type the
  nodes publish or take has the same fields in Humble and Jazzy (Jazzy adds only constants, e.g. Marker.ARROW_STRIP;
  checked type by type, nested types included, by test/test_ros_distributions.py), so Humble's definitions serve
  both: MESSAGE_DEFINITIONS.
- Bags. rosbag2 metadata version 9 (Jazzy's) writes `offered_qos_profiles` as a YAML list, which Humble's rosbag2
  cannot read; version 8 keeps the string form that Humble reads and Jazzy still reads (rosbag2_storage's
  TopicMetadata decode: versions 4-8 as a string, 9 as a list). The standalone runtime writes version 8
  (BAG_METADATA_VERSION), so one bag plays under both (`ros2 bag info` and `ros2 bag play` on each: test/ros2).
  A bag that `ros2 bag record` writes under Jazzy is version 9: it plays on Jazzy only; space-robot-plot and the
  identification tool read both (rosbags).
- rclpy, launch, launch_ros, robot_state_publisher, tf2: nothing this package uses differs. Every parameter is
  declared with a default, or a default and a descriptor with its type (Jazzy's rclpy deprecates a declaration by
  name alone and rejects a default of None without a type), the
  host's wait set and raw takes (rclpy's WaitSet, Subscription.take_message) keep their Humble signatures in Jazzy,
  and the whole real-ROS suite (test/ros2) runs unchanged under both (.ci/run).
"""
from __future__ import annotations

SUPPORTED = ("humble", "jazzy")
# rosbags' typestore whose definitions the node cores use (wire-identical under every SUPPORTED distribution)
MESSAGE_DEFINITIONS = "ros2_humble"
# rosbag2 metadata version the standalone runtime writes: Humble reads up to 8, Jazzy up to 9
BAG_METADATA_VERSION = 8
