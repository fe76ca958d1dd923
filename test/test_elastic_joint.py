"""Elastic joints (docs/flexibility.md sec. 4; seed 003 eqs. 1-20) against closed forms and the rigid limit.

1. Two-inertia system on a fixed base: one link (J_L = 0.23 kg m^2 about the joint axis) behind a spring k and
   damper b from a motor of rotor inertia I_r through a gear N (J_M = N^2 I_r). Released from a spring deflection
   with no motion, lambda = q - theta_m rings as a damped oscillator with omega_n^2 = k (1/J_L + 1/J_M) and
   zeta = b / (2 sqrt(k J_L J_M / (J_L + J_M))) (eq. 13): fitted to the simulated lambda(t) (RK4 at 0.1 ms: phase
   error (omega dt)^4 / 120 ~ 1e-11 per radian) and compared to 1e-6. Two gear ratios with the same J_M (N = 50 and
   N = 1) give the same response: the reflected inertia N^2 I_r is what the link feels on a fixed base.
2. Stiff-spring limit on the free-floating seed 003 test bed (planar base, three links, joint 1 elastic with
   seed 003's own convention N = 1, I_m = 3.3 kg m^2 of Table 2): as k grows, the trajectory under the same torques
   tends to that of the rigid arm whose link 1 carries the motor's inertia rigidly (the rotor turns with link 1 once
   the spring does not deflect), the difference falling like 1/k: measured 1.35e-2, 1.32e-3, 1.30e-4 rad for
   k = 1e2, 1e3, 1e4 N m/rad (>= 5x per decade required, and below 1e-3 of the motion at 1e4).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import yaml
from scipy.optimize import curve_fit

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.model.model_config import read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import resolve
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

LINK_MASS, LINK_COM, LINK_IZZ = 2.0, 0.3, 0.05          # kg, m, kg m^2 about the CoM
J_LINK = LINK_IZZ + LINK_MASS * LINK_COM ** 2           # 0.23 kg m^2 about the joint axis
J_MOTOR = 0.1                                           # kg m^2, reflected
STIFFNESS, DAMPING = 20.0, 0.1                          # N m/rad, N m s/rad


def pendulum(tmp_path, gear_ratio: float) -> SystemModel:
    path = tmp_path / "pendulum.urdf"
    path.write_text(
        '<robot name="pendulum"><link name="base"/><joint name="joint" type="revolute"><parent link="base"/>'
        '<child link="link"/><origin xyz="0 0 0"/><axis xyz="0 0 1"/>'
        '<limit lower="-3" upper="3" effort="10" velocity="2"/></joint>'
        f'<link name="link"><inertial><origin xyz="{LINK_COM} 0 0"/><mass value="{LINK_MASS}"/>'
        f'<inertia ixx="0.01" ixy="0" ixz="0" iyy="{LINK_IZZ}" iyz="0" izz="{LINK_IZZ}"/></inertial></link></robot>')
    data = {"name": "pendulum", "arm_joints": ["joint"],
            "subtrees": [{"name": "arm", "urdf": str(path), "base_joint": "fixed", "base_link": "base"}],
            "elastic_joints": [{"joint": "joint", "gear_ratio": gear_ratio, "motor_inertia": J_MOTOR / gear_ratio ** 2,
                                "stiffness": STIFFNESS, "damping": DAMPING}]}
    return SystemModel(read_model_config(ConfigReader(data, source="test")))


def damped_oscillation(t, amplitude, decay, omega, phase):
    return amplitude * np.exp(-decay * t) * np.cos(omega * t + phase)


@pytest.mark.parametrize("gear_ratio", [50.0, 1.0])
def test_two_inertia_response(tmp_path, gear_ratio):
    system = pendulum(tmp_path, gear_ratio)
    q = system.neutral()
    system.flexibility.relax(q, None, {"joint": 0.05})          # 50 mrad spring deflection, at rest
    dt = 1e-4
    sim = Simulator(system, SimulationSettings(dt=dt), q)
    times, deflection = [], []
    for k in range(20000):                                        # 2 s, ~5 periods
        sim.step([0.0])
        if k % 10 == 9:
            times.append(sim.state.t)
            deflection.append(sim.flexible_state().position[1])   # lambda = q - theta_m (rad)
    times, deflection = np.array(times), np.array(deflection)
    omega_n = np.sqrt(STIFFNESS * (1 / J_LINK + 1 / J_MOTOR))
    zeta = DAMPING / (2 * np.sqrt(STIFFNESS * J_LINK * J_MOTOR / (J_LINK + J_MOTOR)))
    guess = (0.05, zeta * omega_n, omega_n * np.sqrt(1 - zeta ** 2), 0.0)
    fit, _covariance = curve_fit(damped_oscillation, times, deflection, p0=guess)
    _amplitude, decay, omega_d, _phase = fit
    fitted_n = np.hypot(decay, omega_d)
    assert fitted_n == pytest.approx(omega_n, rel=1e-6)
    assert decay / fitted_n == pytest.approx(zeta, rel=1e-6)
    assert np.abs(deflection - damped_oscillation(times, *fit)).max() < 1e-8


def seed003_arm(stiffness: float | None) -> SystemModel:
    data = yaml.safe_load(resolve("config/models/airbearing_testbed.yaml").read_text())
    if stiffness is not None:
        data["elastic_joints"] = [{"joint": "joint_1", "gear_ratio": 1.0, "motor_inertia": 3.3,
                                   "stiffness": stiffness}]
    system = SystemModel(read_model_config(ConfigReader(data, source="test")))
    if stiffness is None:       # the rigid arm with the motor's inertia on link 1 (about the joint axis, no mass)
        joint = system.joint_id("joint_1")
        system.model.inertias[joint] = system.model.inertias[joint] + pin.Inertia(0.0, np.zeros(3),
                                                                                 np.diag([0.0, 0.0, 3.3]))
    return system


def joint_trajectory(system: SystemModel, duration: float = 1.0, dt: float = 2.5e-4) -> np.ndarray:
    q = system.neutral()
    for name, angle in zip(system.arm_joints, np.deg2rad([7.5, -15.0, -22.5])):   # seed 003 sec. 3.2
        system.set_joint_angle(q, name, angle)
    if system.flexibility is not None:
        system.flexibility.relax(q)
    sim = Simulator(system, SimulationSettings(dt=dt), q)
    out = []
    for k in range(round(duration / dt)):
        t = (k + 0.5) * dt
        sim.step([0.5 * np.sin(2 * np.pi * t / 2.0), 0.2 * np.cos(np.pi * t), -0.1 * np.sin(3 * t)])
        if k % 40 == 39:
            out.append([system.joint_angle(sim.state.q, n) for n in system.arm_joints])
    return np.array(out)


@pytest.mark.slow
def test_stiff_spring_recovers_the_rigid_joint():
    rigid = joint_trajectory(seed003_arm(None))
    differences = [np.abs(joint_trajectory(seed003_arm(k)) - rigid).max() for k in (1e2, 1e3, 1e4)]
    print("\nlargest joint-angle difference to the rigid arm (rad) for k = 1e2, 1e3, 1e4 N m/rad:", differences)
    assert np.abs(rigid - rigid[0]).max() > 0.05          # rad: the arm moves
    assert differences[0] / differences[1] > 5.0 and differences[1] / differences[2] > 5.0
    assert differences[2] < 1e-3 * np.abs(rigid - rigid[0]).max()
