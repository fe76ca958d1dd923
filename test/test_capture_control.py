"""Control of the joined system after a capture (space_robot_control/servicer_controller.py set_grasp,
grasp_wrench_limit.py; docs/contact.md sec. 8).

- The joined control model (the servicer with the held target's inertia on the hand's body) is the constrained
  system: the arm accelerations the simulator's 6D loop produces under the controller's torques are the commanded
  ones (alpha a*) to round-off, and the grasp wrench the limiter predicts is the loop's multiplier.
- Closed loop on the rigid servicer, the stack tumbling with a 2 deg/s target's momentum and the relative motion of the
  capture envelope: the arm
  stops relative to the bus, the stack's rotation is damped into the wheels, the grasp wrench stays within the
  configured limit (after the impulse, which the limit cannot govern) and the wheels within their limits.
- On the flexible servicer the arm keeps its motor-side loop: stable, with a small grasp wrench.
"""
import numpy as np
import pytest
from grasp_states import drifting, fixture_at_hand, tumbling_together

from space_robot_control import ServicerController, load_controller_config
from space_robot_dynamics import build_model
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator


@pytest.fixture(scope="module")
def config():
    return load_controller_config("config/controller.yaml")


def grasped(system, config, target_rate=(0.003, 0.005), seed=3, stack_rate=(0.0, 0.0, 0.0)):
    """Simulator and controller just after the grasp; `stack_rate` (rad/s, world): everything turning together
    before the grasp, plus the random relative motion."""
    rng = np.random.default_rng(seed)
    q = fixture_at_hand(system, offset=[0.004, -0.003, 0.002])
    v = drifting(system, rng, arm_rate=0.002, base_rate=(0.003, 0.002), target_rate=target_rate)
    v += tumbling_together(system, q, stack_rate)
    sim = Simulator(system, SimulationSettings(dt=1e-3), q, v)
    controller = ServicerController(system, config)
    out = controller.update(0.0, sim.state.q, sim.state.v)
    sim.command_gripper(True)
    sim.step(out.arm_torque, out.wheel_torque)
    assert sim.contact_state().holding, sim.contact_events[-1].message
    controller.set_grasp(True, sim.state.t, sim.state.q, sim.state.v)
    return sim, controller


def generalized_force(system, out):
    tau = np.zeros(system.nv)
    tau[system.arm_v] = out.arm_torque
    tau[system.wheel_v] = out.wheel_torque
    return tau


def test_the_joined_model_is_the_constrained_system(servicer_target, config):
    system = servicer_target
    sim, controller = grasped(system, config)
    for _ in range(3):          # the first updates: the limiter scales (the arm still moves after the impulse)
        s = sim.state
        out = controller.update(s.t, s.q, s.v)
        loop = sim.grasp.loop
        a = loop.acceleration(system.model.createData(), s.q, s.v, generalized_force(system, out))
        limiter = controller.capture_mode.limiter
        commanded = limiter.scale_applied * out.desired_accelerations
        assert np.allclose(a[system.arm_v], commanded, rtol=0, atol=1e-9 * np.abs(commanded).max())
        assert np.allclose(loop.force, limiter.predicted, rtol=0, atol=1e-8 * np.abs(loop.force).max())
        sim.step(out.arm_torque, out.wheel_torque)
    assert 0.0 < limiter.scale_applied < 1.0        # the limit was binding
    assert np.linalg.norm(limiter.predicted[3:]) == pytest.approx(config.capture.torque_limit, rel=1e-9) or \
        np.linalg.norm(limiter.predicted[:3]) == pytest.approx(config.capture.force_limit, rel=1e-9)


