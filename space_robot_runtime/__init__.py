"""Standalone runtime: the node cores in one process, lockstep simulated time, in-process topics, rosbag2
(MCAP) recording, summary and plots. No ROS installation needed; the messages are the ROS 2 Humble
definitions from the rosbags typestore.
"""
