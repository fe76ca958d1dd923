"""SystemModel.set_elastic_joint: an elastic joint's motor inertia, stiffness and damping changed in place
(docs/flexibility.md sec. 4) give the model a model file with those values would give, and bad values change
nothing.

The reference is a SystemModel built from the model file with the new values (URDF read again, rotor body made
by the URDF expansion): mass matrix and bias forces (Pinocchio crba, rnea, also with a Data created before the
change), the spring and damper matrices and offset force, the flexible_modes readout, the potential energy and
the model config all agree to round-off (1e-12 relative: the same numbers reach Pinocchio by two routes, the URDF
text with 17 significant digits and pin.Inertia). A Simulator built after the change rings at the two-inertia
frequency of the new values (eq. 13, as in test_elastic_joint.py) to 1e-6.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import yaml

from space_robot_dynamics.errors import CommandError
from space_robot_dynamics.model.system_model import build_model
from space_robot_dynamics.package_share import resolve

MODEL = "config/models/airbearing_testbed_flexible_joint.yaml"
NEW = {"motor_inertia": 5.6, "stiffness": 8.1, "damping": 0.5}       # seed 003 Table 2 averages (file: Test #2)


def model_with(**values):
    data = yaml.safe_load(resolve(MODEL).read_text())
    data["elastic_joints"][0].update(values)
    return build_model(data)


def random_state(system, seed):
    rng = np.random.default_rng(seed)
    q = pin.randomConfiguration(system.model, -np.ones(system.nq), np.ones(system.nq))
    return q, rng.normal(size=system.nv), rng.normal(size=system.nv)


def test_changed_in_place_equals_a_model_built_with_the_values():
    changed, reference = build_model(MODEL), model_with(**NEW)
    data_before = changed.model.createData()
    changed.set_elastic_joint("joint_1", **NEW)
    assert changed.config.elastic_joints == reference.config.elastic_joints
    flexibility, expected = changed.flexibility, reference.flexibility
    for name in ("K", "C", "f0"):
        assert np.allclose(getattr(flexibility, name), getattr(expected, name), rtol=1e-12, atol=0), name
    for seed in range(3):
        q, v, a = random_state(changed, seed)
        for data in (data_before, changed.model.createData()):
            mass = pin.crba(changed.model, data, q)
            assert np.allclose(mass, pin.crba(reference.model, reference.model.createData(), q), rtol=0,
                               atol=1e-12 * np.abs(mass).max())
            tau = pin.rnea(changed.model, data, q, v, a)
            assert np.allclose(tau, pin.rnea(reference.model, reference.model.createData(), q, v, a), rtol=0,
                               atol=1e-12 * np.abs(tau).max())
        for got, want in zip(flexibility.readout(q, v), expected.readout(q, v)):
            assert np.allclose(got, want, rtol=1e-12, atol=1e-15)
        assert flexibility.potential_energy(q) == pytest.approx(expected.potential_energy(q), rel=1e-12)


def test_none_keeps_a_value_and_the_rigid_counterpart_follows():
    system = build_model(MODEL)
    system.set_elastic_joint("joint_1", stiffness=20.0)
    config = system.config.elastic_joints[0]
    assert (config.motor_inertia, config.stiffness, config.damping) == (3.3, 20.0, 0.4)
    assert system.flexibility.elastic("joint_1").joint.config == config


@pytest.mark.parametrize(("joint", "values", "field"), [
    ("joint_2", {"stiffness": 1.0}, "joint"),                  # rigid joint
    ("joint_1", {"motor_inertia": 0.0}, "motor_inertia"),
    ("joint_1", {"stiffness": -1.0}, "stiffness"),
    ("joint_1", {"damping": float("nan")}, "damping"),
    ("joint_1", {"damping": True}, "damping"),
    ("joint_1", {"stiffness": "8"}, "stiffness"),
])
def test_bad_values_raise_naming_the_argument_and_change_nothing(joint, values, field):
    system = build_model(MODEL)
    q, v, _ = random_state(system, 0)
    before = (pin.crba(system.model, system.model.createData(), q).copy(), system.flexibility.K.copy(),
              system.config)
    with pytest.raises(CommandError) as error:
        system.set_elastic_joint(joint, stiffness=5.0, **values) if "stiffness" not in values else \
            system.set_elastic_joint(joint, **values)
    assert error.value.field == field
    assert np.array_equal(pin.crba(system.model, system.model.createData(), q), before[0])
    assert np.array_equal(system.flexibility.K, before[1]) and system.config is before[2]


def test_a_rigid_model_has_no_elastic_joint():
    with pytest.raises(CommandError, match="not an elastic joint"):
        build_model("config/models/airbearing_testbed.yaml").set_elastic_joint("joint_1", stiffness=1.0)


def test_a_simulator_built_after_the_change_rings_at_the_new_frequency(tmp_path):
    """A link (J_L = 0.23 kg m^2 about its fixed joint) behind a gear N = 50: built with I_r = 1e-4 kg m^2,
    k = 5 N m/rad, b = 0, changed to I_r = 4e-5 (J_M = N^2 I_r = 0.1 kg m^2), k = 20, b = 0.1 and released from a
    50 mrad deflection: lambda(t) is the damped oscillation of eq. 13 with the new values (fitted frequency and
    damping ratio to 1e-6, RK4 at 0.1 ms as in test_elastic_joint.py)."""
    from scipy.optimize import curve_fit

    from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

    j_link, j_motor, stiffness, damping, gear = 0.23, 0.1, 20.0, 0.1, 50.0
    path = tmp_path / "pendulum.urdf"
    path.write_text(
        '<robot name="pendulum"><link name="base"/><joint name="joint" type="revolute"><parent link="base"/>'
        '<child link="link"/><origin xyz="0 0 0"/><axis xyz="0 0 1"/>'
        '<limit lower="-3" upper="3" effort="10" velocity="2"/></joint>'
        '<link name="link"><inertial><origin xyz="0.3 0 0"/><mass value="2.0"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link></robot>')
    system = build_model({"name": "pendulum", "arm_joints": ["joint"],
                          "subtrees": [{"name": "arm", "urdf": str(path), "base_joint": "fixed", "base_link": "base"}],
                          "elastic_joints": [{"joint": "joint", "gear_ratio": gear, "motor_inertia": 1e-4,
                                              "stiffness": 5.0}]})
    system.set_elastic_joint("joint", motor_inertia=j_motor / gear ** 2, stiffness=stiffness, damping=damping)
    q = system.neutral()
    system.flexibility.relax(q, None, {"joint": 0.05})
    sim = Simulator(system, SimulationSettings(dt=1e-4), q)
    times, deflection = [], []
    for k in range(20000):
        sim.step([0.0])
        if k % 10 == 9:
            times.append(sim.state.t)
            deflection.append(sim.flexible_state().position[1])
    omega_n = np.sqrt(stiffness * (1 / j_link + 1 / j_motor))
    zeta = damping / (2 * np.sqrt(stiffness * j_link * j_motor / (j_link + j_motor)))
    fit, _ = curve_fit(lambda t, a, decay, w, p: a * np.exp(-decay * t) * np.cos(w * t + p), np.array(times),
                       np.array(deflection), p0=(0.05, zeta * omega_n, omega_n * np.sqrt(1 - zeta ** 2), 0.0))
    fitted_n = np.hypot(fit[1], fit[2])
    assert fitted_n == pytest.approx(omega_n, rel=1e-6)
    assert fit[1] / fitted_n == pytest.approx(zeta, rel=1e-6)
