"""Simulation: state, actuators, integrators and the stepping loop (ROS-free)."""
