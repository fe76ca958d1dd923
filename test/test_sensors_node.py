"""The sensors node (space_robot_nodes/sensors_core.py) in the standalone runtime: a model with every sensor,
run for 2 s; the measured topics read back from the bag against the truth beside them."""
import math

import numpy as np
import pytest
from rosbags.rosbag2 import Reader

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.package_share import resolve
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario

ARW = 1.0e-6                                          # rad/s^0.5: 1e-5 rad/s a sample at 100 Hz
SENSORS = f"""
sensors:
  seed: 4
  gyro: {{rate: 100.0, angle_random_walk: {ARW}, rate_random_walk: 1.0e-7,
          orientation: [0.38268343236508984, 0.0, 0.0, 0.9238795324112867]}}
  star_tracker: {{rate: 10.0, cross_boresight: 5.0e-5, about_boresight: 4.0e-4, latency: 0.1}}
  joint_encoders: {{rate: 1000.0, noise: 1.0e-5, counts_per_revolution: 524288}}
  wheel_tachometers: {{rate: 100.0, noise: 0.01, resolution: 0.005}}
  wrist_force_torque: {{rate: 1000.0, force_noise: 0.05, torque_noise: 0.002, cutoff_frequency: 100.0}}
  target_pose:
    rate: 5.0
    latency: 0.2
    position_noise: {{at_zero_range: 0.002, per_metre: 0.004}}
    attitude_noise: {{at_zero_range: 0.002, per_metre: 0.003}}
    field_of_view: 2.0
    max_range: 20.0
"""


def sensed_scenario(tmp_path, sensors=SENSORS):
    model = tmp_path / "sensed_model.yaml"
    model.write_text(resolve("config/models/servicer_target.yaml").read_text() + sensors)
    scenario = tmp_path / "sensed.yaml"
    scenario.write_text(f"name: sensed\nmodel: {model}\nduration: 2.0\n"
                        "goals: {attitude_setpoint: {publish_at: 0.0, orientation_xyzw: [0.0, 0.0, 0.0998334166, "
                        "0.9950041653]}}\n")
    return scenario


def read_topics(bag):
    typestore = RosbagsMessageTypes().typestore
    out = {}
    with Reader(bag) as reader:
        for connection, log_time, raw in reader.messages():
            out.setdefault(connection.topic, []).append((log_time, typestore.deserialize_cdr(raw,
                                                                                            connection.msgtype)))
    return out


def stamp(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


@pytest.fixture(scope="module")
def sensed_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sensed")
    run = SimulationRun(load_scenario(sensed_scenario(tmp)))
    result = run.run(out_dir=tmp / "out", plots=False, progress=False)
    assert result.complete
    return read_topics(result.bag)


def test_every_sensor_reports_in_its_frame_and_every_frame_is_on_tf_static(sensed_run):
    frames = {"imu/data": "gyro_link", "star_tracker/attitude": "base_link", "encoders/joint_states": "",
              "tachometers/joint_states": "", "wrist/wrench": "ft_sensor_link",
              "target/pose_measurement": "pose_sensor_link"}
    for topic, frame in frames.items():
        assert sensed_run.get(topic), topic
        assert {m.header.frame_id for _t, m in sensed_run[topic]} == {frame}, topic
    static = {(t.header.frame_id, t.child_frame_id) for _log, m in sensed_run["tf_static"] for t in m.transforms}
    assert {("base_link", "gyro_link"), ("base_link", "star_tracker_link"), ("right_hand", "ft_sensor_link"),
            ("base_link", "pose_sensor_link")} <= static


def test_late_measurements_are_stamped_when_taken_and_published_after_their_latency(sensed_run):
    for topic, latency_ns in (("star_tracker/attitude", 100_000_000), ("target/pose_measurement", 200_000_000)):
        delays = {log - stamp(m) for log, m in sensed_run[topic]}
        assert delays == {latency_ns}, topic
    assert {stamp(m) for _log, m in sensed_run["imu/data"]} == {log for log, _m in sensed_run["imu/data"]}


def test_the_gyro_reports_the_bus_rate_in_its_own_axes_with_its_noise(sensed_run):
    """The bus slews (an attitude setpoint 0.2 rad about z): the gyro, tilted 45 deg about x on the bus, reports
    R_bus_gyro^T omega_bus plus noise of the configured white variance (the rate random walk is negligible over
    2 s). 200 samples: the variance within 4 sigma of its estimate, 4 sqrt(2 / 199) = 40 %; the bus turns at more
    than 20 noise sigmas, so a frame error (0.77 omega for 45 deg) would be a variance hundreds of times larger."""
    truth = {stamp(m): np.array([m.twist.twist.angular.x, m.twist.twist.angular.y, m.twist.twist.angular.z])
             for _log, m in sensed_run["base/odom"]}
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    to_gyro = np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]])           # R_bus_gyro^T, about x
    errors, moving = [], 0.0
    for _log, m in sensed_run["imu/data"]:
        omega = truth[stamp(m)]
        moving = max(moving, float(np.linalg.norm(omega)))
        errors.append(np.array([m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z]) - to_gyro @ omega)
        assert m.orientation_covariance[0] == -1.0 and m.linear_acceleration_covariance[0] == -1.0
    variance = ARW ** 2 * 100.0                               # sigma_v^2 / dt
    assert moving > 20 * math.sqrt(variance)                  # the bus does turn: a frame error would show
    measured = np.mean(np.array(errors) ** 2, axis=0)
    np.testing.assert_allclose(measured / variance, 1.0, atol=4 * math.sqrt(2 / (len(errors) - 1)))
    np.testing.assert_allclose(sensed_run["imu/data"][0][1].angular_velocity_covariance,
                               np.eye(3).ravel() * (variance + 1e-14 / 1200), rtol=1e-9)


