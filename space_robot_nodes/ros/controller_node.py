"""`ros2 run space_robot controller_node`: the servicer controller (see space_robot_nodes.controller_core).

Serves control_msgs/action/FollowJointTrajectory on arm_controller/follow_joint_trajectory (MoveIt 2's
moveit_simple_controller_manager; see trajectory_action_server.py) besides the arm_controller/joint_trajectory
topic. Parameters: scenario, overrides (node_host). Modes are chosen by the controller file's controller.modes,
e.g. overrides:="['controller.controller.modes=[joint_tracking]']" for arm tracking only. Run it with
use_sim_time:=true against the dynamics node.
"""
from __future__ import annotations

import sys


def build(node, types):
    from space_robot_control.servicer_controller import ServicerController
    from space_robot_dynamics.errors import ConfigError
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_nodes.controller_core import ControllerCore
    from space_robot_nodes.message_types import RosMessageTypes

    from .node_host import scenario_from_parameters
    from .trajectory_action_server import serve_trajectory_action

    scenario = scenario_from_parameters(node)
    if scenario.controller is None:
        raise ConfigError("controller", "the scenario has no controller (controller: null); its arm is driven by "
                                        "the scenario player's torque profile", scenario.source)
    controller = ServicerController(SystemModel(scenario.model), scenario.controller)
    core = ControllerCore(types, controller, scenario.nodes.controller, scenario.mean_motion)
    # the action server works on rclpy's message classes (the core's topics go through the typestore)
    serve_trajectory_action(node, RosMessageTypes(), core.trajectory_action,
                            scenario.nodes.controller.trajectory_action.name)
    return core, None


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("controller", build, args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
