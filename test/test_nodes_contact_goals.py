"""The controller's Cartesian goal (PoseStamped) and contact-force setpoint (WrenchStamped) inputs
(space_robot_nodes/contact_goal_input.py): accepted goals reach the controller, bad ones are rejected with an ERROR
diagnostic naming the field, and the controller keeps its goal."""
import numpy as np
import pytest

from space_robot_control.cartesian_approach import CartesianApproachController, CartesianApproachSettings
from space_robot_dynamics.errors import ConfigError
from space_robot_nodes import conversions as cv
from space_robot_nodes.contact_goal_input import POSE_STAMPED, WRENCH_STAMPED, ContactGoalInput, ContactGoalSettings
from space_robot_nodes.message_types import RosbagsMessageTypes

TYPES = RosbagsMessageTypes()


def pose(frame, xyz, xyzw):
    return TYPES.new(POSE_STAMPED, header=cv.header(TYPES, 0.0, frame),
                     pose=TYPES.new("geometry_msgs/msg/Pose", position=cv.point(TYPES, xyz),
                                    orientation=cv.quaternion(TYPES, xyzw)))


def wrench(frame, force, torque=(0.0, 0.0, 0.0)):
    return TYPES.new(WRENCH_STAMPED, header=cv.header(TYPES, 0.0, frame),
                     wrench=TYPES.new("geometry_msgs/msg/Wrench", force=cv.vector3(TYPES, force),
                                      torque=cv.vector3(TYPES, torque)))


@pytest.fixture()
def inputs(servicer_target):
    approach = CartesianApproachController(servicer_target, CartesianApproachSettings(end_effector="right_hand"))
    return ContactGoalInput(approach, ContactGoalSettings(contact_frame="right_hand", force_limit=50.0))


def levels_and_text(inputs):
    status = inputs.status(TYPES)
    return status.level, status.message


def test_good_goals_reach_the_controller(inputs, servicer_target):
    inputs.on_cartesian_goal(pose("target/grapple_frame", [0.15, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]))
    inputs.on_force_setpoint(wrench("right_hand", [10.0, 0.0, 0.0]))
    level, text = levels_and_text(inputs)
    assert level == cv.OK and "Cartesian goal accepted" in text and "force setpoint accepted" in text
    goal, _ = inputs.approach.goal(servicer_target.neutral(), np.zeros(servicer_target.nv))
    assert np.allclose(inputs.force_setpoint, [10.0, 0.0, 0.0])
    assert np.isfinite(goal.translation).all()


@pytest.mark.parametrize("message, field", [
    (lambda: pose("no_such_frame", [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]), "goal.header.frame_id"),
    (lambda: pose("world", [np.nan, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]), "goal.pose.position"),
    (lambda: pose("world", [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]), "goal.pose.orientation"),
])
def test_bad_cartesian_goals_are_rejected_naming_the_field(inputs, message, field):
    inputs.on_cartesian_goal(pose("world", [1.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0]))
    inputs.status(TYPES)
    before = inputs.approach._goal
    inputs.on_cartesian_goal(message())
    level, text = levels_and_text(inputs)
    assert level == cv.ERROR and field in text and "keeping the current one" in text
    assert inputs.approach._goal is before and inputs.rejected == 1


@pytest.mark.parametrize("message, field", [
    (lambda: wrench("right_hand", [np.nan, 0.0, 0.0]), "setpoint.wrench.force"),
    (lambda: wrench("right_hand", [0.0, 0.0, 0.0], [0.0, np.inf, 0.0]), "setpoint.wrench.torque"),
    (lambda: wrench("base_link", [1.0, 0.0, 0.0]), "setpoint.header.frame_id"),
    (lambda: wrench("right_hand", [60.0, 0.0, 0.0]), "exceeds the limit"),
])
def test_bad_force_setpoints_are_rejected_and_never_passed_on(inputs, message, field):
    inputs.on_force_setpoint(wrench("", [5.0, 0.0, 0.0]))
    inputs.on_force_setpoint(message())
    level, text = levels_and_text(inputs)
    assert level == cv.ERROR and field in text
    assert np.array_equal(inputs.force_setpoint, [5.0, 0.0, 0.0])


def test_gains_out_of_range_are_rejected(inputs):
    inputs.set_approach_gains(rate_gain=1e6)
    inputs.set_approach_gains(no_such_gain=1.0)
    inputs.set_force_gains(30.0, -25.0, 10.0, 50.0)
    level, text = levels_and_text(inputs)
    assert level == cv.ERROR and "rate_gain" in text and "no_such_gain" in text and "gains.kd" in text
    assert inputs.approach.settings.rate_gain == 20.0 and inputs.force_gains is None
    inputs.set_approach_gains(position_gain=2.0)
    inputs.set_force_gains(30.0, 25.0, 10.0, 50.0)
    assert levels_and_text(inputs)[0] == cv.OK and inputs.approach.settings.position_gain == 2.0


def test_without_a_cartesian_mode_a_goal_is_an_error_not_a_crash():
    inputs = ContactGoalInput(None, ContactGoalSettings())
    inputs.on_cartesian_goal(pose("world", [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]))
    assert levels_and_text(inputs)[0] == cv.ERROR
    with pytest.raises(ConfigError, match="contact_goals.force_limit"):
        ContactGoalInput(None, ContactGoalSettings(force_limit=-1.0))
