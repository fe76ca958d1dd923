"""`ros2 run space_robot holonomy_monitor_node`: the online holonomy monitor (space_robot_nodes.monitor_core).

Parameters: scenario, overrides (node_host); the monitor's settings come from the file the scenario names
(config/monitor.yaml). Publishes diagnostics and holonomy/status.
"""
from __future__ import annotations

import sys


def build(node, types):
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_nodes.monitor_core import build_monitor

    from .node_host import scenario_from_parameters

    scenario = scenario_from_parameters(node)
    return build_monitor(types, SystemModel(scenario.model), scenario), None


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("holonomy_monitor", build, args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
