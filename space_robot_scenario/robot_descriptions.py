"""The robot_description of each model subtree, as robot_state_publisher gets it in a launch and as the
standalone runtime records it, from one place: the scenario's model configuration.

Per subtree: the xacro-expanded URDF with its own (unprefixed) link names, the TF frame_prefix the simulator
uses for that subtree's frames, and the topic the description goes on (`<namespace>/robot_description`,
namespace = frame_prefix without slashes: the target's is `target/robot_description`, which RViz's
RobotModel display reads with TF Prefix `target`). ROS-free, so the launch file and the tests use the same
function the runtime does.
"""
from __future__ import annotations

from dataclasses import dataclass

from space_robot_dynamics.model import urdf_source
from space_robot_dynamics.model.model_config import ModelConfig
from space_robot_dynamics.model.system_model import description_urdf

DESCRIPTION_TOPIC = "robot_description"


@dataclass(frozen=True)
class RobotDescription:
    subtree: str            # model subtree name
    frame_prefix: str       # robot_state_publisher's frame_prefix parameter ("" or e.g. "target/")
    urdf: str               # xacro-expanded URDF text

    @property
    def namespace(self) -> str:
        return self.frame_prefix.strip("/")

    @property
    def topic(self) -> str:
        """Relative topic of the description (std_msgs/String, transient-local)."""
        return description_topic(self.frame_prefix)


def description_topic(frame_prefix: str) -> str:
    namespace = frame_prefix.strip("/")
    return f"{namespace}/{DESCRIPTION_TOPIC}" if namespace else DESCRIPTION_TOPIC


def robot_descriptions(model: ModelConfig) -> list[RobotDescription]:
    """One RobotDescription per subtree of `model`, in the model's order (ConfigError on a bad URDF/xacro). A
    subtree with flexible links gets their tip chains (space_robot_dynamics.model.system_model.description_urdf),
    whose joint positions the dynamics node publishes in joint_states."""
    return [RobotDescription(s.name, s.frame_prefix,
                             description_urdf(urdf_source.expand(s.urdf, s.xacro_args), model, s.frame_prefix))
            for s in model.subtrees]
