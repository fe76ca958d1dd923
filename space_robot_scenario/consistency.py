"""Checks across the files of a scenario, each valid alone: the node rates against the controller's, the goals and
the open-loop torques against the model and the controller. Each raises ConfigError naming the field to change."""
from __future__ import annotations

from space_robot_control.controller_config import ControllerConfig
from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.model_config import ModelConfig

from .goals import Goals
from .node_config import NodesConfig
from .torque_profile import TorqueProfile


def check_state_rates(nodes: NodesConfig, controller: ControllerConfig, nodes_reader: ConfigReader,
                      flexible: bool = False) -> None:
    """The controller computes a command from a fresh state every period: joint_states, and the odometry of
    the bus its wheels turn, must come at least at the control rate (other bases, e.g. the free-drifting
    target, may come slower: the state assembler keeps their last pose and twist); so must flexible_modes on a
    flexible model (the motor angles it feeds back). The force_motion mode computes the contact rows between the
    hand and the target from the state: every odometry at the control rate, and grasp/wrench (its force loop)."""
    dynamics, rate = nodes.dynamics, controller.rate
    if dynamics.state_rate < rate:
        raise nodes_reader.error("dynamics.rates.state", f"{dynamics.state_rate:g} Hz is below the controller's "
                                 f"rate ({rate:g} Hz): every control period needs a new joint state")
    if flexible and dynamics.flexible_modes_rate < rate:
        raise nodes_reader.error("dynamics.rates.flexible_modes", f"{dynamics.flexible_modes_rate:g} Hz is below "
                                 f"the controller's rate ({rate:g} Hz): it feeds the motor angles back")
    bus = controller.bus_subtree
    if bus in dynamics.odometry and dynamics.odometry_rates.get(bus, dynamics.state_rate) < rate:
        raise nodes_reader.error(f"dynamics.rates.odometry.{bus}", f"{dynamics.odometry_rates[bus]:g} Hz is below "
                                 f"the controller's rate ({rate:g} Hz): the bus odometry is part of every "
                                 "control period's state")
    if "force_motion" in controller.modes:
        for subtree, topic_rate in dynamics.odometry_rates.items():
            if subtree in dynamics.odometry and topic_rate < rate:
                raise nodes_reader.error(f"dynamics.rates.odometry.{subtree}", f"{topic_rate:g} Hz is below the "
                                         f"controller's rate ({rate:g} Hz): the force_motion mode's contact rows "
                                         "need every body's state each control period")
        if dynamics.grasp_wrench_rate < rate:
            raise nodes_reader.error("dynamics.rates.grasp_wrench", f"{dynamics.grasp_wrench_rate:g} Hz is below the "
                                     f"controller's rate ({rate:g} Hz): the force_motion mode's force loop reads it")


def check_goals(goals: Goals, model: ModelConfig, controller: ControllerConfig | None, source: str | None) -> None:
    """The goals against the model (a typo in a joint name is the scenario author's error, found at load) and
    against the controller that receives them."""
    def error(key: str, problem: str) -> ConfigError:
        return ConfigError(f"goals.{key}", problem, source)

    if goals.trajectory is not None:
        unknown = [n for n in goals.trajectory.joint_names if n not in model.arm_joints]
        if unknown:
            raise error("trajectory.joint_names", f"unknown arm joints {unknown} (the model's: "
                                                  f"{list(model.arm_joints)})")
    if controller is None and goals.for_a_controller:
        raise ConfigError("controller", "is null (no controller node), but the scenario has goals for one", source)
    capture = goals.capture
    if (capture is not None or goals.gripper) and model.grasp is None:
        raise error("capture" if capture is not None else "gripper", "the model has no gripper and no target to "
                    "grasp (model file: no `grasp` section)")
    if capture is not None and capture.approach == "cartesian" and model.flexible:
        # the resolved-rate law computes rigid joint torques: through elastic joints' springs and flexible links it
        # does not converge (on servicer_flexible the hand ends 0.10 m and 0.22 rad off the fixture)
        raise error("capture.approach", "cartesian needs a rigid arm, and the model has flexible links or elastic "
                                        "joints: use approach: joint")
    if capture is not None and capture.seed_positions is not None and \
            len(capture.seed_positions) != len(model.arm_joints):
        raise error("capture.seed_positions", f"must have {len(model.arm_joints)} entries (arm_joints order)")


def check_torque_profile(profile: TorqueProfile | None, controller: ControllerConfig | None,
                         source: str | None) -> None:
    if profile is not None and controller is not None:
        raise ConfigError("torque_profile", "drives the arm open loop: set `controller: null` (two nodes would "
                                            "command the arm)", source)


def check_orbit_model(model: ModelConfig, sensors, source: str | None) -> None:
    """An `orbit:` (docs/orbit.md) puts free-floating bodies in the LVLH frame: every subtree must float on a free
    flyer (a fixed, spherical or planar base, or a mount, would hold it to the LVLH frame, which nothing holds in
    orbit), the model file must leave `gravity` at zero (the orbit is the gravity) and carry no `sensors` (their models
    read rates and attitudes relative to the world frame, which in orbit turns: not modelled yet)."""
    for k, sub in enumerate(model.subtrees):
        if sub.base_joint != "free_flyer" or sub.mount_frame or any(sub.mount_xyz) or any(sub.mount_rpy):
            mount = f"mount xyz {[float(x) for x in sub.mount_xyz]} rpy {[float(x) for x in sub.mount_rpy]}"
            raise ConfigError(f"subtrees[{k}].base_joint", f"subtree {sub.name!r} is held to the world frame "
                              f"({sub.base_joint} base, {mount}{' on ' + sub.mount_frame if sub.mount_frame else ''})"
                              ": in orbit every subtree must float on a free_flyer at the world's origin (the orbit: "
                              "section)", source)
    if any(model.gravity):
        raise ConfigError("gravity", f"{list(model.gravity)} m/s^2: in orbit the central body's gravity acts "
                                     "(the orbit: section); the model's uniform gravity must be zero", source)
    if sensors.sensors:
        raise ConfigError("sensors", f"{sorted(sensors.sensors)}: sensors in orbit are not modelled yet (their "
                                     "gyros and star trackers would read the rotating LVLH frame's rates and "
                                     "attitudes); drop the orbit: section or the sensors", source)
