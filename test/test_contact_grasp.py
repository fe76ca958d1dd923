"""The grasp as an event in the simulator (space_robot_dynamics/contact/grasp.py): the capture envelope, failed
grasps reported and not forced, release, bad input, and a 60 s joined run (drift, momentum, energy)."""
import numpy as np
import pytest
from grasp_states import drifting, fixture_at_hand

from space_robot_dynamics import build_model
from space_robot_dynamics.contact.contact_events import GRASP, GRASP_FAILED, GRIPPER_OPENED, RELEASE
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_dynamics.simulation.system_momentum import body_momenta_scale

# a joint-space PD about the grasp pose, the stand-in for a controller (gains as test_conservation.py's: soft
# enough for the 0.33 kg wrist at 1 ms, any internal torque conserves momentum)
ARM_KP = 4.0 * np.array([2.0, 3.0, 1.0, 1.0, 0.1, 0.1, 0.02])     # N m/rad
ARM_KD = 0.25 * ARM_KP                                             # N m s/rad


def simulator(system, offset=(0.003, -0.002, 0.001), tilt=0.0, seed=3, **rates):
    rng = np.random.default_rng(seed)
    q = fixture_at_hand(system, offset=offset, tilt=tilt)
    rates = {"arm_rate": 0.002, "base_rate": (0.003, 0.002), "target_rate": (0.003, 0.005), **rates}
    return Simulator(system, SimulationSettings(dt=1e-3), q, drifting(system, rng, **rates))


def test_grasp_within_the_envelope_closes_the_loop(servicer_target):
    sim = simulator(servicer_target)
    assert sim.contact_state().mode == "free" and not sim.contact_state().gripper_closed
    sim.command_gripper(True)
    sim.step()
    event = sim.contact_events[-1]
    assert event.kind == GRASP and event.t == 0.0
    state = sim.contact_state()
    assert state.mode == "grasp" and state.holding and state.gripper_closed and state.grasp_time == 0.0
    assert state.drift_position < 1e-12 and state.drift_angle < 1e-12
    assert event.figures["position_m"] == pytest.approx(np.linalg.norm([0.003, -0.002, 0.001]), abs=1e-12)
    force = sim.constraint_force()
    assert force.shape == (6,) and np.all(np.isfinite(force))


@pytest.mark.parametrize("case, kwargs, named", [
    ("position", {"offset": (0.03, 0.0, 0.0)}, "position 0.03 m > 0.02 m"),
    ("angle", {"tilt": 0.08}, "angle 0.08 rad > 0.05 rad"),
    ("linear velocity", {"base_rate": (0.05, 0.0), "arm_rate": 0.0, "target_rate": (0.0, 0.0)}, "linear_velocity"),
    ("angular velocity", {"target_rate": (0.0, 0.05), "arm_rate": 0.0, "base_rate": (0.0, 0.0)},
     "angular_velocity"),
])
def test_a_grasp_outside_the_envelope_fails_and_is_reported_not_forced(servicer_target, case, kwargs, named):
    sim = simulator(servicer_target, **kwargs)
    v_before = sim.state.v.copy()
    sim.command_gripper(True)
    sim.state = sim._contact_step_start(sim.state)
    event = sim.contact_events[-1]
    assert event.kind == GRASP_FAILED and named in event.message, (case, event.message)
    assert np.array_equal(sim.state.v, v_before)                   # no impulse
    assert sim.contact_state().mode == "free" and sim.contact_state().gripper_closed
    sim.step()
    sim.command_gripper(True)                      # already closed (on nothing): no new attempt
    sim.step()
    assert len(sim.contact_events) == 1
    sim.command_gripper(False)
    sim.step()
    assert sim.contact_events[-1].kind == GRIPPER_OPENED and not sim.contact_state().gripper_closed


def test_release_opens_the_loop(servicer_target):
    sim = simulator(servicer_target)
    sim.command_gripper(True)
    for _ in range(100):
        sim.step()
    sim.command_gripper(False)
    sim.step()
    event = sim.contact_events[-1]
    assert event.kind == RELEASE and "0.100 s" in event.message
    assert sim.contact_state().mode == "free" and not sim.contact_state().holding
    assert sim.constraint_force() is None


def test_bad_gripper_commands(servicer_target):
    no_grasp = build_model({"name": "servicer_only", "arm_joints": [f"right_j{i}" for i in range(7)],
                            "subtrees": [{"name": "servicer", "urdf": "urdf/servicer.urdf.xacro",
                                          "base_joint": "free_flyer", "base_link": "base_link"}]})
    with pytest.raises(CommandError, match="gripper: the model has no gripper"):
        Simulator(no_grasp).command_gripper(True)
    sim = simulator(servicer_target)
    for bad in (1, "close", None, np.array([True, False])):
        with pytest.raises(CommandError, match="gripper: must be true"):
            sim.command_gripper(bad)
    assert sim.grasp.commanded_closed is False
    with pytest.raises(CommandError, match="contact_surface: no surface 'hull'"):
        sim.set_contact_surface("hull")


