"""ServicerController configuration and API: validation errors name the field, bad input changes nothing,
output order follows the configured joint lists, results are deterministic."""
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
import yaml

from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel

CONFIG = "config/controller.yaml"


@pytest.fixture(scope="module")
def system():
    return SystemModel(load_model_config("config/models/servicer_target.yaml"))


@pytest.fixture(scope="module")
def config():
    return load_controller_config(CONFIG)


def moving_state(system):
    rng = np.random.default_rng(2)
    q, v = system.neutral(), np.zeros(system.nv)
    for name in system.arm_joints:
        system.set_joint_angle(q, name, rng.uniform(-0.5, 0.5))
    v[system.arm_v] = rng.normal(0.0, 0.2, len(system.arm_v))
    v[system.wheel_v] = rng.normal(0.0, 50.0, len(system.wheel_v))
    v[3:6] = [0.001, -0.002, 0.0015]
    return q, v


def edited(tmp_path, edit):
    with open(CONFIG) as f:
        data = yaml.safe_load(f)
    edit(data)
    path = tmp_path / "controller.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_shipped_config_loads_with_both_modes(config):
    assert config.modes == ("joint_tracking", "attitude_hold") and config.rate == 1000.0
    assert config.attitude_hold.setpoint_xyzw is None


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["controller"].update(modes=["joint_tracking", "fly"]), "controller.modes[1]"),
    (lambda d: d["controller"].update(modes=[]), "controller.modes"),
    (lambda d: d["controller"].update(rate=0), "controller.rate"),
    (lambda d: d["joint_tracking"].update(natural_frequency=-1.0), "joint_tracking.natural_frequency"),
    (lambda d: d["joint_tracking"]["trajectory"].update(limit_policy="ignore"),
     "joint_tracking.trajectory.limit_policy"),
    (lambda d: d["joint_tracking"]["trajectory"]["acceleration_limits"].update(right_j2=-1.0),
     "joint_tracking.trajectory.acceleration_limits.right_j2"),
    (lambda d: d["attitude_hold"].update(setpoint_xyzw=[0, 0, 0, 2]), "attitude_hold.setpoint_xyzw"),
    (lambda d: d["attitude_hold"].update(dampingratio=1.0), "attitude_hold.dampingratio"),
    (lambda d: d.update(gains={}), "gains"),
])
def test_bad_config_fields_are_named(tmp_path, edit, field):
    with pytest.raises(ConfigError) as err:
        load_controller_config(edited(tmp_path, edit))
    assert err.value.field == field


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["controller"].update(arm_joints=["right_j0", "right_j1"]), "controller.arm_joints"),
    (lambda d: d["controller"].update(wheel_joints=["rw_x_joint", "rw_y_joint", "rw_q_joint"]),
     "controller.wheel_joints"),
    (lambda d: d["controller"].update(bus_subtree="mothership"), "controller.bus_subtree"),
    (lambda d: d["joint_tracking"]["trajectory"]["acceleration_limits"].pop("right_j6"),
     "joint_tracking.trajectory.acceleration_limits.right_j6"),
    (lambda d: d["joint_tracking"]["trajectory"]["acceleration_limits"].update(head_pan=1.0),
     "joint_tracking.trajectory.acceleration_limits.head_pan"),
    (lambda d: d["joint_tracking"]["trajectory"].update(position_margin=4.0),
     "joint_tracking.trajectory.position_margin"),
])
def test_config_that_does_not_fit_the_model_is_rejected(tmp_path, system, edit, field):
    with pytest.raises(ConfigError) as err:
        ServicerController(system, load_controller_config(edited(tmp_path, edit)))
    assert err.value.field == field


def test_bad_commands_raise_and_change_nothing(system, config):
    ctl = ServicerController(system, config)
    q, v = moving_state(system)
    with pytest.raises(CommandError) as err:
        ctl.set_trajectory(list(system.arm_joints), [([0.1] * 7, None, None, 2.0)])
    assert err.value.field == "state"                   # no update yet: no state to start from
    first = ctl.update(0.0, q, v)
    for bad_q, bad_v, field in ((np.full(system.nq, np.nan), v, "q"), (q, v[:-1], "v"), (q, "fast", "v")):
        with pytest.raises(CommandError) as err:
            ctl.update(0.001, bad_q, bad_v)
        assert err.value.field == field
    with pytest.raises(CommandError) as err:
        ctl.update(float("inf"), q, v)
    assert err.value.field == "t"
    with pytest.raises(CommandError) as err:
        ctl.set_trajectory(["right_j9"] + list(system.arm_joints[1:]), [([0.1] * 7, None, None, 2.0)])
    assert err.value.field == "joint_names[0]"
    with pytest.raises(CommandError) as err:
        ctl.set_attitude_setpoint([0.0, 0.0, 0.0, 0.0])
    assert err.value.field == "setpoint"
    again = ctl.update(0.0, q, v)                       # same state and time: same command as before
    assert np.array_equal(again.arm_torque, first.arm_torque)
    assert np.array_equal(again.wheel_torque, first.wheel_torque)


