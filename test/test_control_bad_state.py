"""A finite but absurd state must not turn into NaN torques: the controller refuses it by name."""
import numpy as np
import pytest

from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import CommandError


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_overflowing_rates_are_refused_not_passed_on(servicer_target):
    controller = ServicerController(servicer_target, load_controller_config("config/controller.yaml"))
    q, v = servicer_target.neutral(), np.zeros(servicer_target.nv)
    good = controller.update(0.0, q, v)
    assert np.isfinite(good.arm_torque).all() and np.isfinite(good.wheel_torque).all()
    v[servicer_target.arm_v] = 1e200          # finite, but the Coriolis terms overflow to inf/NaN
    with pytest.raises(CommandError, match="state: the control law gives non-finite torques"):
        controller.update(0.001, q, v)