def test_limiter_from_the_controller_factorization_matches_the_reduced_dynamics(servicer_target, config):
    """The controller's path (GraspWrenchLimiter.scale_step: the ComputedTorqueStep's own Cholesky, eq. 4 affine in
    alpha) against the limiter's reference path (scale: the reduced dynamics of computed_torque.py eqs. 1-3, a
    factorization of its own), and the scaled torque against a new solve at alpha a_c*: equal to round-off (bound
    1e-10 relative; measured ~1e-15), on the binding first updates after the grasp."""
    sim, controller = grasped(servicer_target, config)
    joined = controller._joined
    limiter, step = joined.capture.limiter, joined._step
    s = sim.state
    out = controller.update(s.t, s.q, s.v)
    q, v = joined.control_model.state(*joined._checked_state(s.q, s.v))
    a_star = out.desired_accelerations
    step.solve(q, v, a_star)
    alpha = limiter.scale_step(q, v, step, out.wheel_torque)
    predicted = limiter.predicted.copy()
    assert 0.0 < alpha < 1.0                            # binding: the scaled branch is exercised
    assert limiter.scale(q, v, a_star, out.wheel_torque) == pytest.approx(alpha, rel=1e-10)
    assert np.allclose(limiter.predicted, predicted, rtol=0, atol=1e-10 * np.abs(predicted).max())
    step.scale(alpha)
    scaled = step.torque(out.wheel_torque)
    step.solve(q, v, alpha * a_star)
    resolved = step.torque(out.wheel_torque)
    assert np.allclose(scaled, resolved, rtol=0, atol=1e-10 * np.abs(resolved).max())
    assert not np.allclose(scaled, step.torque(None), rtol=0, atol=1e-6)      # the wheel torques matter


@pytest.mark.slow
def test_detumble_closed_loop(servicer_target, config):
    """The stack tumbling at 0.36 deg/s (the angular momentum of the 300 kg m^2 target at 2 deg/s, ~10 N m s:
    what the three 12 N m s wheels can take) with the relative motion of the capture envelope: 60 s."""
    system = servicer_target
    sim, controller = grasped(system, config, stack_rate=np.radians([0.15, -0.2, 0.25]))
    wheel_limit = system.wheel_max_speed
    peak_wheel = 0.0
    after_impulse_force = after_impulse_torque = 0.0
    for _ in range(60000):
        s = sim.state
        out = controller.update(s.t, s.q, s.v)
        sim.step(out.arm_torque, out.wheel_torque)
        force = sim.contact_state().force
        after_impulse_force = max(after_impulse_force, float(np.linalg.norm(force[:3])))
        after_impulse_torque = max(after_impulse_torque, float(np.linalg.norm(force[3:])))
        peak_wheel = max(peak_wheel, float(np.max(np.abs(sim.state.v[system.wheel_v]) / wheel_limit)))
    observation = sim.observe()
    bus_rate = np.linalg.norm(observation.bases["servicer"].angular_velocity)
    target_rate = np.linalg.norm(observation.bases["target"].angular_velocity)
    arm_rate = np.abs(sim.state.v[system.arm_v]).max()
    print(f"after 60 s: bus {bus_rate:.2e}, target {target_rate:.2e}, arm {arm_rate:.2e} rad/s; wrench "
          f"{after_impulse_force:.3g} N, {after_impulse_torque:.3g} N m; wheels {peak_wheel:.2f} of max speed")
    assert bus_rate < config.capture.detumble_rate and target_rate < config.capture.detumble_rate
    assert arm_rate < config.capture.detumble_rate
    assert controller.capture_mode.rate_damping_ended is not None
    # the multipliers follow the commanded torques: within the limits to the controller's model accuracy (exact)
    assert after_impulse_force <= config.capture.force_limit * (1 + 1e-6)
    assert after_impulse_torque <= config.capture.torque_limit * (1 + 1e-6)
    assert peak_wheel < 1.0


def test_release_returns_to_the_free_model(servicer_target, config):
    sim, controller = grasped(servicer_target, config)
    assert controller.holding and controller.follower is controller.joined.follower
    controller.set_grasp(False, sim.state.t, sim.state.q, sim.state.v)
    assert not controller.holding and controller.capture_mode is None
    assert controller.follower is not controller.joined.follower
    out = controller.update(sim.state.t, sim.state.q, sim.state.v)
    assert np.all(np.isfinite(out.arm_torque))


def test_set_grasp_without_a_grasp_model(config):
    system = build_model({"name": "servicer_only", "arm_joints": [f"right_j{i}" for i in range(7)],
                          "subtrees": [{"name": "servicer", "urdf": "urdf/servicer.urdf.xacro",
                                        "base_joint": "free_flyer", "base_link": "base_link"}],
                          "reaction_wheels": {"joints": ["rw_x_joint", "rw_y_joint", "rw_z_joint"],
                                              "max_torque": 0.2, "max_speed": 628.3}})
    controller = ServicerController(system, config)
    with pytest.raises(CommandError, match="grasp: this controller has no joined-system model"):
        controller.set_grasp(True, 0.0, system.neutral(), np.zeros(system.nv))


