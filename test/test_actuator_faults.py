"""Failed drives (space_robot_dynamics/simulation/actuator_faults.py) and the dynamics node that strikes them.

Analytic reference: a single wheel on the z axis of a free bus (test_reaction_wheel.py's), where a wheel torque
tau changes the relative speed W at tau (1/J_w + 1/I_b) and the bus's rate at -tau / I_b; the total angular
momentum stays as it was. RK4 integrates a constant torque exactly, so the slipping phase of a seized bearing
(constant friction) is checked to 1e-9 rad/s. Then the capture scenario with a fault of every drive kind during
the detumble: each reported at its tick, the monitor's momentum check unmoved (a drive's torque is internal)."""
import pytest
from rosbags.rosbag2 import Reader
from test_reaction_wheel import I_BUS, J_WHEEL, write_bus

from space_robot_dynamics.errors import CommandError
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario
from space_robot_scenario.overrides import parse_overrides

DT = 1e-3
GAIN = 1.0 / J_WHEEL + 1.0 / I_BUS[2]          # (rad/s^2) / (N m): the relative speed's response to a torque


def spun_up(tmp_path, seconds=1.0, torque=1.0):
    sim = Simulator(write_bus(tmp_path, max_torque=1.0), SimulationSettings(dt=DT, integrator="rk4"))
    for _ in range(round(seconds / DT)):
        sim.step(wheel_torque=[torque])
    return sim


def wheel_speed(sim) -> float:
    return float(sim.state.v[sim.system.v_index("wheel_joint")])


def spin_momentum(sim) -> float:
    """Total angular momentum about z (kg m^2/s): bus and wheel (all on the z axis)."""
    bus_rate = sim.state.v[5]
    return I_BUS[2] * bus_rate + J_WHEEL * (bus_rate + wheel_speed(sim))


def test_a_lost_drive_gives_no_torque_and_the_wheel_spins_on(tmp_path):
    sim = spun_up(tmp_path)
    speed = wheel_speed(sim)
    sim.fail_actuator("wheel_joint", "lost")
    for _ in range(500):
        sim.step(wheel_torque=[1.0])              # the controller still asks
    assert sim.applied_torques[1][0] == 0.0
    assert wheel_speed(sim) == pytest.approx(speed, abs=1e-12)


def test_a_halved_drive_gives_half_its_limit(tmp_path):
    sim = spun_up(tmp_path)
    speed = wheel_speed(sim)
    sim.fail_actuator("wheel_joint", "halved")
    for _ in range(500):
        sim.step(wheel_torque=[1.0])
    assert sim.applied_torques[1][0] == 0.5
    assert wheel_speed(sim) == pytest.approx(speed + 0.5 * 0.5 * GAIN, abs=1e-9)


def test_a_seized_bearing_stops_the_wheel_as_coulomb_friction_does_and_holds_it(tmp_path):
    """Friction 0.25 N m on a wheel at ~20 rad/s: the relative speed falls at 0.25 GAIN rad/s^2 (analytic, to
    1e-9) and stops at W0 / (0.25 GAIN) = 4.0 s, not sooner (the friction bounds the braking); it then stays
    within 1e-9 rad/s of the bus's rate (the hold's step lands within J_w / I_b of zero and shrinks by that factor
    each step), and the total angular momentum is unchanged to 1e-12 of the wheel's."""
    sim = spun_up(tmp_path)
    w0, h0 = wheel_speed(sim), spin_momentum(sim)
    friction = 0.25
    stop = w0 / (friction * GAIN)
    sim.fail_actuator("wheel_joint", "stuck", torque=friction)
    for _ in range(2000):
        sim.step(wheel_torque=[1.0])              # the drive is dead: commands do nothing
    assert wheel_speed(sim) == pytest.approx(w0 - friction * GAIN * 2.0, abs=1e-9)
    for _ in range(round((stop - 2.0) / DT) - 2):
        sim.step(wheel_torque=[1.0])
    assert wheel_speed(sim) > 1e-3                # still slipping just before the analytic stop
    for _ in range(1000):
        sim.step(wheel_torque=[-1.0])
        assert abs(sim.applied_torques[1][0]) <= friction
    assert abs(wheel_speed(sim)) < 1e-9
    assert abs(spin_momentum(sim) - h0) < 1e-12 * J_WHEEL * w0 * 1e3


