"""`ros2 run space_robot estimators_node`: the model's estimators between the sensors' topics and the estimated
state (space_robot_nodes.estimators_core; docs/sensing.md).

Parameters: scenario, overrides (node_host); the estimators are the `estimators` section of the scenario's model
file, the topics the `estimators` section of its nodes file (config/nodes.yaml). Run it with use_sim_time:=true
beside the sensors node; its updates follow the encoders' stamps (1 kHz), as the controller's follow its state.
A scenario whose model declares no estimator or no sensor is refused (exit 2): the node would have nothing to do.
"""
from __future__ import annotations

import sys


def build(node, types):
    from space_robot_dynamics.errors import ConfigError
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_nodes.estimators_core import EstimatorsCore

    from .node_host import scenario_from_parameters

    scenario = scenario_from_parameters(node)
    if scenario.estimators is None or not scenario.sensors.sensors:
        raise ConfigError("estimators", "the scenario's model declares no estimators or no sensors (docs/sensing.md)"
                                        ": nothing to estimate", scenario.model.source)
    system = SystemModel(scenario.model)
    q0, v0 = scenario.initial_state(system)
    return EstimatorsCore(types, system, scenario.sensors, scenario.estimators, scenario.nodes.estimators, q0,
                          v0), None


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("estimators", build, args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
