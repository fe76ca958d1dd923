"""The holonomy monitor on a flexible model (servicer_flexible.yaml: two flexible links, seven elastic joints):
modal coordinates and motor angles are shape coordinates of the momentum constraint (they carry momentum), the tip
chains follow them (docs/flexibility.md eq. 14, system_partition.shape_basis).

- Connection: with zero momentum the bus twist is K times the shape rates, K over every shape coordinate (modal,
  motor, joint); the simulated state has the modes and motors moving, so leaving them out of the constraint would
  miss their share of the bus motion (checked: dropping their columns misses it by more than 1e-6 relative).
- Residual: the momentum residual of a free run stays at round-off; an external force shows as its impulse.
- Curvature: X_i(K_j) from Pinocchio's analytic derivatives equals the central difference of K along the field X_i
  (which moves the tip chains with the modes), for pairs mixing modal, motor and joint coordinates; F is
  antisymmetric; linear momentum integrable (residual at round-off), the attitude's nonholonomy rank 3.
Tolerances as test_holonomy_curvature.py: central differences with h = 1e-6 (truncation and round-off ~1e-9 of
the largest derivative).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.model.system_model import build_model
from space_robot_dynamics.simulation.initial_state import initial_state_from
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_monitoring import HolonomyMonitor, load_monitor_settings
from space_robot_monitoring.mechanical_connection import Fibre, MechanicalConnection
from space_robot_monitoring.momentum_matrices import CentroidalMomentum
from space_robot_monitoring.system_partition import subtree_partition

FD_STEP, FD_RTOL = 1e-6, 1e-6


@pytest.fixture(scope="module")
def system():
    return build_model("servicer_flexible")


@pytest.fixture(scope="module")
def moving(system):
    """A free run (no command) from a state with every modal coordinate and spring deflected: 0.3 s in (RK4 at
    0.25 ms: the momentum stays at ~1e-11 kg m/s of zero; at 1 ms, with these modes ringing, ~1e-8)."""
    q0, v0 = initial_state_from(system, {
        "target": {"position": [1.7, 0.0, 0.8]},
        "joint_positions": {"right_j1": -1.2, "right_j3": 2.2, "right_j5": 0.6},
        "elastic_joint_deflections": {f"right_j{i}": 0.01 for i in range(7)},
        "modal_coordinates": {m.name: 1e-3 for m in system.flexibility.modal}})
    sim = Simulator(system, SimulationSettings(dt=2.5e-4), q0, v0)
    for _ in range(1200):
        sim.step()
    return sim


def test_connection_includes_modal_and_motor_coordinates(system, moving):
    monitor = HolonomyMonitor(system, load_monitor_settings("config/monitor.yaml"))
    s = moving.state
    report = monitor.update(s.t, s.q, s.v)
    names = report.shape_joints
    assert {"right_l4/bending_z_1", "right_j3/rotor", "right_j3"} <= set(names)
    assert not any("/tip_" in n for n in names)
    rates = s.v[[system.v_index(n) for n in names]]
    bus = s.v[system.v_slice(system.base_joint("servicer"))]
    assert np.allclose(bus, report.connection @ rates, rtol=0, atol=1e-7 * np.abs(bus).max())
    flexible = np.array([n.startswith(("right_l2/", "right_l4/")) or n.endswith("/rotor") for n in names])
    rigid_share = report.connection[:, ~flexible] @ rates[~flexible]
    assert np.abs(bus - rigid_share).max() > 1e-6 * np.abs(bus).max()
    assert report.constraint_rank == 6 and report.nonholonomy_rank == 3
    assert report.linear_integrability_residual < 1e-9
    assert report.level == "OK"


def test_residual_at_round_off_and_an_external_force_shows(system, moving):
    monitor = HolonomyMonitor(system, load_monitor_settings("config/monitor.yaml"))
    sim = Simulator(system, SimulationSettings(dt=1e-3), moving.state.q, moving.state.v)
    report = monitor.update(0.0, sim.state.q, sim.state.v)
    for _ in range(100):
        sim.step()
    report = monitor.update(sim.state.t, sim.state.q, sim.state.v)
    assert report.linear_residual_fraction < 1e-9 and report.angular_residual_fraction < 1e-9
    sim.set_external_wrench("right_l4", [0.0, 0.0, 2.0])         # 2 N on the flexible forearm, world z
    for _ in range(100):
        sim.step()
    report = monitor.update(sim.state.t, sim.state.q, sim.state.v)
    assert np.allclose(report.linear_momentum_residual, [0.0, 0.0, 0.2], rtol=0, atol=1e-9)   # N s = 2 N x 0.1 s
    assert report.level != "OK"


def test_curvature_against_finite_differences(system, moving):
    model = system.model
    robot = subtree_partition(system, "servicer")
    connection = MechanicalConnection(model, [CentroidalMomentum(model)], [Fibre(robot.root_joint_id, robot.base_v)],
                                      robot.joint_v, robot.shape_basis)
    q = moving.state.q
    result = connection.compute(q)
    fields = robot.shape_basis.copy()
    fields[robot.base_v] = result.K
    names = list(robot.joint_names)
    picks = [names.index(n) for n in ("right_j1", "right_j3/rotor", "right_l2/bending_y_1", "right_l4/bending_z_1")]
    scale = np.abs(result.dK).max()
    for i in picks:
        ahead = connection.connection(pin.integrate(model, q, FD_STEP * fields[:, i]))[0]
        behind = connection.connection(pin.integrate(model, q, -FD_STEP * fields[:, i]))[0]
        numeric = (ahead - behind) / (2 * FD_STEP)
        np.testing.assert_allclose(result.dK[i].T, numeric, rtol=0, atol=FD_RTOL * scale)
    np.testing.assert_allclose(result.F, -result.F.transpose(1, 0, 2), atol=1e-14 * np.abs(result.F).max())
