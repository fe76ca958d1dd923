"""Conservation laws of the free-floating servicer + target (zero gravity, no external force).

Reference scale: momentum may be zero by design, so drift is compared with the largest momentum any
single body carries during the run (Basilisk-style relative checks). RKMK4 at 1 ms has a local error
O(dt^5) ~ 1e-15 per unit rate, so 10 s (1e4 steps) accumulates ~1e-11 relative: the 1e-9 bound leaves a
margin of ~100 for round-off growth, and fails at once for a wrong Coriolis term, a missing dexp^-1
correction (second order: ~1e-7) or a frame mix-up in the momentum (O(1)).
"""
import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_dynamics.simulation.system_momentum import body_momenta_scale

DURATION = 10.0     # s
DT = 1e-3           # s
# Arm torque = sinusoid + a joint-space PD about the initial pose. Pure open-loop sinusoids let the
# joints wind up without bound (there are no joint stops in the model) until the arm spins at 50-175
# rad/s and the run measures chaos rather than the integrator; the PD keeps rates below ~1.6 rad/s
# (Sawyer limits 1.3-4.5 rad/s). It is an internal torque like any other: it conserves momentum and its
# work enters actuator_work. Frequencies (rad/s) are incommensurate so no symmetry hides an error.
ARM_AMPLITUDE = np.array([2.0, 3.0, 1.0, 1.0, 0.1, 0.1, 0.02])      # N m
ARM_OMEGA = np.array([1.1, 1.7, 2.3, 2.9, 3.7, 4.3, 5.3])           # rad/s
ARM_KP = 4.0 * ARM_AMPLITUDE                                        # N m/rad
ARM_KD = 1.0 * ARM_AMPLITUDE                                        # N m s/rad
WHEEL_AMPLITUDE = np.array([0.05, 0.04, 0.03])
WHEEL_OMEGA = np.array([0.7, 1.3, 1.9])


def arm_torque(system, state, q_home):
    """Sinusoid plus PD to q_home (rad), evaluated at the start of the step (zero-order hold)."""
    angles = np.array([system.joint_angle(state.q, name) for name in system.arm_joints])
    return (ARM_AMPLITUDE * np.sin(ARM_OMEGA * state.t) - ARM_KP * (angles - q_home)
            - ARM_KD * state.v[system.arm_v])


def wheel_torque(t):
    return WHEEL_AMPLITUDE * np.sin(WHEEL_OMEGA * t + 0.3)


def initial_state(system):
    """Servicer drifting and slowly rotating, target tumbling: non-zero total momentum."""
    q, v = system.neutral(), np.zeros(system.nv)
    target = system.subtree("target").config.root_joint_name
    servicer = system.subtree("servicer").config.root_joint_name
    q[system.q_slice(target)] = [3.0, 0.2, 0.5, *pin.Quaternion(pin.rpy.rpyToMatrix(0.1, -0.2, 0.3)).coeffs()]
    v[system.v_slice(target)] = [0.01, -0.02, 0.0, 0.05, -0.03, 0.02]
    v[system.v_slice(servicer)] = [0.02, 0.0, -0.01, 0.002, -0.001, 0.003]
    for name, angle in zip(system.arm_joints, ARM_HOME):
        system.set_joint_angle(q, name, angle)
    return q, v


ARM_HOME = np.array([0.0, -0.8, 0.0, 1.5, 0.0, 0.6, 0.0])   # rad


@pytest.fixture(scope="module")
def run(servicer_target):
    system = servicer_target
    q0, v0 = initial_state(system)
    sim = Simulator(system, SimulationSettings(dt=DT, integrator="rk4"), q0, v0)
    first = sim.observe()
    data = system.model.createData()
    samples, p_peak, l_peak, quat_err = [], 0.0, 0.0, 0.0
    arm_rate_max = 0.0
    ff = [system.q_slice(s.config.root_joint_name) for s in system.subtrees]
    for k in range(int(round(DURATION / DT))):
        sim.step(arm_torque(system, sim.state, ARM_HOME), wheel_torque(sim.state.t))
        if k % 100 == 99:
            obs = sim.observe()
            samples.append(obs)
            p, l_ = body_momenta_scale(system.model, data, obs.q, obs.v)
            p_peak, l_peak = max(p_peak, p), max(l_peak, l_)
            quat_err = max(quat_err, *(abs(np.linalg.norm(obs.q[s][3:7]) - 1.0) for s in ff))
        arm_rate_max = max(arm_rate_max, float(np.abs(sim.state.v[system.arm_v]).max()))
    assert 0.3 < arm_rate_max < 3.0, f"the arm must move, within its rate limits: max rate {arm_rate_max}"
    return first, samples, p_peak, l_peak, quat_err