def test_a_failed_drive_is_refused_for_a_joint_that_has_none(tmp_path):
    sim = spun_up(tmp_path, seconds=0.01)
    with pytest.raises(CommandError, match="not an actuated joint"):
        sim.fail_actuator("no_such_joint", "lost")
    with pytest.raises(CommandError, match="friction torque > 0"):
        sim.fail_actuator("wheel_joint", "stuck")
    with pytest.raises(ValueError, match="unknown actuator fault"):
        sim.fail_actuator("wheel_joint", "melted")


# ---- in the graph ------------------------------------------------------------------------------------------------
FAULTS = ("faults=[{time: 13.0, component: rw_x_joint, kind: wheel_lost},"
          " {time: 13.0, component: rw_y_joint, kind: wheel_torque_halved},"
          " {time: 13.0, component: rw_z_joint, kind: wheel_stuck, torque: 0.5},"
          " {time: 13.5, component: right_j0, kind: joint_limp}]")


@pytest.fixture(scope="module")
def faulted_capture(tmp_path_factory):
    """capture.yaml with a fault of each drive kind 1.5 s into the detumble, run to 15 s; its bag's messages."""
    out = tmp_path_factory.mktemp("faults") / "run"
    result = SimulationRun(load_scenario("capture", parse_overrides([FAULTS]))).run(
        duration=15.0, out_dir=out, plots=False, progress=False)
    typestore = RosbagsMessageTypes().typestore
    topics = {}
    with Reader(result.bag) as reader:
        for connection, log_time, raw in reader.messages():
            if connection.topic in ("joint_states", "diagnostics"):
                topics.setdefault(connection.topic, []).append(
                    (log_time * 1e-9, typestore.deserialize_cdr(raw, connection.msgtype)))
    return result, topics


def test_each_fault_is_reported_when_it_strikes_and_in_every_report_after(faulted_capture):
    _result, topics = faulted_capture
    first = {}
    for t, msg in topics["diagnostics"]:
        for status in msg.status:
            if status.message.startswith("fault: "):
                assert status.level == 1, status           # WARN
                first.setdefault(status.name, t)
    assert first == pytest.approx({"dynamics: rw_x_joint": 13.0, "dynamics: rw_y_joint": 13.0,
                                   "dynamics: rw_z_joint": 13.0, "dynamics: right_j0": 13.5}, abs=1e-9)


def test_the_drives_fail_as_scheduled_and_the_monitor_sees_no_physics_error(faulted_capture):
    """After 13.0 s: rw_x applies nothing, rw_y at most 0.1 N m (half its 0.2), rw_z is braked to the bus within
    its spin momentum over 0.5 N m; after 13.5 s right_j0 applies nothing. The holonomy monitor reports OK
    throughout (the faults change no momentum: its conservation check, 1e-3 of the capacity, stays quiet), and
    the recorded momentum is conserved to 1e-9 N m s."""
    result, topics = faulted_capture
    names = list(topics["joint_states"][0][1].name)
    x, y, z, j0 = (names.index(n) for n in ("rw_x_joint", "rw_y_joint", "rw_z_joint", "right_j0"))
    after = [(t, m) for t, m in topics["joint_states"] if t > 13.0 + 1e-6]
    assert all(m.effort[x] == 0.0 for _t, m in after)
    assert all(abs(m.effort[y]) <= 0.1 for _t, m in after) and any(abs(m.effort[y]) == 0.1 for _t, m in after)
    assert all(m.effort[j0] == 0.0 for t, m in after if t > 13.5 + 1e-6)
    z_speed = [abs(m.velocity[z]) for t, m in after if t > 14.5]
    assert max(z_speed) < 1e-6
    summary = result.summary
    assert summary["diagnostics"]["holonomy_monitor: holonomy"] == {"OK": 150}
    assert summary["momentum_drift"]["max_angular_kg_m2_s"] < 1e-9
