"""Deprecated path: moved to space_robot_scenario.scenario (space_robot_nodes.moved_modules)."""
from .moved_modules import forwarding

__getattr__ = forwarding(__name__, ("space_robot_scenario.scenario", "space_robot_scenario.goals",
                                    "space_robot_scenario.evaluation", "space_robot_scenario.torque_profile",
                                    "space_robot_scenario.comparison", "space_robot_scenario.recording",
                                    "space_robot_scenario.overrides"))