def test_modes_that_are_off_refuse_their_commands(system, config):
    attitude_only = ServicerController(system, replace(config, modes=("attitude_hold",)))
    q, v = moving_state(system)
    out = attitude_only.update(0.0, q, v)
    assert np.all(out.arm_torque == 0.0) and np.isnan(out.tracking_error_max)
    with pytest.raises(CommandError):
        attitude_only.set_trajectory(list(system.arm_joints), [([0.1] * 7, None, None, 2.0)])
    arm_only = ServicerController(system, replace(config, modes=("joint_tracking",)))
    out = arm_only.update(0.0, q, v)
    assert np.all(out.wheel_torque == 0.0) and np.isnan(out.attitude_error_angle)
    with pytest.raises(CommandError):
        arm_only.set_attitude_setpoint([0.0, 0.0, 0.0, 1.0])


def test_output_order_follows_the_configured_joint_lists(system, config):
    q, v = moving_state(system)
    default = ServicerController(system, config)
    flipped = ServicerController(system, replace(config, arm_joints=tuple(reversed(system.arm_joints)),
                                                 wheel_joints=tuple(reversed(system.wheel_joints))))
    setpoint = [0.0, 0.01, 0.0, 1.0]
    for ctl in (default, flipped):
        ctl.update(0.0, q, v)
        ctl.set_attitude_setpoint(np.array(setpoint) / np.linalg.norm(setpoint))
    a, b = default.update(0.001, q, v), flipped.update(0.001, q, v)
    assert np.allclose(a.arm_torque, b.arm_torque[::-1], rtol=1e-12, atol=1e-12)
    assert np.allclose(a.wheel_torque, b.wheel_torque[::-1], rtol=1e-12, atol=1e-12)
    assert np.abs(a.wheel_torque).max() > 0.0 and np.abs(a.arm_torque).max() > 0.0


def test_same_inputs_give_bit_identical_outputs(system, config):
    q, v = moving_state(system)
    outs = []
    for _ in range(2):
        ctl = ServicerController(system, config)
        ctl.update(0.0, q, v)
        ctl.set_trajectory(list(system.arm_joints), [([0.3] * 7, None, None, 3.0)])
        outs.append(ctl.update(0.5, q, v))
    assert np.array_equal(outs[0].arm_torque, outs[1].arm_torque)
    assert np.array_equal(outs[0].wheel_torque, outs[1].wheel_torque)


def test_stop_trajectory_holds_the_measured_pose(system, config):
    q, v = moving_state(system)
    ctl = ServicerController(system, config)
    ctl.update(0.0, q, v)
    ctl.set_trajectory(list(system.arm_joints), [([0.3] * 7, None, None, 3.0)])
    assert ctl.update(1.0, q, v).trajectory_active
    ctl.stop_trajectory()
    out = ctl.update(1.001, q, v)
    assert not out.trajectory_active and np.allclose(out.tracking_error, 0.0)


def test_fixed_base_arm_under_gravity(config):
    """The same controller on the bench Sawyer (fixed base, Earth gravity; what sawyer.launch.py drives):
    joint tracking only, no wheels. At rest on its reference it commands the gravity torques, and in
    motion forward dynamics returns the commanded acceleration a* = qdd_d + Kd e' + Kp e."""
    bench = SystemModel(load_model_config("config/models/sawyer_fixed.yaml"))
    ctl = ServicerController(bench, replace(config, modes=("joint_tracking",), wheel_joints=None))
    model, data = bench.model, bench.model.createData()
    q = bench.neutral()
    for name, angle in zip(bench.arm_joints, [0.2, -0.6, 0.1, 1.1, 0.0, 0.5, 0.0]):
        bench.set_joint_angle(q, name, angle)
    v = np.zeros(bench.nv)
    out = ctl.update(0.0, q, v)
    gravity = pin.rnea(model, data, q, v, np.zeros(bench.nv))[bench.arm_v]
    assert np.abs(gravity).max() > 10.0                       # the shoulder carries the arm: tens of N m
    assert np.allclose(out.arm_torque, gravity, rtol=1e-12, atol=1e-9)
    ctl.set_trajectory(list(bench.arm_joints), [([0.4, -0.4, 0.1, 1.0, 0.2, 0.5, 0.1], None, None, 2.0)])
    v[bench.arm_v] = 0.05
    out = ctl.update(0.7, q, v)
    ref = ctl.follower.sample(0.7)
    a_star = ref.accelerations + ctl.kd * (ref.velocities - v[bench.arm_v]) + ctl.kp * (ref.positions - q[bench.arm_v])
    tau = np.zeros(bench.nv)
    tau[bench.arm_v] = out.arm_torque
    assert np.abs(pin.aba(model, data, q, v, tau)[bench.arm_v] - a_star).max() < 1e-9
