"""The control-rate evaluation of the servicer controller (ComputedTorqueStep, JointTrajectoryFollower
.sample_stacked, AttitudeController.wheel_command): the same law as the documented one, at a fraction of
the cost (bench/bench_controller.py).

Independent references: Pinocchio's forward dynamics (`pin.aba`) on the full model, which must return the
prescribed arm accelerations and, where a force cancels them, zero accelerations of the observed
coordinates; the inverse of M_pp formed in the test for the bus's apparent inertia; Horner's rule on the
quintic coefficients (`evaluate_quintic`). The controller's own ReducedDynamics path (eqs. 1-3 of
computed_torque.py), which update() used before, is the reference for "same outputs to round-off",
including the saturated and speed-limited branches.

Round-off bound: M spans 500 kg (bus) to 4e-4 kg m^2 (wrist): cond(M) ~ 1e7, so with O(1) accelerations
double precision leaves ~1e-16 * 1e7 = 1e-9 at worst (as in test_control_computed_torque.py).
"""
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
from model_states import random_state

from space_robot_control import computed_torque
from space_robot_control.attitude_control import AttitudeController, AttitudeGains, quaternion_error, wheel_spin_axes
from space_robot_control.computed_torque import ComputedTorqueStep, FreeFloatingComputedTorque
from space_robot_control.controller_config import load_controller_config
from space_robot_control.joint_trajectory import JointLimits, JointTrajectoryFollower, evaluate_quintic
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel

EXACT = 1e-9


@pytest.fixture(scope="module")
def system(servicer_target):
    return servicer_target


@pytest.fixture(scope="module")
def config():
    return load_controller_config("config/controller.yaml")


def bus_rotation_v(system):
    """v indices of the servicer bus's angular velocity (base-link frame), the last 3 of its free flyer."""
    vs = system.v_slice(system.subtree("servicer").config.root_joint_name)
    return list(range(vs.stop - 3, vs.stop))


# ---- ComputedTorqueStep ------------------------------------------------------------------------

def test_step_torque_gives_the_desired_acceleration_with_wheel_torques(system):
    """Eq. (2) via eq. (4): with the wheel torques acting, forward dynamics returns a_c; and the torque
    equals the ReducedDynamics one (eqs. 1-3) to round-off."""
    model, data = system.model, system.model.createData()
    dynamics = FreeFloatingComputedTorque(model, system.arm_v)
    step = ComputedTorqueStep(dynamics, system.wheel_v, bus_rotation_v(system))
    wheel_p = [dynamics.passive_index(i) for i in system.wheel_v]
    rng = np.random.default_rng(21)
    worst, worst_vs_reduced = 0.0, 0.0
    for _ in range(10):
        q, v = random_state(system, rng)
        a_des = rng.normal(0.0, 1.0, len(system.arm_v))
        tau_w = rng.uniform(-0.2, 0.2, len(system.wheel_v))
        step.solve(q, v, a_des)
        tau_arm = step.torque(tau_w)
        tau = np.zeros(model.nv)
        tau[system.arm_v], tau[system.wheel_v] = tau_arm, tau_w
        worst = max(worst, np.abs(pin.aba(model, data, q, v, tau)[system.arm_v] - a_des).max())
        passive_force = np.zeros(len(dynamics.passive))
        passive_force[wheel_p] = tau_w
        reference = dynamics.reduce(q, v).torque(a_des, passive_force)
        worst_vs_reduced = max(worst_vs_reduced, np.abs(tau_arm - reference).max() / np.abs(reference).max())
        # no force on the forced coordinates: None and zeros agree
        assert np.array_equal(step.torque(None), step.torque(np.zeros(len(system.wheel_v))))
    print(f"max |a_arm - a_des| = {worst:.2e} rad/s^2, relative difference to ReducedDynamics {worst_vs_reduced:.1e}")
    assert worst < EXACT
    assert worst_vs_reduced < EXACT


