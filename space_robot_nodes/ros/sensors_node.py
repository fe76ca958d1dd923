"""`ros2 run space_robot sensors_node`: the model's sensors between the simulator's truth and the measured topics
(space_robot_nodes.sensors_core; docs/sensing.md).

Parameters: scenario, overrides (node_host); the sensors are the `sensors` section of the scenario's model file,
the topics the `sensors` section of its nodes file (config/nodes.yaml). Run it with use_sim_time:=true beside the
dynamics node. A scenario whose model declares no sensor is refused (exit 2): the node would have nothing to do.
"""
from __future__ import annotations

import sys


def build(node, types):
    from space_robot_dynamics.errors import ConfigError
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_nodes.sensors_core import SensorsCore

    from .node_host import scenario_from_parameters

    scenario = scenario_from_parameters(node)
    if not scenario.sensors.sensors:
        raise ConfigError("sensors", "the scenario's model declares no sensor (docs/sensing.md): nothing to "
                                     "measure", scenario.model.source)
    return SensorsCore(types, SystemModel(scenario.model), scenario.sensors, scenario.nodes.sensors,
                       scenario.model.source, scenario.faults), None


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("sensors", build, args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
