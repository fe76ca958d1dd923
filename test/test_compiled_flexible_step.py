"""The compiled flexible step (space_robot_dynamics/simulation/compiled_flexible_step.py, native/flexible_step.cpp)
against its oracle, the Python step (ManifoldRK4 with Simulator._flexible_rhs, reduced_dynamics.py), which stays.

The two compute the same arithmetic in a different order (sums over T's entries and a tree-sparse LTDL instead of
dense products and LAPACK's Cholesky), so they agree to round-off, and no better than the motion lets round-off
grow. Bounds, on differences relative to 1 + the largest magnitude of the compared quantity (q, v, auxiliary):
- one step from an excited state: 1e-13 (measured ~5e-16);
- 2000 steps from rest under the arm and wheel torques: 1e-9 (measured ~3e-12);
- 2000 steps from an excited state (every coordinate moved by ~0.2 and moving at ~0.3 /s): this motion amplifies
  round-off ~1e8-fold in 2 s, the Python path's own as much (a 1e-15 relative change of its initial velocities ends
  ~1e-7 away), so the bound is 10x what that change does to the Python path.
Any modelling error is far above these: a dropped coupling term moves the modes by ~1e-4 of their amplitude within
a step. A wrong library fails them: an uninitialized dexp^-1 block, found this way, gave differences of 1e-3 to 10.

The library is built by the package install (setup.py); the tests that step it carry the `compiled_step` marker:
they fail when it is missing, with the reason, unless SPACE_ROBOT_PYTHON_STEP_ONLY=1 says that this machine cannot
build it, and are then skipped (test/conftest.py). The others (the Python step's reasons, the sparsity pattern, the
setting) run either way.
"""
from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pinocchio as pin
import pytest
from grasp_states import drifting, fixture_at_hand

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError, SimulationDivergedError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel, build_model
from space_robot_dynamics.simulation import compiled_flexible_step as compiled
from space_robot_dynamics.simulation.integrators import ManifoldRK4
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator, read_simulation_settings

STEPS, DT = 2000, 1e-3


def servicer(elastic_only: bool = False) -> SystemModel:
    config = load_model_config("config/models/servicer_flexible.yaml")
    return build_model(dataclasses.replace(config, flexible_links=()) if elastic_only else config)


def excited_state(system: SystemModel, seed: int = 3):
    """Every coordinate moved and moving: both bases drift and turn, the modes and springs ring."""
    rng = np.random.default_rng(seed)
    q = pin.integrate(system.model, system.neutral(), 0.2 * rng.standard_normal(system.nv))
    v = 0.3 * rng.standard_normal(system.nv)
    if system.coordinates is not None:
        system.coordinates.project(q, v)
    return q, v


def run(system: SystemModel, sims: list[Simulator], steps: int = STEPS, during=None):
    """Step every simulator under the same arm sinusoids and wheel torques; `during(k, sim)` may act on each at
    step k. Returns each one's states."""
    n_arm, n_wheel = len(system.arm_joints), len(system.wheel_joints)
    states = [[] for _ in sims]
    for k in range(steps):
        arm = 2.0 * np.sin(7.0 * k * DT + np.arange(n_arm))
        wheels = 0.1 * np.cos(3.0 * k * DT + np.arange(n_wheel))
        for sim, trace in zip(sims, states):
            if during is not None:
                during(k, sim)
            trace.append(sim.step(arm, wheels).copy())
    return states


def difference(a: list, b: list) -> dict:
    """Largest |a - b| of q, v and z over two runs, over 1 + the largest magnitude of b's."""
    out = {}
    for name in ("q", "v", "z"):
        worst = scale = 0.0
        for x, y in zip((getattr(s, name) for s in a), (getattr(s, name) for s in b)):
            if len(y):          # z grows by the external work's state when a wrench is first set
                worst, scale = max(worst, float(np.abs(x - y).max())), max(scale, float(np.abs(y).max()))
        out[name] = worst / (1.0 + scale)
    return out