@pytest.mark.parametrize("observed", ["bus_rotation", "bus_twist"])
@pytest.mark.parametrize("arm", ["controlled", "passive"])
def test_cancelling_force_stops_the_observed_coordinates(system, observed, arm):
    """Eq. (5): the force K^-1 u_o on the observed coordinates (read off the Cholesky factor) leaves them
    at rest while the controlled coordinates get a_c. Checked with forward dynamics, and against K^-1
    formed in the test from the inverse of M_pp."""
    model, data = system.model, system.model.createData()
    controlled = system.arm_v if arm == "controlled" else []
    obs = bus_rotation_v(system) if observed == "bus_rotation" else \
        list(range(system.v_slice(system.subtree("servicer").config.root_joint_name).start,
                   bus_rotation_v(system)[-1] + 1))
    dynamics = FreeFloatingComputedTorque(model, controlled)
    step = ComputedTorqueStep(dynamics, forced_v=obs, observed_v=obs)
    rng = np.random.default_rng(22)
    worst_obs, worst_arm, worst_k = 0.0, 0.0, 0.0
    for _ in range(5):
        q, v = random_state(system, rng)
        a_des = rng.normal(0.0, 1.0, len(controlled))
        step.solve(q, v, a_des)
        force = step.cancelling_force()
        tau = np.zeros(model.nv)
        tau[obs] = force
        tau[controlled] = step.torque(force)
        a = pin.aba(model, data, q, v, tau)
        worst_obs = max(worst_obs, np.abs(a[obs]).max())
        worst_arm = max(worst_arm, np.abs(a[controlled] - a_des).max(initial=0.0))
        # K^-1 u_o, with u = M_pp^-1 (h_p + M_pc a_c) and K = (M_pp^-1)_oo, formed from M and h directly
        M, h = pin.crba(model, data, q), pin.nonLinearEffects(model, data, q, v)
        p = dynamics.passive
        inv_pp = np.linalg.inv(M[np.ix_(p, p)])
        u = inv_pp @ (h[p] + M[np.ix_(p, controlled)] @ a_des)
        o = [int(np.flatnonzero(p == i)[0]) for i in obs]
        expected = np.linalg.solve(inv_pp[np.ix_(o, o)], u[o])
        worst_k = max(worst_k, np.abs(force - expected).max() / np.abs(expected).max())
    print(f"{observed}, arm {arm}: max |a_o| = {worst_obs:.1e}, max |a_c - a_des| = {worst_arm:.1e}, "
          f"K^-1 u_o relative difference {worst_k:.1e}")
    assert worst_obs < EXACT and worst_arm < EXACT
    assert worst_k < EXACT


def test_step_without_passive_coordinates_is_inverse_dynamics():
    """The bench Sawyer (fixed base, no wheels): nothing to eliminate, tau = M a + h = rnea(q, v, a)."""
    bench = SystemModel(load_model_config("config/models/sawyer_fixed.yaml"))
    model, data = bench.model, bench.model.createData()
    step = ComputedTorqueStep(FreeFloatingComputedTorque(model, bench.arm_v))
    rng = np.random.default_rng(23)
    q, v, a = bench.neutral(), rng.normal(0.0, 0.5, bench.nv), rng.normal(0.0, 1.0, bench.nv)
    step.solve(q, v, a[bench.arm_v])
    expected = pin.rnea(model, data, q, v, a)[bench.arm_v]
    assert np.abs(step.torque() - expected).max() < EXACT * np.abs(expected).max()


def test_step_rejects_indices_that_are_not_passive(system):
    dynamics = FreeFloatingComputedTorque(system.model, system.arm_v)
    with pytest.raises(ValueError, match="forced_v"):
        ComputedTorqueStep(dynamics, forced_v=[system.arm_v[0]])
    with pytest.raises(ValueError, match="observed_v"):
        ComputedTorqueStep(dynamics, observed_v=[system.wheel_v[0], system.wheel_v[0]])


# ---- ServicerController.update ----------------------------------------------------------------

