"""External wrenches in the simulator (external_wrenches.py), verified against independent formulations and laws.

References, none of which goes through the conversion to Pinocchio's fext under test:
- the Jacobian-transpose formulation: M(q) vdot = tau - h(q, v) + sum_k J_k(q)^T w_k with crba, the nonlinear
  effects and each wrench w_k = (f, tau + p x f) written out in world axes at the world origin by hand from the
  frame placement, against pinocchio.aba with the fext list;
- Newton-Euler for the whole system: d h_G / dt = (sum f, sum (p - c) x f + tau), with d h_G / dt from
  Pinocchio's centroidal momentum time variation at the computed acceleration (internal joint and wheel
  torques drop out);
- the equivalence principle: the force m_j g at every body's centre of mass is a uniform gravity field g;
- time integration: a constant world force changes p by F t and a constant world couple L_G by tau t; an
  off-centre force changes L about the world origin by (integral of p_P dt) x F; energy T - T0 = actuator work
  + external work.

Tolerances. Accelerations: the two routes solve with M(q), whose condition number on these states is ~4e6, so
they may differ by ~kappa eps ~ 1e-9 of max |vdot|: bound 1e-8. Momentum laws: round-off of sums of terms of
the size of the largest body momentum, bound 1e-9 relative. Over time, RK4 at 1 ms has a local error ~1e-15
per unit rate; 1e3 steps stay far below the 1e-9 relative bounds, which a wrong frame, a missed point shift or
a force counted twice exceeds by orders of magnitude. Measured (Pinocchio 4.1 and 3.4): accelerations 2e-16,
momentum rates 1e-17, momentum and energy over 1000 steps 1e-14 to 3e-13 of their scales.
"""
import numpy as np
import pinocchio as pin
import pytest
from model_states import random_state

from space_robot_dynamics.errors import CommandError
from space_robot_dynamics.simulation.external_wrenches import ExternalWrenches
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

DT = 1e-3
# Internal torques for the runs: sized per joint like the Sawyer's (the 0.33 kg wrist link spins up under the
# 2 N m the shoulder takes) and damped, so the arm moves at its usual rates (< 3 rad/s) over the run.
ARM_SCALE = np.array([2.0, 3.0, 1.0, 1.0, 0.1, 0.1, 0.02])     # N m
# (frame, force N, torque N m, expressed_in, point m in the frame): a thruster on the bus, a disturbance on the
# forearm, a docking load in the axes of the target's grapple fixture and one on the hand, a couple on a wheel.
# The fixture's and the hand's frames are rotated on their joints, so the local conversion is exercised.
WRENCHES = [
    ("base_link", [0.0, 2.0, -1.0], [0.1, 0.0, 0.3], "local", [0.5, -0.4, 0.3]),
    ("right_l3", [1.5, -0.5, 0.7], [0.0, -0.2, 0.05], "world", [0.1, 0.02, -0.03]),
    ("target/grapple_frame", [-3.0, 1.0, 0.5], [0.4, 0.2, -0.1], "local", [0.0, 0.0, 0.05]),
    ("right_hand", [0.2, 0.1, -0.3], [0.01, 0.0, 0.02], "local", [0.0, 0.0, 0.1]),
    ("rw_y", [0.0, 0.0, 0.0], [0.01, 0.02, -0.03], "local", None),
]


def state(system, seed=3):
    return random_state(system, np.random.default_rng(seed), wheel_speed=30.0)


def arm_torque(sim, k):
    """Sinusoids plus damping (N m), arm joint order."""
    return ARM_SCALE * (np.sin(0.003 * k + np.arange(7)) - sim.state.v[sim.system.arm_v])


def set_all(sim, wrenches=WRENCHES):
    for k, (frame, force, torque, expressed_in, point) in enumerate(wrenches):
        sim.set_external_wrench(frame, force, torque, expressed_in, point, label=f"w{k}")


