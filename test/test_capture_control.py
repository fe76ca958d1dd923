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
from space_robot_dynamics.errors import CommandError
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
