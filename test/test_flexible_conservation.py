"""Conservation laws with flexible links and elastic joints active (docs/flexibility.md sec. 6), on the servicer of
config/models/servicer_flexible.yaml (flexible upper arm and forearm, two modes each; seven elastic Sawyer joints)
and its tumbling target.

The inputs of test_conservation.py (arm sinusoids plus a PD, wheel sinusoids, servicer drifting, target tumbling),
with the PD on the motor angles (collocated; feedback across the springs is the controller's business) and the arm
started with 5 mrad on every spring and 0.5 mm on every bending mode, so that all eleven modes (4.8 to 40 Hz)
ring throughout; 2 s of RK4.

Bounds. Momentum: the rigid core's, drift <= 1e-9 of the peak single-body momentum, at 0.5 ms (measured 3e-10).
Energy: T + V - (T0 + V0) - W_act <= 2e-6 of the energy moved (measured 8e-7). Unlike the rigid core's 1e-8 at
1 ms, where the motion is a slow ~1 Hz one, here the modes oscillate at up to 40 Hz: RK4 damps an oscillator
numerically by ~(omega dt)^6 / 144 per step, 2.6e-8 at omega dt = 0.125, i.e. ~1e-4 of the ringing modes'
energy over the run, which is ~1 % of the energy moved. Both residuals must also fall with dt as RK4's truncation
does (momentum 16x, energy 32x per halving measured; >= 10x required), which no modelling error (a wrong force, a
missing coupling term, a non-internal spring) would do. With the modal and joint dampers on, the energy they take is
accounted for the same way: T + V - (T0 + V0) = W_act - W_diss.
"""
from __future__ import annotations

import copy

import numpy as np
import pinocchio as pin
import pytest
import yaml
from test_conservation import ARM_AMPLITUDE, ARM_HOME, ARM_KD, ARM_KP, ARM_OMEGA, wheel_torque

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.model_config import read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import resolve
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_dynamics.simulation.system_momentum import body_momenta_scale

DURATION, DT = 2.0, 5e-4
DEFLECTION = 0.005          # rad, initial spring deflection of every elastic joint
MODAL = 0.0005              # m, initial tip deflection of every bending mode


def servicer(damped: bool) -> SystemModel:
    data = yaml.safe_load(resolve("config/models/servicer_flexible.yaml").read_text())
    if not damped:
        for link in data["flexible_links"]:
            for direction in ("bending_y", "bending_z"):
                link[direction]["damping_ratios"] = 0.0
        for joint in data["elastic_joints"]:
            joint["damping"] = 0.0
    return SystemModel(read_model_config(ConfigReader(copy.deepcopy(data), source="test")))


def initial_state(system: SystemModel) -> tuple[np.ndarray, np.ndarray]:
    q, v = system.neutral(), np.zeros(system.nv)
    target, bus = system.base_joint("target"), system.base_joint("servicer")
    q[system.q_slice(target)] = [3.0, 0.2, 0.5, *pin.Quaternion(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3)).coeffs()]
    v[system.v_slice(target)] = [0.01, -0.02, 0.0, 0.05, -0.03, 0.02]
    v[system.v_slice(bus)] = [0.02, 0.0, -0.01, 0.002, -0.001, 0.003]
    for name, angle in zip(system.arm_joints, ARM_HOME):
        system.set_joint_angle(q, name, angle)
    flexibility = system.flexibility
    for mode in flexibility.modal:
        q[mode.q] = mode.scale * MODAL
    flexibility.relax(q, v, {name: DEFLECTION for name in system.arm_joints})
    return q, v


def motor_pd(system: SystemModel, state) -> np.ndarray:
    """test_conservation's arm torque with the motor angle theta_m = phi / N and its rate."""
    joints = [system.flexibility.elastic(n) for n in system.arm_joints]
    theta = np.array([state.q[j.rotor_q] / j.joint.gear_ratio for j in joints])
    rate = np.array([state.v[j.rotor_v] / j.joint.gear_ratio for j in joints])
    return ARM_AMPLITUDE * np.sin(ARM_OMEGA * state.t) - ARM_KP * (theta - ARM_HOME) - ARM_KD * rate


def run(damped: bool, integrator: str = "rk4", duration: float = DURATION, dt: float = DT):
    system = servicer(damped)
    q0, v0 = initial_state(system)
    sim = Simulator(system, SimulationSettings(dt=dt, integrator=integrator), q0, v0)
    first, samples = sim.observe(), []
    data = system.model.createData()
    p_peak = l_peak = 0.0
    stride = round(0.1 / dt)
    for k in range(round(duration / dt)):
        sim.step(motor_pd(system, sim.state), wheel_torque(sim.state.t))
        if k % stride == stride - 1:
            obs = sim.observe()
            samples.append(obs)
            p, l_ = body_momenta_scale(system.model, data, obs.q, obs.v)
            p_peak, l_peak = max(p_peak, p), max(l_peak, l_)
    return first, samples, p_peak, l_peak


