"""`ros2 run space_robot visualization_node`: what RViz shows besides the robots - momentum arrows, attitude against
its setpoint, reaction-wheel discs, the goal and the end-effector paths, efforts, every node's diagnostic level
(space_robot_nodes.visualization_core), at display rates.

Parameters: scenario, overrides (node_host); its settings are the `visualization` section of the nodes file the
scenario names (config/nodes.yaml). Run it with use_sim_time:=true beside the simulation.
"""
from __future__ import annotations

import sys


def build(node, types):
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_nodes.visualization_core import build_visualization

    from .node_host import scenario_from_parameters

    scenario = scenario_from_parameters(node)
    return build_visualization(types, SystemModel(scenario.model), scenario), None


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("visualization", build, args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