def compare(system: SystemModel, steps: int = STEPS, q0=None, v0=None, during=None):
    """difference(compiled run, Python run) and the two simulators."""
    sims = [Simulator(system, SimulationSettings(dt=DT, flexible_step=kind), q0, v0) for kind in ("compiled", "python")]
    assert [s.step_backend for s in sims] == ["compiled", "python"], sims[0].step_backend_reason
    fast, oracle = run(system, sims, steps, during)
    return difference(fast, oracle), sims


@pytest.mark.compiled_step
@pytest.mark.parametrize("elastic_only", [False, True], ids=["links_and_joints_eq16", "elastic_joints_aba"])
def test_compiled_step_follows_the_python_step_from_rest(elastic_only):
    system = servicer(elastic_only)
    errors, (fast, oracle) = compare(system)
    print(f"\nrelative differences over {STEPS} steps: {errors}")
    assert max(errors.values()) <= 1e-9
    assert np.abs(oracle.state.v).max() > 1.0       # the run moved
    assert fast.state.z[0] > 0.0           # the modal and joint dampers took energy: their power is integrated
    assert fast.observe().actuator_work == pytest.approx(oracle.observe().actuator_work, rel=1e-9)


@pytest.mark.compiled_step
@pytest.mark.parametrize("elastic_only", [False, True], ids=["links_and_joints_eq16", "elastic_joints_aba"])
@pytest.mark.slow
def test_compiled_step_from_an_excited_state_stays_within_round_off_growth(elastic_only):
    system = servicer(elastic_only)
    q0, v0 = excited_state(system)
    nudged = v0 * (1.0 + 1e-15 * np.random.default_rng(5).standard_normal(len(v0)))
    sims = [Simulator(system, SimulationSettings(dt=DT, flexible_step=kind), q0, v)
            for kind, v in (("compiled", v0), ("python", v0), ("python", nudged))]
    fast, oracle, oracle_nudged = run(system, sims)
    errors, growth = difference(fast, oracle), difference(oracle_nudged, oracle)
    print(f"\ncompiled - python: {errors}\npython nudged by 1e-15 - python: {growth}")
    for name in errors:
        assert errors[name] <= 10.0 * max(growth[name], 1e-15), name


@pytest.mark.compiled_step
def test_seed000_planar_flexible_link_compiled():
    """The seed 000 model: a free-floating base with one flexible link (two modes) and its tip chain."""
    system = build_model(load_model_config("config/models/planar_two_link_flexible.yaml"))
    q0, v0 = excited_state(system)
    errors, _ = compare(system, steps=1000, q0=q0, v0=v0)
    assert max(errors.values()) <= 1e-9


@pytest.mark.compiled_step
def test_a_step_needing_the_python_path_takes_it_and_comes_back():
    """An external wrench (here on the bus) is the Python step's; cleared, the compiled one resumes."""
    system = servicer()

    def push(k, sim):
        if k == 300:
            sim.set_external_wrench("base_link", force=[20.0, -5.0, 3.0], torque=[0.0, 2.0, 0.0])
            assert sim.step_backend == "python"
        elif k == 600:
            sim.clear_external_wrench()

    errors, (fast, _) = compare(system, steps=900, during=push)
    assert fast.external_wrenches == {}
    assert fast.step_backend == "compiled" and fast.observe().external_work != 0.0
    assert max(errors.values()) <= 1e-9


@pytest.mark.compiled_step
def test_compiled_runs_are_bit_identical():
    system = servicer()
    q0, v0 = excited_state(system)
    runs = [Simulator(system, SimulationSettings(dt=DT), q0, v0) for _ in range(2)]
    for k in range(200):
        states = [sim.step(np.full(7, np.sin(0.01 * k)), np.full(3, 0.05)) for sim in runs]
    assert np.array_equal(states[0].q, states[1].q) and np.array_equal(states[0].v, states[1].v)


