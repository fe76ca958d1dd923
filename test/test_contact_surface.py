"""Surface contact (space_robot_dynamics/contact/surface_contact.py, surface_mode.py): the constraint rows against
finite differences, touchdown as a plastic normal impulse, the contact held with a non-negative normal force, and
separation when the surface would have to pull.

Finite differences: Phi(q (+) e v) and the rows J_n(q (+) e v) v, central, e = 1e-6 (truncation ~e^2 = 1e-12,
round-off ~1e-16 / e = 1e-10 relative): dPhi/dt = J_n v and d/dt (J_n v) = gamma (the drift without its control) to
1e-7 relative, on the target's plane face and on the Hubble's barrel (a cylinder: its curvature term matters).
"""
import numpy as np
import pinocchio as pin
import pytest
from grasp_states import drifting, fixture_at_hand

from space_robot_dynamics import build_model
from space_robot_dynamics.contact.contact_events import GRASP, SEPARATION, TOUCHDOWN
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

EPS = 1e-6


def rows(surface, q, v):
    data = surface.model.createData()
    surface.explicit.kinematics(data, q, v)
    jacobian, drift = surface.constraint_rows(data)
    phi, normal, _point = surface.geometry(data)
    rate = float(jacobian[0] @ v)
    return phi, jacobian[0], float(drift[0]) - surface.kd * rate - surface.kp * phi


def check_rows(surface, q, v):
    model = surface.model
    phi, jacobian, gamma = rows(surface, q, v)
    plus, minus = pin.integrate(model, q, EPS * v), pin.integrate(model, q, -EPS * v)
    (phi_p, j_p, _), (phi_m, j_m, _) = rows(surface, plus, v), rows(surface, minus, v)
    rate = jacobian @ v
    assert (phi_p - phi_m) / (2 * EPS) == pytest.approx(rate, rel=1e-7, abs=1e-12)
    assert (j_p @ v - j_m @ v) / (2 * EPS) == pytest.approx(gamma, rel=1e-7, abs=1e-10)
    return phi, rate, gamma


@pytest.mark.parametrize("seed", range(4))
def test_plane_rows_against_finite_differences(servicer_target, seed):
    rng = np.random.default_rng(seed)
    sim = Simulator(servicer_target)
    surface = sim.surface_mode.surfaces["target_face"]
    q = fixture_at_hand(servicer_target, offset=rng.normal(0.0, 0.05, 3))
    v = drifting(servicer_target, rng, arm_rate=0.3, base_rate=(0.05, 0.1), target_rate=(0.05, 0.2))
    _phi, _rate, gamma = check_rows(surface, q, v)
    assert abs(gamma) > 1e-4                    # the velocity terms are exercised


@pytest.mark.parametrize("seed", range(4))
def test_cylinder_rows_against_finite_differences(seed):
    hubble = build_model("hubble")
    rng = np.random.default_rng(seed)
    sim = Simulator(hubble)
    surface = sim.surface_mode.surfaces["barrel"]
    q = pin.integrate(hubble.model, hubble.neutral(), rng.normal(0.0, 0.5, hubble.nv))
    start = hubble.q_slice(hubble.base_joint("target")).start
    q[start:start + 3] = [6.0, 1.0, 0.5] + rng.normal(0.0, 0.5, 3)
    v = rng.normal(0.0, 0.2, hubble.nv)
    _phi, _rate, gamma = check_rows(surface, q, v)
    assert abs(gamma) > 1e-4


def at_the_face(system, gap, rng):
    """The hand `gap` m outside the target's face, moving towards it at ~1 cm/s."""
    q = fixture_at_hand(system)
    model, data = system.model, system.model.createData()
    pin.framesForwardKinematics(model, data, q)
    approach = data.oMf[model.getFrameId("right_hand")].rotation[:, 2]
    base = system.q_slice(system.base_joint("target"))
    q[base.start:base.start + 3] -= (0.1 - gap) * approach         # the face is 0.1 m behind the fixture's tip
    v = drifting(system, rng, arm_rate=0.0, base_rate=(0.0, 0.0), target_rate=(0.0, 0.0))
    servicer = system.v_slice(system.base_joint("servicer"))
    pin.forwardKinematics(model, data, q)
    v[servicer.start:servicer.start + 3] = data.oMi[system.subtree("servicer").root_joint_id].rotation.T @ (
        0.01 * approach)                                             # the whole servicer drifts in, body frame
    return q, v


def test_touchdown_hold_and_separation(servicer_target):
    system = servicer_target
    rng = np.random.default_rng(0)
    q, v = at_the_face(system, 0.0003, rng)
    sim = Simulator(system, SimulationSettings(dt=1e-3), q, v)
    sim.set_contact_surface("target_face")
    before = None
    for _ in range(100):
        before = sim.observe()
        sim.step()
        if sim.contact_events:
            break
    event = sim.contact_events[-1]
    assert event.kind == TOUCHDOWN, event.message
    after = sim.observe()
    assert event.impulse[0] > 0.0 and event.energy_loss > 0.0
    assert event.momentum.relative_change < 1e-13
    surface = sim.surface_mode.surfaces["target_face"]
    _phi, rate = surface.distance(system.model.createData(), after.q, after.v)
    assert abs(rate) < 1e-12                                     # plastic: no normal relative velocity left
    assert before is not None
    # pushing the hand into the face (the arm torques of 5 N at the hand along -n): the contact holds, lambda_n >= 0
    model, data = system.model, system.model.createData()
    pin.computeJointJacobians(model, data, after.q)
    hand = pin.getFrameJacobian(model, data, model.getFrameId("right_hand"), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    normal = -data.oMf[model.getFrameId("right_hand")].rotation[:, 2]           # the face's outward normal
    press = hand[:3, system.arm_v].T @ (-5.0 * normal)
    for _ in range(300):
        sim.step(press)
        assert sim.contact_state().mode == "surface"
        assert sim.contact_state().force[0] >= 0.0
    # the penetration at touchdown (at most one step's approach) decays as (1 + wn t) exp(-wn t) (Baumgarte,
    # critically damped at wn = 20 rad/s)
    wn, t = surface.config.stabilization.natural_frequency, 0.3
    penetration = event.figures["penetration_m"]
    assert 0.0 < penetration <= 0.011 * 1e-3
    assert sim.contact_state().drift_position < 1.05 * penetration * (1 + wn * t) * np.exp(-wn * t)
    # pulling away: the surface would have to pull, the point leaves it
    for _ in range(50):
        sim.step(-press)
        if sim.contact_events[-1].kind == SEPARATION:
            break
    assert sim.contact_events[-1].kind == SEPARATION and "normal force" in sim.contact_events[-1].message
    assert sim.contact_state().mode == "free"


def test_a_grasp_ends_a_surface_contact(servicer_target):
    system = servicer_target
    rng = np.random.default_rng(1)
    sim = Simulator(system, SimulationSettings(dt=1e-3), fixture_at_hand(system),
                    drifting(system, rng, arm_rate=0.001, base_rate=(0.001, 0.001), target_rate=(0.001, 0.001)))
    sim.surface_mode.armed = sim.surface_mode.surfaces["target_face"]
    sim.surface_mode.in_contact = True                           # as if touching (the grasp takes over)
    sim._activate(sim.surface_mode.armed)
    sim.command_gripper(True)
    sim.step()
    kinds = [e.kind for e in sim.contact_events]
    assert kinds == [GRASP, SEPARATION]
    assert sim.contact_state().mode == "grasp"