def reference_update(ctl: ServicerController, t, q, v):
    """The update as the servicer_controller docstring states it, on ReducedDynamics (eqs. 1-3) and
    AttitudeController.update(): what update() computed before the control-rate path existed."""
    system = ctl.system
    q = pin.normalize(system.model, np.asarray(q, dtype=float))
    arm_q = [system.q_slice(n).start for n in ctl.arm_joints]
    arm_v = [system.v_index(n) for n in ctl.arm_joints]
    wheel_v = [system.v_index(n) for n in ctl.wheel_joints]
    bus_w = bus_rotation_v(system)
    ref = ctl.follower.sample(t)
    a_star = ref.accelerations + ctl.kd * (ref.velocities - v[arm_v]) + ctl.kp * (ref.positions - q[arm_q])
    dyn = ctl.dynamics
    reduced = dyn.reduce(q, v)
    force = np.zeros(len(dyn.passive))
    out = {"wheel_torque": np.zeros(len(wheel_v)), "angle": np.nan, "torque_saturated": False,
           "speed_saturated": np.zeros(len(wheel_v), dtype=bool)}
    if ctl.attitude is not None:
        feedforward = None
        if ctl.config.attitude_hold.feedforward:
            bus_p = [dyn.passive_index(i) for i in bus_w]
            alpha0 = reduced.passive_acceleration(a_star if ctl.tracking else np.zeros(0), force)[bus_p]
            feedforward = -np.linalg.solve(reduced.passive_inverse[np.ix_(bus_p, bus_p)], alpha0)
        cmd = ctl.attitude.update(ctl.bus_orientation(q), v[bus_w], v[wheel_v], feedforward)
        out.update(wheel_torque=cmd.wheel_torque, angle=cmd.error_angle, torque_saturated=cmd.torque_saturated,
                   speed_saturated=cmd.speed_saturated)
        force[[dyn.passive_index(i) for i in wheel_v]] = cmd.wheel_torque
    if ctl.tracking:
        out["arm_torque"], out["arm_saturated"] = dyn.clip(reduced.torque(a_star, force))
        out["tracking_error"] = ref.positions - q[arm_q]
    out["desired_positions"], out["active"] = ref.positions, ref.active
    return out


def compare(out, expected, tracking):
    """Largest relative difference of the torques; flags must agree exactly."""
    assert out.trajectory_active == expected["active"]
    assert out.wheel_torque_saturated == expected["torque_saturated"]
    assert np.array_equal(out.wheel_speed_saturated, expected["speed_saturated"])
    np.testing.assert_allclose(out.desired_positions, expected["desired_positions"], rtol=0, atol=1e-12)
    if np.isnan(expected["angle"]):
        assert np.isnan(out.attitude_error_angle)
    else:
        assert out.attitude_error_angle == pytest.approx(expected["angle"], abs=1e-15)
    scale = max(np.abs(expected["wheel_torque"]).max(initial=0.0), 1e-3)
    diff = np.abs(out.wheel_torque - expected["wheel_torque"]).max(initial=0.0) / scale
    if tracking:
        assert np.array_equal(out.arm_saturated, expected["arm_saturated"])
        np.testing.assert_allclose(out.tracking_error, expected["tracking_error"], rtol=0, atol=1e-12)
        assert out.tracking_error_max == np.abs(out.tracking_error).max()
        diff = max(diff, np.abs(out.arm_torque - expected["arm_torque"]).max() / np.abs(expected["arm_torque"]).max())
    else:
        assert np.all(out.arm_torque == 0.0) and np.all(np.isnan(out.tracking_error))
    return diff


MODES = {
    "both": dict(modes=("joint_tracking", "attitude_hold")),
    "both_without_feedforward": dict(modes=("joint_tracking", "attitude_hold"), feedforward=False),
    "tracking_only": dict(modes=("joint_tracking",)),
    "attitude_only": dict(modes=("attitude_hold",)),
}


