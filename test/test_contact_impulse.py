"""The grasp impulse (space_robot_dynamics/contact/impulse.py, grasp.py): exact momentum transfer and the
analytic plastic-impact energy loss.

Random states with the fixture within the capture envelope at the hand, both spacecraft drifting and tumbling,
the arm moving; the gripper closes at the first step. Checked:
- the total linear and angular momentum (Pinocchio's centroidal momentum, independent of the solve) is the same
  before and after the impulse to round-off (1e-13 of the largest single-subtree momentum: the impulse is an
  internal action-reaction pair);
- the relative twist of hand and fixture is zero after it (J v+ = 0, plastic);
- the kinetic energy lost equals the analytic plastic-impact loss 1/2 u^T (J M^-1 J^T)^-1 u, u = J v- (Kelvin's
  theorem; impulse.py eq. 2), assembled from CRBA and frame Jacobians, to 1e-9 relative (the solve's condition);
- on the flexible servicer (coupling rows) the same, with the tip chains still on their modal coordinates.
"""
import numpy as np
import pinocchio as pin
import pytest
from grasp_states import drifting, fixture_at_hand

from space_robot_dynamics import build_model
from space_robot_dynamics.contact.contact_events import GRASP
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_dynamics.simulation.system_momentum import body_momenta_scale

LOCAL = pin.ReferenceFrame.LOCAL


@pytest.fixture(scope="module")
def flexible():
    return build_model("servicer_flexible")


def analytic_loss(system, q, v_minus, loop):
    """1/2 u^T (J M^-1 J^T)^-1 u with J from frame Jacobians (LOCAL, c1 and c2), M from CRBA."""
    model, data = system.model, system.model.createData()
    mass = pin.crba(model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    pin.computeJointJacobians(model, data, q)
    c1Mc2 = (data.oMi[loop.joint1] * loop.placement1).actInv(data.oMi[loop.joint2] * loop.placement2)
    J = pin.getFrameJacobian(model, data, loop.joint1, loop.placement1, LOCAL) - c1Mc2.toActionMatrix() @ \
        pin.getFrameJacobian(model, data, loop.joint2, loop.placement2, LOCAL)
    if system.coordinates is not None:          # the reduced coordinates: M_r = T^T M T, J_r = J T
        T = system.coordinates.T
        mass, J = T.T @ mass @ T, J @ T
        v_minus = np.linalg.lstsq(T, v_minus, rcond=None)[0]
    u = J @ v_minus
    return 0.5 * u @ np.linalg.solve(J @ np.linalg.solve(mass, J.T), u), u


def grasp_now(system, rng):
    q = fixture_at_hand(system, offset=rng.normal(0.0, 0.005, 3), tilt=rng.normal(0.0, 0.01))
    v = drifting(system, rng, arm_rate=0.002, base_rate=(0.003, 0.002), target_rate=(0.003, 0.004))
    sim = Simulator(system, SimulationSettings(dt=1e-3), q, v)
    before = sim.observe()
    sim.command_gripper(True)
    sim.state = sim._contact_step_start(sim.state)        # the impulse alone, without the step after it
    return sim, before, sim.observe()


@pytest.mark.parametrize("model_name", ["servicer_target", "servicer_flexible"])
@pytest.mark.parametrize("seed", range(4))
def test_impulse_conserves_momentum_and_takes_the_plastic_loss(servicer_target, flexible, model_name, seed):
    system = servicer_target if model_name == "servicer_target" else flexible
    rng = np.random.default_rng(seed)
    sim, before, after = grasp_now(system, rng)
    event = sim.contact_events[-1]
    assert event.kind == GRASP, event.message
    p_scale, l_scale = body_momenta_scale(system.model, system.model.createData(), before.q, before.v)
    assert np.abs(after.momentum.linear - before.momentum.linear).max() < 1e-13 * p_scale
    assert np.abs(after.momentum.angular - before.momentum.angular).max() < 1e-13 * l_scale
    assert event.momentum.relative_change < 1e-13
    loop = sim.grasp.loop
    _error_p, error_v = loop.errors(system.model.createData(), after.q, after.v)
    expected, u = analytic_loss(system, before.q, before.v, loop)
    assert np.abs(error_v).max() < 1e-12 * np.abs(u).max()
    lost = before.momentum.kinetic_energy - after.momentum.kinetic_energy
    assert expected > 0.0
    assert abs(lost - expected) < 1e-9 * expected
    assert abs(event.energy_loss - expected) < 1e-9 * expected
    assert abs(after.dissipated_energy - before.dissipated_energy - expected) < 1e-9 * expected
    if system.coordinates is not None:          # the tip chains still follow the modal coordinates
        v = after.v.copy()
        system.coordinates.project(after.q.copy(), v)
        assert np.abs(v - after.v).max() < 1e-11 * np.abs(after.v).max()      # the solve's round-off