def residuals(result) -> tuple[float, float, float]:
    """Largest relative linear and angular momentum drift and energy residual of a run."""
    first, samples, p_peak, l_peak = result
    dp = max(np.linalg.norm(s.momentum.linear - first.momentum.linear) for s in samples) / p_peak
    dl = max(np.linalg.norm(s.momentum.angular - first.momentum.angular) for s in samples) / l_peak
    energy0 = first.momentum.kinetic_energy + first.elastic_energy
    scale = max(abs(s.actuator_work) for s in samples) + energy0
    de = max(abs(s.momentum.kinetic_energy + s.elastic_energy - energy0 - (s.actuator_work - s.dissipated_energy))
             for s in samples) / scale
    return dp, dl, de


@pytest.fixture(scope="module")
def undamped():
    """Runs at DT and at 2 DT."""
    return run(damped=False), run(damped=False, dt=2 * DT)


def test_momentum_is_conserved_with_modes_and_elastic_joints(undamped):
    fine, coarse = undamped
    first, samples, p_peak, l_peak = fine
    assert max(np.abs(s.flexible.position[:4]).max() for s in samples[-5:]) > 1e-4   # m: the modes still ring
    assert p_peak > 1.0 and l_peak > 1.0
    dp, dl, _ = residuals(fine)
    dp_coarse, dl_coarse, _ = residuals(coarse)
    print(f"\nmomentum drift / peak: linear {dp:.2e} angular {dl:.2e} at {DT} s; {dp_coarse:.2e} {dl_coarse:.2e} "
          f"at {2 * DT} s")
    assert dp <= 1e-9 and dl <= 1e-9
    assert dp_coarse / dp > 10.0 and dl_coarse / dl > 10.0          # RK4 truncation, not a modelling error
    for s in samples:           # no external force: the centre of mass moves uniformly
        assert np.linalg.norm(s.momentum.com - first.momentum.com - first.momentum.com_velocity * s.t) < 1e-9


def test_energy_balances_against_actuator_work_without_damping(undamped):
    fine, coarse = undamped
    first, samples, _, _ = fine
    assert first.elastic_energy > 0.01 and all(s.dissipated_energy == 0.0 for s in samples)
    de, de_coarse = residuals(fine)[2], residuals(coarse)[2]
    print(f"\nenergy residual / energy moved: {de:.2e} at {DT} s, {de_coarse:.2e} at {2 * DT} s")
    assert de <= 2e-6
    assert de_coarse / de > 10.0


def test_dampers_take_what_the_energy_balance_says():
    result = run(damped=True)
    first, samples, p_peak, _ = result
    last = samples[-1]
    assert last.dissipated_energy > 0.2 * first.elastic_energy        # the springs' start energy, largely damped
    dp, _, de = residuals(result)
    print(f"\ndamped: dissipated {last.dissipated_energy:.4g} J of {first.elastic_energy:.4g} J elastic at the start; "
          f"energy residual {de:.2e}, momentum drift {dp:.2e}")
    assert de <= 2e-6 and dp <= 1e-9


def test_semi_implicit_euler_runs_the_flexible_model():
    """The cheap integrator stays stable at 1 ms (omega dt = 0.41 < 2) and first order: momentum drifts, bounded."""
    first, samples, p_peak, _ = run(damped=False, integrator="semi_implicit_euler", duration=2.0)
    last = samples[-1]
    assert np.all(np.isfinite(last.q)) and np.abs(last.flexible.position[:4]).max() < 0.01   # m: modes bounded
    assert np.linalg.norm(last.momentum.linear - first.momentum.linear) < 1e-2 * p_peak


def test_time_step_that_does_not_resolve_the_modes_is_refused():
    system = servicer(damped=True)
    q0, v0 = initial_state(system)
    with pytest.raises(ConfigError) as raised:
        Simulator(system, SimulationSettings(dt=0.01), q0, v0)
    error = raised.value
    assert error.field == "simulation.dt"
    largest = float(str(error).split("use dt <= ")[1].split(" s")[0])
    assert 1e-3 < largest < 0.01
    Simulator(system, SimulationSettings(dt=largest), q0, v0)      # the step it names is accepted
