"""The holonomy monitor in orbit (docs/orbit.md sec. 7): gravity gradient is physics, not an external-force finding.

The capture scenario's servicer and target, in a 770 km orbit and in free space, with the same damped arm and wheel
torques for 1.5 s; the monitor takes the orbit's state as the messages give it (relative to LVLH) and converts it
(orbital_view.py). Its momentum residual fractions in orbit must equal free space's (only the robot's own integration
error, ~1e-8 of the capacity) to 1e-9: the LVLH rotation and the tidal impulse (~1e-6 of the capacity after 1.5 s, the
fraction that grows to the 1e-3 warning level in ~1 min of a heavy stack) are taken out. Without the wrenches the same
residual is ~1e-6: the check can fail.
"""
import numpy as np
import pytest

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import Simulator
from space_robot_monitoring.orbital_view import OrbitalView
from space_robot_nodes.monitor_core import read_monitor
from space_robot_scenario.scenario import load_scenario

ORBIT = {"altitude": 770000.0, "inclination_deg": 98.5}


def residuals(in_orbit: bool, compensate: bool = True) -> np.ndarray:
    scenario = load_scenario("capture", {"scenario": {"orbit": ORBIT}} if in_orbit else None)
    system = SystemModel(scenario.model)
    q0, v0 = scenario.initial_state(system)
    sim = Simulator(system, scenario.simulation, q0, v0, orbit=scenario.orbit)
    monitor = read_monitor(scenario.monitor_data, scenario.monitor_source, system)
    view = OrbitalView(system, scenario.orbit) if in_orbit else None
    out = []
    for k in range(1500):
        sim.step(0.3 * np.sin(np.arange(7) + sim.state.t) - 5.0 * sim.state.v[system.arm_v], [0.01, 0.0, -0.01])
        if k % 20 == 19:
            q, v, wrenches = sim.state.q, sim.state.v, None
            if view is not None:
                q, v, wrenches = view.in_frame(sim.state.t, *sim.lvlh_state())
            report = monitor.update(sim.state.t, q, v, body_wrenches=wrenches if compensate else None)
            assert report.level == "OK"
            out.append((report.linear_residual_fraction, report.angular_residual_fraction))
    return np.array(out)


@pytest.fixture(scope="module")
def free_space():
    return residuals(in_orbit=False)


def test_the_monitor_in_orbit_reports_what_it_reports_in_free_space(free_space):
    np.testing.assert_allclose(residuals(in_orbit=True), free_space, rtol=0, atol=1e-9)


def test_without_gravity_s_impulse_the_monitor_would_see_an_external_force(free_space):
    assert np.max(np.abs(residuals(in_orbit=True, compensate=False) - free_space)) > 1e-7
