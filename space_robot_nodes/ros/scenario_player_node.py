"""`ros2 run space_robot scenario_player`: publishes a scenario's goals (trajectory, attitude setpoint, gripper
commands; a capture's planned approach, capture_plan.py) at their simulated times, and its open-loop torque profile
if it has one, as the standalone runtime does (space_robot_nodes.scenario_player_core).

Parameters: scenario, overrides (node_host). Run it with use_sim_time:=true."""
from __future__ import annotations

import sys

CHECK_PERIOD = 0.01   # s between checks for due goals


def build(node, types):
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_nodes.scenario_player_core import ScenarioPlayerCore
    from space_robot_scenario.capture_plan import with_capture_plan

    from .node_host import scenario_from_parameters

    scenario = scenario_from_parameters(node)
    if scenario.capture_goal is not None:        # the approach is planned on the model, from the initial state
        scenario = with_capture_plan(scenario, SystemModel(scenario.model))
    return ScenarioPlayerCore(types, scenario.trajectory_goal, scenario.attitude_goal, scenario.nodes.controller,
                              CHECK_PERIOD, scenario.torque_profile, scenario.model.arm_joints,
                              scenario.gripper_goals, scenario.cartesian_goals), None


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("scenario_player", build, args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
