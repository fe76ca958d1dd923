"""A single reaction wheel spun up on a free bus: exact momentum exchange (analytic single-axis case).

Bus (diagonal inertia) with one wheel on its z axis, through its CoM. With a wheel torque tau about z,
  bus:   I_b  dw_b/dt = -tau
  wheel: J_w (dw_b/dt + dW/dt) = tau          (W: wheel speed relative to the bus)
so w_b(t) = -tau t / I_b and W(t) = tau t (1/J_w + 1/I_b); the total angular momentum stays zero.
Constant torque: the RK4 solution is exact up to round-off, hence the 1e-12 relative tolerance.
"""
import textwrap

import numpy as np
import pytest

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

I_BUS = (80.0, 90.0, 100.0)   # kg m^2, principal, base_link frame
J_WHEEL = 0.05                # kg m^2, spin axis
J_TRANSVERSE = 0.03           # kg m^2


def write_bus(tmp_path, max_torque=1.0, max_speed=1000.0):
    urdf = tmp_path / "bus.urdf"
    urdf.write_text(textwrap.dedent(f"""\
        <robot name="bus">
          <link name="base_link"><inertial><mass value="200"/>
            <inertia ixx="{I_BUS[0]}" iyy="{I_BUS[1]}" izz="{I_BUS[2]}" ixy="0" ixz="0" iyz="0"/></inertial></link>
          <link name="wheel"><inertial><mass value="3"/>
            <inertia ixx="{J_TRANSVERSE}" iyy="{J_TRANSVERSE}" izz="{J_WHEEL}" ixy="0" ixz="0" iyz="0"/>
          </inertial></link>
          <joint name="wheel_joint" type="continuous"><parent link="base_link"/><child link="wheel"/>
            <origin xyz="0 0 0"/><axis xyz="0 0 1"/></joint>
        </robot>"""))
    config = tmp_path / "bus.yaml"
    config.write_text(textwrap.dedent(f"""\
        name: single_wheel_bus
        subtrees:
          - {{name: bus, urdf: {urdf}, base_joint: free_flyer, base_link: base_link}}
        reaction_wheels: {{joints: [wheel_joint], max_torque: {max_torque}, max_speed: {max_speed}}}
        """))
    return SystemModel(load_model_config(config))


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit_euler"])
def test_wheel_spin_up_exchanges_momentum_exactly(tmp_path, integrator):
    system = write_bus(tmp_path)
    tau, duration = 0.2, 2.0
    sim = Simulator(system, SimulationSettings(dt=1e-3, integrator=integrator))
    for _ in range(int(round(duration / 1e-3))):
        sim.step(wheel_torque=[tau])
    t = sim.state.t
    bus_rate = sim.state.v[system.v_slice(system.subtree("bus").config.root_joint_name)][3:]
    wheel_rate = sim.state.v[system.wheel_v[0]]
    # Semi-implicit Euler is exact too for a constant acceleration in the rates (v+ = v + dt a).
    assert bus_rate[2] == pytest.approx(-tau * t / I_BUS[2], rel=1e-12)
    assert np.abs(bus_rate[:2]).max() < 1e-15
    assert wheel_rate == pytest.approx(tau * t * (1 / J_WHEEL + 1 / I_BUS[2]), rel=1e-12)
    obs = sim.observe()
    assert np.linalg.norm(obs.momentum.angular) < 1e-12 * J_WHEEL * abs(wheel_rate)


def test_wheel_torque_and_speed_saturate(tmp_path):
    system = write_bus(tmp_path, max_torque=0.1, max_speed=5.0)
    sim = Simulator(system, SimulationSettings(dt=1e-3))
    sim.step(wheel_torque=[0.5])                     # clipped to 0.1 N m
    assert sim.observe().wheel_torque[0] == pytest.approx(0.1)
    assert sim.observe().saturated[-1]
    for _ in range(5000):
        sim.step(wheel_torque=[0.1])
    speed = sim.state.v[system.wheel_v[0]]
    # Torque is cut once |W| >= max_speed: the overshoot is at most one step of acceleration.
    assert 5.0 <= speed <= 5.0 + 1e-3 * 0.1 * (1 / J_WHEEL + 1 / I_BUS[2]) + 1e-12
    sim.step(wheel_torque=[-0.1])                    # braking a saturated wheel is allowed
    assert sim.observe().wheel_torque[0] == pytest.approx(-0.1)