@pytest.mark.parametrize("name", list(MODES))
def test_update_matches_the_documented_algorithm(system, config, name):
    """Random states along a trajectory, including a far setpoint (wheel torques scaled down), wheels at
    their speed limit (denied torque) and a large arm error (torques clipped): same commands and flags as
    the ReducedDynamics path to round-off, and each branch is exercised."""
    mode = MODES[name]
    cfg = replace(config, modes=mode["modes"],
                  attitude_hold=replace(config.attitude_hold, feedforward=mode.get("feedforward", True)))
    ctl = ServicerController(system, cfg)
    rng = np.random.default_rng(24)
    q0, v0 = random_state(system, rng)
    ctl.update(0.0, q0, v0)
    if ctl.tracking:
        goal = [0.5 * system.joint_angle(q0, n) for n in system.arm_joints]
        ctl.set_trajectory(list(system.arm_joints), [(goal, None, None, 4.0)])
    worst, seen = 0.0, set()
    max_speed = system.wheel_max_speed
    for k in range(30):
        q, v = random_state(system, rng, wheel_speed=0.9 * max_speed[0])
        if k % 3 == 1:      # every wheel at its speed limit, either sign
            v[system.wheel_v] = max_speed * rng.choice([-1.0, 1.0], len(system.wheel_v))
        if ctl.attitude is not None:
            tilt = 0.5 if k % 2 else 1e-4          # rad: far (saturates 0.2 N m) or near the setpoint
            axis = rng.normal(size=3)
            quat = np.append(np.sin(tilt / 2) * axis / np.linalg.norm(axis), np.cos(tilt / 2))
            ctl.set_attitude_setpoint(pin.Quaternion(ctl.bus_orientation(q)[[3, 0, 1, 2]]).__mul__(
                pin.Quaternion(quat[3], *quat[:3])).coeffs())
        t = 0.1 + 0.13 * k
        out, expected = ctl.update(t, q, v), reference_update(ctl, t, q, v)
        worst = max(worst, compare(out, expected, ctl.tracking))
        seen |= {"torque_saturated"} if out.wheel_torque_saturated else set()
        seen |= {"speed_saturated"} if out.wheel_speed_saturated.any() else set()
        seen |= {"arm_saturated"} if out.arm_saturated.any() else set()
        seen |= {"active"} if out.trajectory_active else set()
    print(f"{name}: max relative torque difference {worst:.1e}, branches {sorted(seen)}")
    assert worst < EXACT
    if ctl.attitude is not None:
        assert {"torque_saturated", "speed_saturated"} <= seen
    if ctl.tracking:
        assert {"arm_saturated", "active"} <= seen