def test_reduced_mass_matrix_has_branch_induced_sparsity():
    """What the LTDL factorization relies on, checked on the numbers: every nonzero (k, l), l < k, of T^T M T lies
    on k's chain of parents (reduced_parents); the servicer's tree is kept (the rotors and wheels are leaves)."""
    system = servicer()
    model, T = system.model, system.coordinates.T
    parents = compiled.reduced_parents(model, T)
    assert list(parents) != list(range(-1, len(parents) - 1))     # not the dense fallback
    q, _ = excited_state(system)
    mass = pin.crba(model, model.createData(), q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    reduced = T.T @ mass @ T
    for k in range(len(parents)):
        chain, ancestor = set(), parents[k]
        while ancestor >= 0:
            chain.add(int(ancestor))
            ancestor = parents[ancestor]
        off_chain = [j for j in range(k) if j not in chain]
        assert np.all(reduced[k, off_chain] == 0.0), k


def test_coupling_across_branches_falls_back_to_a_dense_factorization():
    """A T making an arm joint follow a wheel (right_j1 = rw_x) couples the wheel with right_j0, on another branch:
    branch-induced sparsity is lost and the parents are then the dense chain."""
    system = servicer()
    model = system.model
    nv = model.nv
    joint, wheel = (model.joints[model.getJointId(n)].idx_v for n in ("right_j1", "rw_x_joint"))
    T = np.eye(nv)[:, [i for i in range(nv) if i != joint]]
    T[joint, wheel - 1] = 1.0           # the wheel's column (one to the left: right_j1's column is gone)
    assert list(compiled.reduced_parents(model, T)) == list(range(-1, nv - 2))


@pytest.mark.compiled_step
def test_rigid_model_compiled_follows_the_python_step():
    """A rigid model (servicer and free target, nv 22) takes the compiled step too: plain aba in the same RKMK4, the
    Python step (ManifoldRK4 with Simulator._aba) its oracle; bounds as the flexible model's from rest (module
    docstring), from an excited state as there (round-off growth, 10x the Python path's own)."""
    rigid = SystemModel(load_model_config("config/models/servicer_target.yaml"))
    errors, (fast, oracle) = compare(rigid)
    print(f"\nrigid, from rest: {errors}")
    assert max(errors.values()) <= 1e-9
    assert np.abs(oracle.state.v).max() > 1.0       # the run moved
    assert fast.observe().actuator_work == pytest.approx(oracle.observe().actuator_work, rel=1e-9)
    q0, v0 = excited_state(rigid)
    nudged = v0 * (1.0 + 1e-15 * np.random.default_rng(5).standard_normal(len(v0)))
    sims = [Simulator(rigid, SimulationSettings(dt=DT, flexible_step=kind), q0, v)
            for kind, v in (("compiled", v0), ("python", v0), ("python", nudged))]
    assert [s.step_backend for s in sims] == ["compiled", "python", "python"]
    fast, oracle, oracle_nudged = run(rigid, sims, steps=500)
    errors, growth = difference(fast, oracle), difference(oracle_nudged, oracle)
    print(f"rigid, excited: compiled - python {errors}, python nudged by 1e-15 - python {growth}")
    for name in ("q", "v"):
        assert errors[name] <= 10.0 * max(growth[name], 1e-15), name


@pytest.mark.compiled_step
def test_held_grasp_with_external_wrenches_compiled_follows_the_python_step():
    """A grasp held (the 6D loop with Baumgarte stabilization: constraintDynamics in both) and local wrenches (a
    thruster-like wrench on the bus, changed every 50 steps, and one on the target at an offset point): the
    compiled step against the Python step over 1500 steps. Compared: q, v, the auxiliary states (the wrenches' work
    and inertial impulse), the grasp's first-stage multipliers (the peak force) and the actuator work; bound 1e-9
    relative as from rest above (the loop's own stiffness, kp 100 1/s^2, does not amplify round-off)."""
    system = SystemModel(load_model_config("config/models/servicer_target.yaml"))
    q0 = fixture_at_hand(system, offset=[0.003, -0.002, 0.001])
    v0 = drifting(system, np.random.default_rng(7), arm_rate=0.002, base_rate=(0.003, 0.002),
                  target_rate=(0.003, 0.005))
    sims = [Simulator(system, SimulationSettings(dt=DT, flexible_step=kind), q0, v0) for kind in ("compiled", "python")]
    for sim in sims:
        sim.command_gripper(True)

    def during(k, sim):
        if k == 100:
            sim.set_external_wrench("target/grapple_frame", [0.5, -0.2, 0.1], [0.05, 0.0, -0.02], "local",
                                    point=[0.1, 0.0, 0.05], label="push")
        if k >= 200 and k % 50 == 0:
            sim.set_external_wrench("base_link", [2.0 * np.sin(k), 1.0, -0.5], [0.1, -0.2 * np.cos(k), 0.3],
                                    "local", label="thrusters")
        if k == 1200:
            sim.clear_external_wrench("push")
        if k >= 101:
            assert sim.step_backend == ("compiled" if sim is sims[0] else "python")

    fast, oracle = run(system, sims, steps=1500, during=during)
    errors = difference(fast, oracle)
    print(f"\nheld grasp with wrenches: {errors}")
    assert sims[0].contact_state().holding and sims[1].contact_state().holding
    assert max(errors.values()) <= 1e-9
    assert abs(oracle[-1].z).max() > 1e-3                  # the wrenches did work and gave an impulse
    a, b = sims[0].contact_state(), sims[1].contact_state()
    assert a.peak_force == pytest.approx(b.peak_force, rel=1e-9) and a.peak_force > 0.1
    assert sims[0].observe().actuator_work == pytest.approx(sims[1].observe().actuator_work, rel=1e-9)
    assert np.allclose(sims[0].constraint_force(), sims[1].constraint_force(), rtol=0, atol=1e-8)


def test_why_the_python_step_runs():
    planar = build_model(load_model_config("config/models/airbearing_testbed_flexible_joint.yaml"))
    sim = Simulator(planar, SimulationSettings(dt=5e-5))       # its springs need dt <= 9.9e-5 s
    assert sim.step_backend == "python" and "servicer_base_joint" in sim.step_backend_reason   # planar
    assert "does not rebuild" in sim.step_backend_reason
    system = servicer()
    for settings, words in ((SimulationSettings(integrator="semi_implicit_euler"), "semi_implicit_euler"),
                            (SimulationSettings(flexible_step="python"), "flexible_step is 'python'"),
                            (SimulationSettings(dt=5e-5, joint_damping=True), "joint damping")):
        sim = Simulator(system, settings)
        assert sim.step_backend == "python" and words in sim.step_backend_reason


def test_flexible_step_setting_is_validated():
    with pytest.raises(ConfigError, match="flexible_step"):
        read_simulation_settings(ConfigReader({"flexible_step": "fast"}, source="test"))


@pytest.mark.compiled_step
def test_a_malformed_description_is_refused_with_the_reason(monkeypatch):
    system = servicer()
    describe = compiled.describe

    def broken(model):
        flat = describe(model)
        flat["parents"][3] = 7          # a joint whose parent comes after it
        return flat

    monkeypatch.setattr(compiled, "describe", broken)
    with pytest.raises(RuntimeError, match="joint 4: bad parent"):
        compiled.CompiledFlexibleStep(system.model, system.flexibility, system.coordinates)


@pytest.mark.compiled_step
def test_one_step_from_an_excited_state_to_round_off():
    """Every joint moving: a model rebuilt wrong by the library (inertia order, placements, axes) would show here."""
    system = servicer()
    q0, v0 = excited_state(system, seed=11)
    errors, _ = compare(system, steps=1, q0=q0, v0=v0)
    assert max(errors.values()) <= 1e-13


@pytest.mark.parametrize("kind", [pytest.param("compiled", marks=pytest.mark.compiled_step), "python"])
def test_a_non_finite_step_is_refused_and_the_last_finite_state_kept(kind):
    """A NaN reaching the dynamics (here put straight into the latched generalized force of the bus, which no
    command can do: set_command refuses NaN) must not become the state."""
    system = servicer(elastic_only=True)
    sim = Simulator(system, SimulationSettings(dt=DT, flexible_step=kind))
    sim.step(np.ones(7), np.zeros(3))
    before = sim.state.copy()
    sim._tau_cmd[0] = np.nan
    with pytest.raises(SimulationDivergedError):
        sim.step(np.ones(7), np.zeros(3))
    assert np.array_equal(sim.state.q, before.q) and np.array_equal(sim.state.v, before.v)


@pytest.mark.compiled_step
@pytest.mark.slow
def test_a_copied_or_pickled_simulator_steps_on_a_library_object_of_its_own():
    """copy.deepcopy (a what-if branch) and pickle (a worker process) of a flexible Simulator: each copy owns its
    own library object, steps bit-identically to the original, and outlives it."""
    system = servicer()
    sim = Simulator(system, SimulationSettings(dt=DT))
    for _ in range(10):
        sim.step(np.ones(7), np.zeros(3))
    branches = [copy.deepcopy(sim), pickle.loads(pickle.dumps(sim))]
    assert len({id(s._compiled) for s in (sim, *branches)}) == 3
    assert all(b.step_backend == "compiled" for b in branches)
    states = [s.step(np.ones(7), np.zeros(3)).q for s in (sim, *branches)]
    assert np.array_equal(states[0], states[1]) and np.array_equal(states[0], states[2])
    del sim
    for branch in branches:
        branch.step(np.ones(7), np.zeros(3))


@pytest.mark.compiled_step
def test_every_joint_kind_the_library_rebuilds():
    """A chain with one joint of each kind the library knows (compiled_flexible_step.JOINT_KINDS, the unaligned
    axes included), random placements and inertias, no springs: one step against ManifoldRK4 with aba, from a
    state where every joint moves (bound 1e-13 relative: round-off)."""
    rng = np.random.default_rng(7)
    model = pin.Model()
    joints = {"JointModelFreeFlyer": pin.JointModelFreeFlyer(), "JointModelRX": pin.JointModelRX(),
              "JointModelRY": pin.JointModelRY(), "JointModelRZ": pin.JointModelRZ(),
              "JointModelPX": pin.JointModelPX(), "JointModelPY": pin.JointModelPY(),
              "JointModelPZ": pin.JointModelPZ(), "JointModelRUBX": pin.JointModelRUBX(),
              "JointModelRUBY": pin.JointModelRUBY(), "JointModelRUBZ": pin.JointModelRUBZ(),
              "JointModelRevoluteUnaligned": pin.JointModelRevoluteUnaligned(np.array([0.0, 0.6, 0.8])),
              "JointModelPrismaticUnaligned": pin.JointModelPrismaticUnaligned(np.array([0.6, 0.0, 0.8]))}
    assert set(joints) == set(compiled.JOINT_KINDS)
    parent = 0
    for k, (name, joint) in enumerate(joints.items()):
        placement = pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3))
        parent = model.addJoint(parent if k % 4 else 0, joint, placement, name)     # a tree: four branches
        inertia = pin.Inertia.Random()
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
    model.gravity = pin.Motion(np.array([0.0, 0.0, -9.81]), np.zeros(3))
    model.armature = rng.uniform(0.0, 0.1, model.nv)

    class NoSprings:
        selected_q = selected_v = np.zeros(0, dtype=int)
        K = C = np.zeros((0, 0))
        f0 = np.zeros(0)

    step = compiled.CompiledFlexibleStep(model, NoSprings(), None)
    q0 = pin.integrate(model, pin.neutral(model), rng.standard_normal(model.nv))
    v0, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    data = model.createData()
    expected = ManifoldRK4(model).step(lambda q, v: pin.aba(model, data, q, v, tau), q0, v0, DT)
    q, y, dq, finite = step.step(tau, q0, v0, np.zeros(0), DT, None)
    assert finite
    for got, want in zip((q, y, dq), expected):
        assert np.abs(got - want).max() <= 1e-13 * (1.0 + np.abs(want).max())
