"""`ros2 run space_robot sawyer_command_adapter`: arm effort commands -> intera_core_msgs/JointCommand.

See space_robot_nodes.sawyer_adapter_core. Parameters: scenario, overrides (node_host); the adapter's
section of the nodes file the scenario names (joints, rates, timeouts, topics). Needs a ROS 2 build of
intera_core_msgs (the message import is optional: without it the node says so and exits with status 2).
"""
from __future__ import annotations

import sys

from space_robot_nodes.message_types import INTERA_JOINT_COMMAND


def build(node, types):
    from space_robot_dynamics.errors import SpaceRobotError
    from space_robot_nodes.message_types import RosMessageTypes
    from space_robot_nodes.sawyer_adapter_core import SawyerAdapterCore

    from .node_host import scenario_from_parameters

    # the core builds the message from the typestore's definition; the topic needs the ROS 2 package's type
    if not RosMessageTypes().has(INTERA_JOINT_COMMAND):
        raise SpaceRobotError(f"{INTERA_JOINT_COMMAND} is not available: build intera_core_msgs for ROS 2 (same "
                              "fields as the Intera SDK's ROS 1 message) and bridge it with ros1_bridge")
    scenario = scenario_from_parameters(node)
    return SawyerAdapterCore(types, scenario.nodes.sawyer_adapter), None


def main(args=None) -> int:
    from .stop_signals import StopSignals

    stop = StopSignals().install()      # first: node_host's imports take ~0.7 s a Ctrl-C may fall into
    from .node_host import run_node

    return run_node("sawyer_command_adapter", build, args=args, stop=stop)


if __name__ == "__main__":
    sys.exit(main())
