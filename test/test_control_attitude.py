"""Reaction-wheel attitude control (space_robot_control.attitude_control and its use in the servicer
controller): quaternion error, spin axes read from the model, allocation and limits, closed-loop response.

Independent references: scipy's Rotation (error angle), the spin axes written out from the xacro's mount
angles, and the analytic response of the small-angle closed loop theta'' + 2 zeta wn theta' + wn^2 theta = 0.
"""
from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from space_robot_control.attitude_control import AttitudeController, AttitudeGains, quaternion_error, wheel_spin_axes
from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import CommandError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

TILT = 0.9553166            # rad, pyramid wheel tilt from the bus z axis (urdf/servicer.urdf.xacro)


@pytest.fixture(scope="module")
def system():
    return SystemModel(load_model_config("config/models/servicer_target.yaml"))


def test_quaternion_error_angle_and_shortest_path():
    rng = np.random.default_rng(5)
    for _ in range(50):
        setpoint, actual = Rotation.random(random_state=rng), Rotation.random(random_state=rng)
        e, angle = quaternion_error(actual.as_quat(), setpoint.as_quat())
        assert angle == pytest.approx((setpoint.inv() * actual).magnitude(), abs=1e-12)
        e_flipped, angle_flipped = quaternion_error(-actual.as_quat(), setpoint.as_quat())   # same attitude
        assert np.allclose(e, e_flipped) and angle_flipped == pytest.approx(angle)
        # Shortest path: e is sin(angle/2) along the rotation vector from the setpoint to the bus, in the bus frame.
        rotvec = (setpoint.inv() * actual).as_rotvec()
        assert np.allclose(e, np.sin(angle / 2) * rotvec / np.linalg.norm(rotvec), atol=1e-12)


def test_spin_axes_are_read_from_the_model(system, pyramid):
    orthogonal = wheel_spin_axes(system.model, system.subtree("servicer").root_joint_id, system.wheel_joints)
    assert np.allclose(orthogonal, np.eye(3), atol=1e-12)         # rw_x, rw_y, rw_z spin about x, y, z
    axes = wheel_spin_axes(pyramid.model, pyramid.subtree("servicer").root_joint_id, pyramid.wheel_joints)
    expected = np.array([[np.sin(TILT) * np.cos(az), np.sin(TILT) * np.sin(az), np.cos(TILT)]
                         for az in (0.0, np.pi / 2, np.pi, -np.pi / 2)]).T
    assert np.allclose(axes, expected, atol=1e-6)


def make_controller(axes, speed_limit=628.3):
    gains = AttitudeGains(np.eye(3), np.eye(3))
    return AttitudeController(axes, 0.2, speed_limit, gains, [0.0, 0.0, 0.0, 1.0])


def test_pyramid_allocation_limits_and_speed_saturation(pyramid):
    axes = wheel_spin_axes(pyramid.model, pyramid.subtree("servicer").root_joint_id, pyramid.wheel_joints)
    ctl = make_controller(axes)
    rest = np.zeros(4)
    small = np.array([0.05, -0.03, 0.02])                          # N m on the bus, bus frame
    tau, scale, blocked = ctl.allocate(small, rest)
    assert np.allclose(-axes @ tau, small, atol=1e-15) and scale == 1.0 and not blocked.any()
    big = np.array([1.0, 0.4, -0.7])
    tau, scale, _ = ctl.allocate(big, rest)
    assert np.abs(tau).max() == pytest.approx(0.2) and scale < 1.0
    achieved = -axes @ tau
    assert np.allclose(np.cross(achieved, big), 0.0, atol=1e-12) and achieved @ big > 0   # same direction
    # Wheel 1 at its speed limit, spinning the way the torque would push it: the three others (still
    # spanning 3-D) take the whole torque.
    tau_free, _, _ = ctl.allocate(small, rest)
    speeds = np.array([628.3 * np.sign(tau_free[0]), 0.0, 0.0, 0.0])
    tau, scale, blocked = ctl.allocate(small, speeds)
    assert blocked.tolist() == [True, False, False, False] and tau[0] == 0.0
    assert np.allclose(-axes @ tau, small, atol=1e-15)
    # The opposite speed is fine: that torque slows the wheel down.
    tau, _, blocked = ctl.allocate(small, -speeds)
    assert not blocked.any() and np.allclose(tau, tau_free)


def test_orthogonal_wheel_at_speed_limit_loses_its_axis_and_says_so():
    ctl = make_controller(np.eye(3))
    demand = np.array([0.1, 0.1, 0.1])
    tau, _, blocked = ctl.allocate(demand, np.array([-628.3, 0.0, 0.0]))   # tau_x = -0.1 would spin it up
    assert blocked.tolist() == [True, False, False] and tau[0] == 0.0
    assert np.allclose(-tau[1:], demand[1:])


def test_setpoint_must_be_a_unit_quaternion():
    ctl = make_controller(np.eye(3))
    for bad in ([0, 0, 0, 2.0], [0, 0, float("nan"), 1], [0, 0, 1], "up"):
        with pytest.raises(CommandError) as err:
            ctl.set_setpoint(bad)
        assert err.value.field == "setpoint"
    ctl.set_setpoint([0, 0, 0.001, 1.0])            # within 1e-2 of unit norm: normalized
    assert np.linalg.norm(ctl.setpoint) == pytest.approx(1.0)


def test_small_angle_step_follows_the_designed_second_order_response(system):
    """Attitude-only mode (arm limp), setpoint 5 mrad away about a skew axis. The design promises
    theta(t) = theta0 (1 + wn t) exp(-wn t) (critical damping). The feed-forward cancels the predicted
    coupling, so what remains is the 1 kHz zero-order hold, a half-sample delay: |theta'|max dt/2 =
    theta0 wn / e * 0.5 ms = 7.4e-5 theta0; the bound 2e-4 theta0 allows 2.7x that. A wrong gain (e.g.
    Kp without the factor 2 for e ~ theta/2) is off by 0.3 theta0. The PD torque stays under 0.1 N m per
    wheel, inside the 0.2 N m limit (checked: no saturation)."""
    config = replace(load_controller_config("config/controller.yaml"), modes=("attitude_hold",))
    ctl = ServicerController(system, config)
    wn, zeta = config.attitude_hold.natural_frequency, config.attitude_hold.damping_ratio
    assert zeta == 1.0                             # the analytic reference below is the critically damped one
    sim = Simulator(system, SimulationSettings(dt=1.0 / config.rate))
    theta0, axis = 5e-3, np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    ctl.update(0.0, sim.state.q, sim.state.v)
    ctl.set_attitude_setpoint(Rotation.from_rotvec(theta0 * axis).as_quat())
    worst, saturated = 0.0, False
    for _ in range(8000):
        state = sim.state
        out = ctl.update(state.t, state.q, state.v)
        sim.step(out.arm_torque, out.wheel_torque)
        saturated |= out.wheel_torque_saturated or out.wheel_speed_saturated.any()
        analytic = theta0 * (1.0 + wn * state.t) * np.exp(-wn * state.t)
        worst = max(worst, abs(out.attitude_error_angle - analytic))
    print(f"max |theta - theta_analytic| = {worst:.3e} rad = {worst / theta0:.2e} theta0")
    assert not saturated
    assert np.all(out.arm_torque == 0.0)
    assert worst < 2e-4 * theta0