def test_the_same_configuration_gives_the_same_measurements(sensed_run, tmp_path):
    again = read_topics(SimulationRun(load_scenario(sensed_scenario(tmp_path))).run(
        out_dir=tmp_path / "out", plots=False, progress=False).bag)
    typestore = RosbagsMessageTypes().typestore
    for topic, msgtype in (("imu/data", "sensor_msgs/msg/Imu"),
                           ("target/pose_measurement", "geometry_msgs/msg/PoseWithCovarianceStamped")):
        first = [typestore.serialize_cdr(m, msgtype) for _t, m in sensed_run[topic]]
        second = [typestore.serialize_cdr(m, msgtype) for _t, m in again[topic]]
        assert first == second, topic


def test_a_gyro_not_on_a_floating_base_is_refused_naming_the_model_file(tmp_path):
    sensors = "\nsensors:\n  gyro: {rate: 100.0, angle_random_walk: 1.0e-4, frame: right_l3}\n"
    with pytest.raises(ConfigError, match="sensed_model.yaml: sensors.gyro.frame: must be the link of a floating"):
        SimulationRun(load_scenario(sensed_scenario(tmp_path, sensors)))


def test_a_sensor_rate_the_step_cannot_count_is_refused_naming_the_model_setting(tmp_path):
    sensors = "\nsensors:\n  gyro: {rate: 300.0, angle_random_walk: 1.0e-4}\n"
    with pytest.raises(ConfigError, match=r"sensed_model.yaml: sensors.gyro.rate: 300 Hz .* not a whole number"):
        SimulationRun(load_scenario(sensed_scenario(tmp_path, sensors)))


def test_an_unreadable_state_message_is_skipped_and_reported_and_the_next_good_one_is_used(tmp_path):
    """A base odometry with a NaN: the gyro takes no sample then (nothing passed on), diagnostics say WARN naming
    the topic; the next good message is sampled as usual."""
    from space_robot_nodes import conversions as cv
    from space_robot_nodes.sensors_core import SensorsCore

    gyro_only = "\nsensors:\n  gyro: {rate: 100.0, angle_random_walk: 1.0e-6}\n"
    scenario = load_scenario(sensed_scenario(tmp_path, gyro_only))
    types = RosbagsMessageTypes()
    run = SimulationRun(scenario)
    core = SensorsCore(types, run.system, scenario.sensors, scenario.nodes.sensors, scenario.model.source)
    published = []
    core.attach(lambda topic, msg: published.append((topic, msg)), lambda: 0.0, lambda _topic: True)

    def odometry(angular):
        return cv.odometry(types, 0.0, "world", "base_link", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0] * 3,
                           angular)

    core._take_odometry("servicer", odometry([float("nan"), 0.0, 0.0]))
    core._sample_gyro(0.0)
    core._diagnostics(0.0)
    assert [topic for topic, _m in published] == ["diagnostics"]
    warned = [s for s in published[0][1].status if s.name == "sensors: base/odom"]
    assert warned and warned[0].level == cv.WARN and "non-finite" in warned[0].message
    core._take_odometry("servicer", odometry([0.0, 0.0, 0.01]))
    core._sample_gyro(0.01)
    assert published[-1][0] == "imu/data" and abs(published[-1][1].angular_velocity.z - 0.01) < 1e-4