@pytest.mark.slow
def test_flexible_servicer_holds_with_its_motor_loop(config):
    system = build_model("servicer_flexible")
    sim, controller = grasped(system, config)
    assert controller.capture_mode.limiter is None and controller.follower is not controller.joined.follower
    for _ in range(5000):
        s = sim.state
        out = controller.update(s.t, s.q, s.v)
        sim.step(out.arm_torque, out.wheel_torque)
    state = sim.contact_state()
    assert state.holding and state.peak_force < 10.0 and state.peak_torque < 5.0
    assert np.abs(sim.state.v[system.arm_v]).max() < 0.1


def test_overload_watch_requests_a_release_only_after_a_continuous_overload():
    """CaptureMode.note_effort (docs/contact.md sec. 8): a release is asked for once an effort limit has been hit in
    every control period for overload_release_time; a period without a clip restarts the count; None never asks."""
    from space_robot_control.servicer_controller import CaptureMode

    clipped, free = np.array([False, True, False]), np.zeros(3, dtype=bool)
    mode = CaptureMode(10.0, None, True, 1e-3, overload_release_time=0.5)
    dt = 1e-3
    for k in range(400):                              # 0.4 s of clipping, then one free period
        mode.note_effort(10.0 + k * dt, clipped)
    assert mode.overload_since == 10.0 and mode.release_requested_at is None
    mode.note_effort(10.4, free)
    assert mode.overload_since is None and not mode.overloaded_joints.any()
    for k in range(501):                              # 0.5 s from 10.401 s
        mode.note_effort(10.401 + k * dt, clipped)
    assert mode.release_requested_at == pytest.approx(10.901)
    mode.note_effort(11.5, clipped)                   # asked for once
    assert mode.release_requested_at == pytest.approx(10.901)
    never = CaptureMode(10.0, None, True, 1e-3, overload_release_time=None)
    for k in range(5000):
        never.note_effort(10.0 + k * dt, clipped)
    assert never.release_requested_at is None and never.overload_since == 10.0


def test_overload_watch_releases_at_once_when_the_wrench_runs_away_at_an_effort_limit():
    """CaptureMode.note_wrench: beyond overload_wrench_factor x the limits while a joint clips, a release is asked for
    at once; the same wrench without a clip, or a clip with the wrench within the factor, asks for nothing."""
    from types import SimpleNamespace

    from space_robot_control.servicer_controller import CaptureMode

    limiter = SimpleNamespace(force_limit=20.0, torque_limit=10.0)
    clipped, free = np.array([True, False]), np.zeros(2, dtype=bool)
    mode = CaptureMode(10.0, limiter, True, 1e-3, overload_release_time=0.5, overload_wrench_factor=1.5)
    mode.note_effort(10.001, free)
    mode.note_wrench(10.001, 100.0, 100.0)             # no clip: the limiter's business, not the watch's
    mode.note_effort(10.002, clipped)
    mode.note_wrench(10.002, 29.9, 14.9)               # a clip within 1.5x: wait
    assert mode.release_requested_at is None
    mode.note_wrench(10.003, 29.9, 15.1)
    assert mode.release_requested_at == 10.003 and "15.1 N m" in mode.release_reason
    off = CaptureMode(10.0, limiter, True, 1e-3, overload_release_time=0.5, overload_wrench_factor=None)
    off.note_effort(10.001, clipped)
    off.note_wrench(10.001, 1e6, 1e6)
    assert off.release_requested_at is None


@pytest.mark.parametrize("key, value, expected", [
    ("overload_release_time", 0.25, 0.25), ("overload_release_time", None, None),
    ("overload_release_time", -0.5, "must be > 0"), ("overload_release_time", "soon", "number"),
    ("overload_wrench_factor", 2.0, 2.0), ("overload_wrench_factor", None, None),
    ("overload_wrench_factor", 1.0, "must be > 1"), ("overload_wrench_factor", 0.5, "must be > 1"),
])
def test_the_overload_settings_are_read_and_checked(key, value, expected):
    """controller.yaml capture.overload_*: a number in range, or null to switch that part of the watch off."""
    import yaml

    from space_robot_control.controller_config import read_controller_config
    from space_robot_dynamics.config_reader import ConfigReader

    raw = yaml.safe_load(open("config/controller.yaml"))
    raw["capture"][key] = value
    if isinstance(expected, str):
        with pytest.raises(ConfigError) as info:
            read_controller_config(ConfigReader(raw, "controller.yaml"))
        assert info.value.field.endswith(f"capture.{key}") and expected in info.value.problem
    else:
        assert getattr(read_controller_config(ConfigReader(raw, "controller.yaml")).capture, key) == expected
