"""`ros2 run space_robot dynamics_node`: the simulation as a ROS 2 node (see space_robot_nodes.dynamics_core).

Parameters: scenario, overrides (node_host), real_time_factor (simulated seconds per wall second, 1.0).
The node paces its lockstep simulated time on a steady wall clock and publishes /clock; run it without
use_sim_time (it is the clock). The other nodes run with use_sim_time:=true.
"""
from __future__ import annotations

import sys


def build(node, types):
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_dynamics.simulation.simulator import Simulator
    from space_robot_nodes.dynamics_core import DynamicsCore

    from .node_host import scenario_from_parameters

    scenario = scenario_from_parameters(node)
    system = SystemModel(scenario.model)
    q0, v0 = scenario.initial_state(system)
    simulator = Simulator(system, scenario.simulation, q0, v0, orbit=scenario.orbit)
    core = DynamicsCore(types, simulator, scenario.nodes.dynamics, scenario.faults.actuator_faults())
    return core, scenario.simulation.dt


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("dynamics", build, mode="paced", args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