def test_update_realizes_the_tracking_law_and_the_attitude_pd(system, config):
    """Physics of one update (default modes, nothing saturated): forward dynamics with the commanded arm and
    wheel torques gives the arm a* = qdd_d + Kd e' + Kp e, and the bus the angular acceleration of the PD
    alone, K T_pd with T_pd = -Kp e_q - Kd w, because the feed-forward cancels what the arm motion would
    cause (K = (M_pp^-1)_bus formed here from M, arm prescribed)."""
    model, data = system.model, system.model.createData()
    ctl = ServicerController(system, config)
    rng = np.random.default_rng(25)
    q0, v0 = random_state(system, rng, wheel_speed=50.0)
    v0[system.arm_v] = 0.0                                 # a rest-to-rest move: no overshoot past the limits
    ctl.update(0.0, q0, v0)
    goal = [0.8 * system.joint_angle(q0, n) for n in system.arm_joints]          # towards 0: inside the limits
    ctl.set_trajectory(list(system.arm_joints), [(goal, None, None, 20.0)])
    arm_q = [system.q_slice(n).start for n in system.arm_joints]
    bus_w = bus_rotation_v(system)
    passive = ctl.dynamics.passive
    bus_p = [int(np.flatnonzero(passive == i)[0]) for i in bus_w]
    worst_arm, worst_bus = 0.0, 0.0
    for k in range(10):
        # Near the reference and a slow bus: arm torques unclipped, wheel torques under their 0.2 N m limit.
        t = 1.0 + k
        ref = ctl.follower.sample(t)
        q, v = q0.copy(), v0.copy()
        for j, name in enumerate(system.arm_joints):
            system.set_joint_angle(q, name, ref.positions[j] + 1e-4 * rng.normal())
        v[system.arm_v] = ref.velocities + 1e-4 * rng.normal(size=len(system.arm_v))
        v[bus_w] = rng.normal(0.0, 1e-4, 3)
        out = ctl.update(t, q, v)
        assert not (out.wheel_torque_saturated or out.wheel_speed_saturated.any() or out.arm_saturated.any())
        tau = np.zeros(model.nv)
        tau[system.arm_v], tau[system.wheel_v] = out.arm_torque, out.wheel_torque
        a = pin.aba(model, data, q, v, tau)
        a_star = ref.accelerations + ctl.kd * (ref.velocities - v[system.arm_v]) + ctl.kp * (ref.positions - q[arm_q])
        worst_arm = max(worst_arm, np.abs(a[system.arm_v] - a_star).max())
        e, _angle = quaternion_error(ctl.bus_orientation(q), ctl.attitude.setpoint)
        t_pd = -ctl.attitude.gains.kp @ e - ctl.attitude.gains.kd @ v[bus_w]
        M = pin.crba(model, data, q)
        K = np.linalg.inv(M[np.ix_(passive, passive)])[np.ix_(bus_p, bus_p)]
        expected = K @ t_pd
        worst_bus = max(worst_bus, np.abs(a[bus_w] - expected).max() / np.abs(expected).max())
    print(f"max |a_arm - a*| = {worst_arm:.1e} rad/s^2, bus acceleration vs K T_pd: relative {worst_bus:.1e}")
    assert worst_arm < EXACT
    # Exact for wheels mounted on the bus (a torque on a wheel about its own spin axis does not reach the
    # bus), so only round-off remains: measured 1e-14 relative; bound EXACT.
    assert worst_bus < EXACT


def test_update_uses_one_crba_one_nle_and_no_dense_inverse(system, config, monkeypatch):
    """The cost structure bench_controller.py relies on: per update one crba, one nonLinearEffects, and no
    numpy solve or inverse (the one LAPACK Cholesky call does it all)."""
    ctl = ServicerController(system, config)
    q, v = random_state(system, np.random.default_rng(26), wheel_speed=50.0)
    v[system.arm_v] = 0.0
    ctl.update(0.0, q, v)
    ctl.set_trajectory(list(system.arm_joints), [([0.9 * system.joint_angle(q, n) for n in system.arm_joints],
                                                  None, None, 5.0)])
    calls = {"crba": 0, "nonLinearEffects": 0}

    def counted(name):
        original = getattr(pin, name)

        def call(*args):
            calls[name] += 1
            return original(*args)
        return call

    def refused(*_args, **_kwargs):
        raise AssertionError("dense solve/inverse at the control rate")

    for name in calls:
        monkeypatch.setattr(computed_torque.pin, name, counted(name))
    monkeypatch.setattr(np.linalg, "solve", refused)
    monkeypatch.setattr(np.linalg, "inv", refused)
    for k in range(5):
        ctl.update(0.5 + 0.001 * k, q, v)
    assert calls == {"crba": 5, "nonLinearEffects": 5}


# ---- trajectory and attitude pieces -----------------------------------------------------------