def world_wrenches(model, q, wrenches=WRENCHES):
    """Each wrench in world axes: (force, couple, world point of application), from the frame placement."""
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    out = []
    for frame, force, torque, expressed_in, point in wrenches:
        placement = data.oMf[model.getFrameId(frame)]
        rotation = placement.rotation if expressed_in == "local" else np.eye(3)
        where = placement.act(np.zeros(3) if point is None else np.asarray(point, float))
        out.append((rotation @ np.asarray(force, float), rotation @ np.asarray(torque, float), where,
                    model.frames[model.getFrameId(frame)].parentJoint))
    return out


def aba_with_wrenches(model, wrenches, q, v, tau):
    """pinocchio.aba with the fext of external_wrenches.py for `wrenches` (the list format of WRENCHES)."""
    converted = ExternalWrenches(model)
    for k, (frame, force, torque, expressed_in, point) in enumerate(wrenches):
        converted.set(frame, force, torque, expressed_in, point, label=f"w{k}")
    return pin.aba(model, model.createData(), q, v, tau, converted.joint_forces(q))


def test_fext_matches_the_jacobian_transpose_formulation(servicer_target):
    system, model = servicer_target, servicer_target.model
    q, v = state(system)
    tau = np.random.default_rng(5).normal(0.0, 1.0, model.nv)
    data = model.createData()
    mass = pin.crba(model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    h = pin.nonLinearEffects(model, data, q, v)
    pin.computeJointJacobians(model, data, q)
    generalized = np.zeros(model.nv)
    for force, couple, point, joint in world_wrenches(model, q):
        jacobian = pin.getJointJacobian(model, data, joint, pin.ReferenceFrame.WORLD)   # spatial, world origin
        generalized += jacobian.T @ np.r_[force, couple + np.cross(point, force)]
    expected = np.linalg.solve(mass, tau - h + generalized)
    got = aba_with_wrenches(model, WRENCHES, q, v, tau)
    free = pin.aba(model, data, q, v, tau)
    scale = np.abs(expected).max()
    assert np.abs(got - expected).max() < 1e-8 * scale
    assert np.abs(free - expected).max() > 1e-3 * scale       # the wrenches matter at this state


def test_total_wrench_is_the_rate_of_centroidal_momentum(servicer_target):
    """Newton-Euler for the whole system, with arm and wheel torques acting too (internal: no effect on h_G)."""
    system, model = servicer_target, servicer_target.model
    q, v = state(system, seed=4)
    tau = np.zeros(model.nv)
    tau[system.arm_v], tau[system.wheel_v] = np.linspace(-5.0, 5.0, len(system.arm_v)), [0.1, -0.2, 0.05]
    vdot = aba_with_wrenches(model, WRENCHES, q, v, tau)
    data = model.createData()
    rate = pin.computeCentroidalMomentumTimeVariation(model, data, q, v, vdot)   # about the CoM, world axes
    com = data.com[0]
    expected_force = sum(f for f, _, _, _ in world_wrenches(model, q))
    expected_moment = sum(c + np.cross(p - com, f) for f, c, p, _ in world_wrenches(model, q))
    hg = pin.computeCentroidalMomentum(model, data, q, v)
    # scale of the terms whose sum is zero up to round-off: the momentum carried times the fastest rate
    scale = max(np.abs(expected_force).max(), np.abs(expected_moment).max(),
                np.abs(hg.vector).max() * np.abs(v).max())
    assert np.abs(rate.linear - expected_force).max() < 1e-9 * scale
    assert np.abs(rate.angular - expected_moment).max() < 1e-9 * scale


def test_local_and_world_wrenches_agree_after_conversion(servicer_target):
    system, model = servicer_target, servicer_target.model
    q, v = state(system, seed=6)
    local = [("right_hand", [1.0, -2.0, 0.5], [0.3, 0.1, -0.2], "local", [0.02, 0.05, -0.01])]
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    rotation = data.oMf[model.getFrameId("right_hand")].rotation
    world = [("right_hand", rotation @ local[0][1], rotation @ local[0][2], "world", local[0][4])]
    results = [aba_with_wrenches(model, wrenches, q, v, np.zeros(model.nv)) for wrenches in (local, world)]
    assert np.abs(results[0] - results[1]).max() < 1e-12 * np.abs(results[0]).max()


def uniform_field(model, g):
    """The force m_j g at the centre of mass of every body (joint frames carry the bodies' inertias)."""
    return [(model.names[j], model.inertias[j].mass * g, None, "world", model.inertias[j].lever)
            for j in range(1, model.njoints)]


def test_uniform_field_is_gravity_and_moves_the_system_as_one(servicer_target):
    system, model = servicer_target, servicer_target.model
    g = np.array([0.03, -0.02, 0.05])                          # m/s^2
    q, v = state(system, seed=7)
    heavy = model.copy()
    heavy.gravity = pin.Motion(g, np.zeros(3))
    expected = pin.aba(heavy, heavy.createData(), q, v, np.zeros(model.nv))
    field = uniform_field(model, g)
    assert np.abs(aba_with_wrenches(model, field, q, v, np.zeros(model.nv)) - expected).max() \
        < 1e-8 * np.abs(expected).max()

    forced = Simulator(system, SimulationSettings(dt=DT), q, v)
    set_all(forced, field)
    free = Simulator(system, SimulationSettings(dt=DT), q, v)
    start = forced.observe()
    for _ in range(500):
        forced.step()
        free.step()
    end, free_end = forced.observe(), free.observe()
    mass = sum(model.inertias[j].mass for j in range(1, model.njoints))
    p_scale = np.abs(start.momentum.linear).max() + mass * np.abs(g).max() * end.t
    assert np.abs(end.momentum.linear - start.momentum.linear - mass * g * end.t).max() < 1e-9 * p_scale
    assert np.abs(end.momentum.angular - start.momentum.angular).max() < 1e-9 * np.abs(start.momentum.angular).max()
    # a uniform field accelerates every body alike: joint motion and attitudes are those of the free run
    for sub in system.subtrees:
        qs = system.q_slice(sub.config.root_joint_name)
        assert np.abs(end.q[qs][3:] - free_end.q[qs][3:]).max() < 1e-9
        assert np.abs(end.q[qs][:3] - free_end.q[qs][:3] - 0.5 * g * end.t ** 2).max() < 1e-9
    assert np.abs(end.v[system.arm_v] - free_end.v[system.arm_v]).max() < 1e-9


def test_world_couple_on_the_bus_changes_angular_momentum_by_torque_times_time(servicer_target):
    system = servicer_target
    q, v = state(system, seed=8)
    torque = np.array([0.4, -0.3, 0.2])                        # N m, world axes
    sim = Simulator(system, SimulationSettings(dt=DT), q, v)
    sim.set_external_wrench("base_link", torque=torque)        # world axes by default
    start = sim.observe()
    for k in range(1000):
        sim.step(arm_torque(sim, k), [0.01, -0.01, 0.02])     # internal torques do not count
    end = sim.observe()
    scale = np.abs(start.momentum.angular).max() + np.abs(torque).max() * end.t
    assert np.abs(end.momentum.angular - start.momentum.angular - torque * end.t).max() < 1e-9 * scale
    assert np.abs(end.momentum.linear - start.momentum.linear).max() < 1e-9 * np.abs(start.momentum.linear).max()


def test_off_centre_force_changes_angular_momentum_by_its_moment(servicer_target):
    """A world force F at the target's grapple fixture: L about the world origin O changes by
    (integral of p_P(t) dt) x F, with p_P the fixture's path, integrated by Simpson's rule over the recorded
    steps (error ~ dt^4 |p'''''| ~ 1e-14 m s here)."""
    system, model = servicer_target, servicer_target.model
    q, v = state(system, seed=9)
    force = np.array([2.0, -1.0, 3.0])                         # N, world axes
    sim = Simulator(system, SimulationSettings(dt=DT), q, v)
    sim.set_external_wrench("target/grapple_frame", force)
    grapple, data = model.getFrameId("target/grapple_frame"), model.createData()

    def fixture(s):
        pin.framesForwardKinematics(model, data, s.q)
        return data.oMf[grapple].translation.copy()

    path = [fixture(sim.state)]
    origin = np.zeros(3)
    _, l_start = sim.momentum_about(origin)
    for _ in range(1000):
        sim.step()
        path.append(fixture(sim.state))
    _, l_end = sim.momentum_about(origin)
    path = np.array(path)
    weights = np.ones(len(path))
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    integral = DT / 3.0 * weights @ path                     # m s
    expected = np.cross(integral, force)
    assert np.linalg.norm(expected) > 1.0                     # the moment arm matters
    assert np.abs(l_end - l_start - expected).max() < 1e-9 * (np.abs(l_start).max() + np.abs(expected).max())


def test_energy_balance_includes_the_external_work(servicer_target):
    system = servicer_target
    q, v = state(system, seed=10)
    sim = Simulator(system, SimulationSettings(dt=DT), q, v)
    set_all(sim)
    start = sim.observe()
    for k in range(1000):
        sim.step(arm_torque(sim, k), [0.02, 0.0, -0.02])
    end = sim.observe()
    assert np.abs(end.v[system.arm_v]).max() < 3.0
    change = end.momentum.kinetic_energy - start.momentum.kinetic_energy
    assert abs(end.external_work) > 1e-2 and abs(end.actuator_work) > 1e-2
    scale = max(start.momentum.kinetic_energy, abs(end.external_work), abs(end.actuator_work))
    assert abs(change - end.actuator_work - end.external_work) < 1e-9 * scale


def test_clearing_restores_momentum_conservation(servicer_target):
    system = servicer_target
    q, v = state(system, seed=11)
    sim = Simulator(system, SimulationSettings(dt=DT), q, v)
    set_all(sim)
    sim.clear_external_wrench("w1")
    assert list(sim.external_wrenches) == ["w0", "w2", "w3", "w4"]
    sim.clear_external_wrench()
    assert sim.external_wrenches == {}
    for _ in range(5):
        sim.step()
    start = sim.observe()
    for _ in range(200):
        sim.step()
    end = sim.observe()
    assert end.external_work == 0.0
    assert np.abs(end.momentum.linear - start.momentum.linear).max() < 1e-12 * np.abs(start.momentum.linear).max()


def test_same_wrenches_same_bits(servicer_target):
    runs = []
    for _ in range(2):
        sim = Simulator(servicer_target, SimulationSettings(dt=DT), *state(servicer_target, seed=12))
        set_all(sim)
        for _ in range(20):
            sim.step()
        runs.append(sim.state.q.tobytes() + sim.state.v.tobytes() + sim.state.z.tobytes())
    assert runs[0] == runs[1]


@pytest.mark.parametrize("kwargs, message", [
    ({"frame": "right_l9"}, "external_wrench.frame: no link or frame named 'right_l9'"),
    ({"frame": "universe"}, "external_wrench.frame: frame 'universe' is fixed to the world"),
    ({"frame": "base_link", "force": [1.0, 2.0]}, r"external_wrench.force: expected 3 values"),
    ({"frame": "base_link", "torque": [0.0, np.nan, 0.0]}, "external_wrench.torque: non-finite values at indices"),
    ({"frame": "base_link", "point": [np.inf, 0.0, 0.0]}, "external_wrench.point: non-finite"),
    ({"frame": "base_link", "force": "up"}, "external_wrench.force: not a numeric vector"),
    ({"frame": "base_link", "expressed_in": "body"}, "external_wrench.expressed_in: must be one of"),
    ({"frame": "base_link", "label": 3}, "external_wrench.label: must be a string"),
])
def test_bad_wrenches_are_rejected_and_change_nothing(servicer_target, kwargs, message):
    sim = Simulator(servicer_target, SimulationSettings(dt=DT))
    sim.set_external_wrench("base_link", [1.0, 0.0, 0.0], label="kept")
    with pytest.raises(CommandError, match=message):
        sim.set_external_wrench(**kwargs)
    assert list(sim.external_wrenches) == ["kept"]
    with pytest.raises(CommandError, match="external_wrench.label: no wrench labelled 'other'"):
        sim.clear_external_wrench("other")
