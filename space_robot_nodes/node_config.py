"""Deprecated path: moved to space_robot_scenario.node_config (space_robot_nodes.moved_modules)."""
from .moved_modules import forwarding

__getattr__ = forwarding(__name__, ("space_robot_scenario.node_config",))