def test_stacked_sample_is_the_quintic_and_its_derivatives():
    """sample_stacked() against Horner's rule on the stored coefficients (evaluate_quintic), inside
    segments, at knots, before the start and after the end; the held vector is a copy."""
    n = 3
    limits = JointLimits(np.full(n, -3.0), np.full(n, 3.0), np.full(n, 2.0), np.full(n, 5.0))
    f = JointTrajectoryFollower(["a", "b", "c"], limits)
    f.hold([0.1, -0.2, 0.3])
    held, active = f.sample_stacked(0.0)
    assert not active and np.array_equal(held, [0.1, -0.2, 0.3, 0, 0, 0, 0, 0, 0])
    held[0] = 9.0
    assert f.sample_stacked(0.0)[0][0] == 0.1
    f.set_trajectory(["a", "b", "c"], [([0.5, 0.0, 0.1], [0.1, 0.0, 0.0], None, 1.0),
                                       ([0.6, -0.4, 0.2], None, None, 2.5)], 1.0, [0.1, -0.2, 0.3], np.zeros(n),
                     start_time=1.5)
    plan = f._plan
    rng = np.random.default_rng(27)
    times = np.concatenate([rng.uniform(plan.times[0], plan.times[-1], 40), plan.times[:-1]])
    worst = 0.0
    for t in times:
        stacked, active = f.sample_stacked(float(t))
        k = int(np.searchsorted(plan.times, t, side="right")) - 1
        p, vel, acc = evaluate_quintic(plan.coeffs[k], t - plan.times[k])
        worst = max(worst, np.abs(stacked - np.concatenate([p, vel, acc])).max())
        assert active
    assert worst < 1e-12
    for t, position in ((1.0, [0.1, -0.2, 0.3]), (plan.times[-1], [0.6, -0.4, 0.2]), (100.0, [0.6, -0.4, 0.2])):
        stacked, active = f.sample_stacked(t)
        assert not active and np.allclose(stacked, position + [0.0] * 6, rtol=0, atol=1e-15)


@pytest.mark.parametrize("layout", ["orthogonal", "pyramid"])
def test_wheel_command_equals_update(system, pyramid, layout):
    """wheel_command() (eq. 2 and the allocation folded into one map, on floats) against update():
    same wheel torques to round-off and the same flags, near and far from the setpoint (torque limit),
    with wheels at their speed limit, with and without feed-forward; 3 and 4 wheels."""
    model = system if layout == "orthogonal" else pyramid
    axes = wheel_spin_axes(model.model, model.subtree("servicer").root_joint_id, model.wheel_joints)
    n = axes.shape[1]
    gains = AttitudeGains.from_bandwidth(np.diag([116.0, 123.0, 129.0]), 0.4, 1.0)
    ctl = AttitudeController(axes, 0.2, 628.3, gains, [0.0, 0.0, 0.0, 1.0])
    rng = np.random.default_rng(28)
    worst, flags = 0.0, set()
    for k in range(60):
        tilt = [1e-4, 0.3][k % 2]
        axis = rng.normal(size=3)
        orientation = np.append(np.sin(tilt / 2) * axis / np.linalg.norm(axis), np.cos(tilt / 2))
        w = rng.normal(0.0, 1e-3, 3)
        speed = rng.uniform(-600.0, 600.0, n)
        if k % 3 == 0:
            speed[rng.integers(n)] = 628.3 * rng.choice([-1.0, 1.0])
        ff = rng.normal(0.0, 0.05, 3) if k % 4 else None
        cmd = ctl.update(orientation, w, speed, ff)
        tau, angle, torque_sat, speed_sat = ctl.wheel_command(orientation.tolist(), w.tolist(), speed.tolist(),
                                                               None if ff is None else ff.tolist())
        assert angle == cmd.error_angle and torque_sat == cmd.torque_saturated
        assert np.array_equal(speed_sat, cmd.speed_saturated)
        worst = max(worst, np.abs(tau - cmd.wheel_torque).max() / max(np.abs(cmd.wheel_torque).max(), 1e-6))
        flags |= {"torque"} if torque_sat else set()
        flags |= {"speed"} if speed_sat.any() else set()
    print(f"{layout}: max relative wheel-torque difference {worst:.1e}")
    assert worst < 1e-12 and flags == {"torque", "speed"}


def test_wheel_limits_must_be_positive():
    gains = AttitudeGains.from_bandwidth(np.eye(3), 0.4, 1.0)
    with pytest.raises(ConfigError) as err:
        AttitudeController(np.eye(3), [0.2, 0.0, 0.2], 628.3, gains)
    assert err.value.field == "reaction_wheels.max_torque"
    with pytest.raises(ConfigError) as err:
        AttitudeController(np.eye(3), 0.2, float("nan"), gains)
    assert err.value.field == "reaction_wheels.max_speed"