def grasp_mapping(**grasp):
    config = load_model_config("config/models/servicer_target.yaml")
    data = {"name": "m", "arm_joints": list(config.arm_joints),
            "subtrees": [{"name": "servicer", "urdf": "urdf/servicer.urdf.xacro", "base_joint": "free_flyer",
                          "base_link": "base_link"},
                         {"name": "target", "urdf": "urdf/target.urdf.xacro", "base_joint": "free_flyer",
                          "base_link": "base_link", "frame_prefix": "target/"}],
            "grasp": {"end_effector_frame": "right_hand", "approach_axis": [0, 0, 1],
                      "target_frame": "target/grapple_frame", "target_axis": [1, 0, 0],
                      "tolerances": {"position": 0.02, "angle": 0.05, "linear_velocity": 0.02,
                                     "angular_velocity": 0.02}}}
    for key, value in grasp.items():
        node = data["grasp"]
        *path, last = key.split(".")
        for part in path:
            node = node[part]
        node[last] = value
    return data


@pytest.mark.parametrize("key, value, field, problem", [
    ("target_frame", "target/handle", "grasp.target_frame", "no link or frame named 'target/handle'"),
    ("end_effector_frame", "right_gripper", "grasp.end_effector_frame", "no link or frame named 'right_gripper'"),
    ("target_frame", "right_l6", "grasp.target_frame", "same body as the end effector"),
    ("tolerances.position", -0.01, "grasp.tolerances.position", "must be > 0.0, got -0.01"),
    ("tolerances.angular_velocity", -1, "grasp.tolerances.angular_velocity", "must be > 0.0"),
    ("tolerances.angle", 4.0, "grasp.tolerances.angle", "must be <="),
    ("approach_axis", [0, 0, 0], "grasp.approach_axis", "non-zero"),
    ("stabilization", {"natural_frequency": -20.0}, "grasp.stabilization.natural_frequency", "must be > 0.0"),
])
def test_bad_grasp_configuration_is_a_clear_error_at_load(key, value, field, problem):
    with pytest.raises(ConfigError) as info:
        build_model(grasp_mapping(**{key: value}))
    assert info.value.field == field and problem in info.value.problem


@pytest.mark.slow
def test_joined_run_of_60_s_keeps_the_loop_momentum_and_energy(servicer_target):
    """60 s held (RK4, 1 ms) with the arm under a PD about its grasp pose, a tumbling target: the loop's pose error
    stays at round-off (Baumgarte at 20 rad/s takes out RK4's truncation as it appears); momentum within the
    free system's 1e-9 of the peak single-body momentum (test_conservation.py); energy balance within 1e-9 of the
    kinetic energy (the constraint forces work only through the drift, zero here)."""
    system = servicer_target
    sim = simulator(system)
    arm_q = np.array([system.q_slice(n).start for n in system.arm_joints])
    q_home = sim.state.q[arm_q]
    sim.command_gripper(True)
    start = sim.observe()
    worst_position = worst_angle = p_scale = l_scale = 0.0
    for k in range(60000):
        s = sim.state
        sim.step(-ARM_KP * (s.q[arm_q] - q_home) - ARM_KD * s.v[system.arm_v])
        if k % 500 == 0:
            state = sim.contact_state()
            worst_position, worst_angle = max(worst_position, state.drift_position), max(worst_angle,
                                                                                         state.drift_angle)
            p, lm = body_momenta_scale(system.model, system.model.createData(), sim.state.q, sim.state.v)
            p_scale, l_scale = max(p_scale, p), max(l_scale, lm)
    end = sim.observe()
    assert sim.contact_events[0].kind == GRASP and sim.contact_state().holding
    print(f"60 s joined: drift {worst_position:.2e} m, {worst_angle:.2e} rad; momentum "
          f"{np.abs(end.momentum.linear - start.momentum.linear).max() / p_scale:.2e}, "
          f"{np.abs(end.momentum.angular - start.momentum.angular).max() / l_scale:.2e}")
    assert worst_position < 1e-12 and worst_angle < 1e-12
    assert np.abs(end.momentum.linear - start.momentum.linear).max() < 1e-9 * p_scale
    assert np.abs(end.momentum.angular - start.momentum.angular).max() < 1e-9 * l_scale
    energy = end.momentum.kinetic_energy - start.momentum.kinetic_energy
    balance = energy - (end.actuator_work - end.dissipated_energy + start.dissipated_energy)
    assert abs(balance) < 1e-9 * start.momentum.kinetic_energy