def test_encoder_and_tachometer_channels_take_the_joints_named(tmp_path):
    """`joints` chooses a channel's joints (default: every arm joint, every wheel); a joint of the wrong sort is
    refused naming the field."""
    sensors = ("\nsensors:\n  joint_encoders: {rate: 100.0, noise: 0.0, joints: [right_j3, right_j0]}\n"
               "  wheel_tachometers: {rate: 100.0, noise: 0.0, joints: [rw_z_joint]}\n")
    result = SimulationRun(load_scenario(sensed_scenario(tmp_path, sensors))).run(
        duration=0.05, out_dir=tmp_path / "out", plots=False, progress=False)
    topics = read_topics(result.bag)
    truth = {stamp(m): dict(zip(m.name, m.position)) for _t, m in topics["joint_states"]}
    for _log, m in topics["encoders/joint_states"]:
        assert list(m.name) == ["right_j3", "right_j0"] and len(m.velocity) == 0
        assert list(m.position) == [truth[stamp(m)]["right_j3"], truth[stamp(m)]["right_j0"]]   # noise 0
    assert {tuple(m.name) for _t, m in topics["tachometers/joint_states"]} == {("rw_z_joint",)}
    wrong = "\nsensors:\n  joint_encoders: {rate: 100.0, joints: [rw_x_joint]}\n"
    with pytest.raises(ConfigError, match="sensors.joint_encoders.joints: must name arm joints of the model"):
        SimulationRun(load_scenario(sensed_scenario(tmp_path, wrong)))


FAULTS = """faults:
  - {time: 0.5, component: gyro, kind: bias_jump, value: [0.0, 0.0, 0.01]}
  - {time: 0.3, component: star_tracker, kind: outage, duration: 0.5}
  - {time: 1.0, component: target_pose, kind: dropout, duration: 0.6}
"""


def test_sensor_faults_strike_when_scheduled_and_are_reported_then(tmp_path):
    """A gyro bias jump of 0.01 rad/s about z at 0.5 s (1000 noise sigmas), a star tracker outage over [0.3, 0.8)
    and a pose dropout over [1.0, 1.6): the gyro's z error jumps at 0.5 s, no solution or pose is taken in its
    window, and diagnostics report each fault at the tick it happens."""
    scenario_path = sensed_scenario(tmp_path, SENSORS.replace("orientation: [0.38268343236508984, 0.0, 0.0, "
                                                              "0.9238795324112867]", "orientation: [0, 0, 0, 1]"))
    scenario_path.write_text(scenario_path.read_text() + FAULTS)
    topics = read_topics(SimulationRun(load_scenario(scenario_path)).run(
        out_dir=tmp_path / "out", plots=False, progress=False).bag)
    truth = {stamp(m): m.twist.twist.angular.z for _log, m in topics["base/odom"]}
    jumps = [(stamp(m), m.angular_velocity.z - truth[stamp(m)]) for _log, m in topics["imu/data"]]
    assert all(abs(error) < 1e-4 for t, error in jumps if t < 500_000_000)
    assert all(abs(error - 0.01) < 1e-4 for t, error in jumps if t >= 500_000_000)
    assert not [m for _l, m in topics["star_tracker/attitude"] if 300_000_000 <= stamp(m) < 800_000_000]
    assert not [m for _l, m in topics["target/pose_measurement"] if 1_000_000_000 <= stamp(m) < 1_600_000_000]
    reports = {(s.name, log) for log, m in topics["diagnostics"] for s in m.status if s.message.startswith("fault:")}
    assert reports == {("sensors: gyro", 500_000_000), ("sensors: star_tracker", 300_000_000),
                       ("sensors: target_pose", 1_000_000_000)}


def test_a_wrist_sensor_off_the_grasp_frame_is_refused(tmp_path):
    sensors = "\nsensors:\n  wrist_force_torque: {rate: 100.0, frame: right_l5}\n"
    with pytest.raises(ConfigError, match="sensors.wrist_force_torque.frame: must be the grasp's end_effector_frame"):
        SimulationRun(load_scenario(sensed_scenario(tmp_path, sensors)))


def test_the_pose_sensors_field_of_view_is_drawn_as_configured(sensed_run):
    """The cone RViz shows: in the sensor's frame, every edge at half the configured field of view (2.0 rad here)
    from the boresight (+z), from min_range out to nodes.yaml's field_of_view_length."""
    (_log, marker), = sensed_run["visualization/pose_sensor_field_of_view"]
    assert marker.header.frame_id == "pose_sensor_link" and marker.frame_locked
    points = np.array([[p.x, p.y, p.z] for p in marker.points])
    edges = points.reshape(-1, 4, 3)[:, 1, :]                      # each edge's far end
    angles = np.arccos(edges[:, 2] / np.linalg.norm(edges, axis=1))
    assert np.allclose(angles, 1.0, atol=1e-12)
    assert np.allclose(np.linalg.norm(edges, axis=1), 2.5, atol=1e-12)