def test_linear_momentum_is_conserved(run):
    first, samples, p_peak, _, _ = run
    drift = max(np.linalg.norm(s.momentum.linear - first.momentum.linear) for s in samples)
    assert p_peak > 1.0, "the run must actually move bodies"
    assert drift <= 1e-9 * p_peak, f"linear momentum drift {drift:.3e} vs peak body momentum {p_peak:.3e}"


def test_angular_momentum_about_com_is_conserved(run):
    first, samples, _, l_peak, _ = run
    drift = max(np.linalg.norm(s.momentum.angular - first.momentum.angular) for s in samples)
    assert l_peak > 1.0
    assert drift <= 1e-9 * l_peak, f"angular momentum drift {drift:.3e} vs peak body momentum {l_peak:.3e}"


def test_centre_of_mass_moves_uniformly(run):
    """No external force: the CoM moves in a straight line at the initial CoM velocity."""
    first, samples, _, _, _ = run
    for s in samples:
        expected = first.momentum.com + first.momentum.com_velocity * (s.t - first.t)
        assert np.linalg.norm(s.momentum.com - expected) < 1e-9


def test_energy_balance_matches_actuator_work(run):
    """T(t) - T(0) = work of joint and wheel torques (no damping): 1e-8 relative to the energy moved."""
    first, samples, _, _, _ = run
    scale = max(abs(s.actuator_work) for s in samples) + first.momentum.kinetic_energy
    for s in samples:
        residual = (s.momentum.kinetic_energy - first.momentum.kinetic_energy) - s.actuator_work
        assert abs(residual) <= 1e-8 * scale, f"t={s.t:.1f}: energy residual {residual:.3e} J (scale {scale:.3e})"


def test_quaternions_stay_unit(run):
    *_, quat_err = run
    assert quat_err <= 1e-12


def test_semi_implicit_euler_drifts_more_than_rk4(servicer_target):
    """The cheap integrator is first order: its momentum error at 1 ms is orders above RK4's."""
    system = servicer_target
    q0, v0 = initial_state(system)
    drifts = {}
    for name in ("rk4", "semi_implicit_euler"):
        sim = Simulator(system, SimulationSettings(dt=DT, integrator=name), q0, v0)
        h0 = sim.observe().momentum.angular
        for _ in range(1000):
            sim.step(arm_torque(system, sim.state, ARM_HOME), wheel_torque(sim.state.t))
        drifts[name] = np.linalg.norm(sim.observe().momentum.angular - h0)
    assert drifts["semi_implicit_euler"] > 1e3 * drifts["rk4"]


def test_damping_dissipates_energy_but_conserves_momentum(servicer_target):
    """URDF damping and friction (5 N m s/rad, 5 N m) on the arm joints: internal forces, so momentum is
    conserved to round-off while T - T0 = W_act - W_diss. The wrist's decay rate is ~1.4e4 1/s: at
    10 us, dt * lambda = 0.14 and RK4's relative error on that mode is ~(0.14)^5/120 ~ 5e-7 per step of a
    decaying quantity, which bounds the energy residual well below 1e-8 of the energy moved."""
    system = servicer_target
    q0, v0 = initial_state(system)
    v0[system.arm_v] = 0.5                               # rad/s: something for damping to take
    settings = SimulationSettings(dt=1e-5, joint_damping=True, joint_friction=True, friction_smoothing_speed=1.0)
    sim = Simulator(system, settings, q0, v0)
    first = sim.observe()
    for _ in range(5000):                                # 0.05 s: fast modes decay in ~1e-4 s
        sim.step(arm_torque(system, sim.state, ARM_HOME), wheel_torque(sim.state.t))
    last = sim.observe()
    p, l_ = body_momenta_scale(system.model, system.model.createData(), last.q, last.v)
    assert np.linalg.norm(last.momentum.linear - first.momentum.linear) <= 1e-9 * p
    assert np.linalg.norm(last.momentum.angular - first.momentum.angular) <= 1e-9 * l_
    assert last.dissipated_energy > 0.01 * first.momentum.kinetic_energy
    residual = (last.momentum.kinetic_energy - first.momentum.kinetic_energy) - (last.actuator_work
                                                                                 - last.dissipated_energy)
    assert abs(residual) <= 1e-8 * (first.momentum.kinetic_energy + abs(last.actuator_work))
