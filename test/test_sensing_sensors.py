"""Star tracker, encoders, tachometers, wrist force/torque sensor and relative pose sensor
(space_robot_sensing/) against their configured statistics, rates, latency, visibility and frames.

Statistical bounds: a sample variance of n draws has relative standard deviation sqrt(2 / (n - 1)); a proportion
p of n draws has standard deviation sqrt(p (1 - p) / n). Each check allows 4 of those (a false failure below
1e-4 per check); the seeds are fixed, so a pass is reproducible, and each bound is far tighter than the error a
wrong formula would make (a variance off by a factor 2, a sigma applied in the wrong frame).
"""
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_sensing import relative_pose_sensor as rps
from space_robot_sensing.delay_line import DelayLine
from space_robot_sensing.force_torque_sensor import ForceTorqueSensor, read_force_torque, wrench_in_sensor_frame
from space_robot_sensing.joint_encoders import QuantisedChannels, read_encoders, read_tachometers
from space_robot_sensing.random_streams import sensor_stream
from space_robot_sensing.star_tracker import StarTracker, covariance_in_world, read_star_tracker

N = 20_000                                # draws of the cheap sensors (encoders, force/torque)
N_ROTATIONS = 5_000                       # of those whose checks compose rotations (~0.2 ms a sample with scipy)
K = 4.0                                   # allowed standard deviations of an estimate


def variance_bound(n: int) -> float:
    return K * math.sqrt(2.0 / (n - 1))


VARIANCE_BOUND = variance_bound(N)


def reader(data, path):
    return ConfigReader(data, "test", path)


def sample_covariance(errors: np.ndarray) -> np.ndarray:
    return errors.T @ errors / len(errors)            # zero-mean by construction of the model: no mean removed


# ---- star tracker ---------------------------------------------------------------------------------------------
TILTED = Rotation.from_euler("xyz", [0.0, math.pi / 2, 0.0])        # boresight (sensor z) along the bus's x


def star_tracker(**fields):
    data = {"rate": 10.0, "cross_boresight": 2e-5, "about_boresight": 1.6e-4, "orientation": list(TILTED.as_quat()),
            **fields}
    return StarTracker(read_star_tracker(reader(data, "sensors.star_tracker")), sensor_stream(3, "star_tracker"))


def test_star_tracker_errors_have_the_configured_covariance_about_the_boresight_and_across_it():
    """The error rotation q_true^-1 q_measured (body side, bus frame) has the variance of the boresight (the bus x
    axis here) 64 times the cross-boresight ones: checked per axis against the configured sigmas, independently
    of the model's own covariance matrix."""
    tracker = star_tracker()
    truth = Rotation.from_euler("zyx", [0.4, 0.1, -0.3])
    errors = []
    for k in range(N_ROTATIONS):
        assert tracker.sample(k * 0.1, truth.as_quat())
        (solution,) = tracker.release(k * 0.1)
        errors.append((truth.inv() * Rotation.from_quat(solution.value.xyzw)).as_rotvec())
    variance = np.diag(sample_covariance(np.array(errors)))
    expected = np.array([1.6e-4, 2e-5, 2e-5]) ** 2             # bus x is the boresight
    np.testing.assert_allclose(variance / expected, 1.0, atol=variance_bound(N_ROTATIONS))
    np.testing.assert_allclose(solution.value.covariance, np.diag(expected), atol=1e-20)


def test_star_tracker_world_covariance_rotates_the_body_one():
    tracker = star_tracker()
    q = Rotation.from_euler("z", math.pi / 2)
    tracker.sample(0.0, q.as_quat())
    (solution,) = tracker.release(0.0)
    world = covariance_in_world(solution.value)
    # the bus x (the boresight, 1.6e-4) is the world y after a quarter turn about z
    assert world[1, 1] == pytest.approx(1.6e-4 ** 2, rel=1e-6) and world[0, 0] == pytest.approx(2e-5 ** 2, rel=1e-4)


def test_star_tracker_latency_and_outages():
    tracker = star_tracker(latency=0.25, outages=[[1.0, 1.5]])
    q = np.array([0.0, 0.0, 0.0, 1.0])
    released = {}
    for tick in range(300):                          # 1 kHz ticks, 10 Hz samples, 3 s
        t = tick * 0.01
        if tick % 10 == 0:
            tracker.sample(t, q)
        for s in tracker.release(t):
            released[round(s.stamp, 6)] = t
    for stamp, at in released.items():
        assert at == pytest.approx(stamp + 0.25, abs=1e-9)          # handed out latency after its stamp
        assert not 1.0 <= stamp < 1.5 and not 1.0 <= at < 1.5      # nothing taken or handed out in the outage
    assert sorted(released) == [round(0.1 * k, 6) for k in range(28) if not 7.5 <= k < 15]


def test_a_delay_line_refuses_a_negative_latency():
    with pytest.raises(ValueError, match="latency"):
        DelayLine(-0.1)


# ---- encoders and tachometers ------------------------------------------------------------------------------------
def test_encoder_output_is_whole_counts_and_its_variance_is_noise_plus_quantisation():
    config = read_encoders(reader({"rate": 100.0, "noise": 2e-3, "counts_per_revolution": 4096},
                                  "sensors.joint_encoders"))
    resolution = 2 * math.pi / 4096
    assert config.resolution == pytest.approx(resolution)
    channels = QuantisedChannels(config, sensor_stream(0, "joint_encoders"))
    truth = np.linspace(-1.0, 1.0, 7)
    out = np.array([channels.sample(truth) for _ in range(N // 4)])
    np.testing.assert_allclose(out / resolution, np.round(out / resolution), atol=1e-9)
    errors = (out - truth).ravel()
    expected = 2e-3 ** 2 + resolution ** 2 / 12.0
    assert abs(np.mean(errors ** 2) / expected - 1.0) < K * math.sqrt(2.0 / (errors.size - 1))
    assert config.variance == pytest.approx(expected)


def test_tachometers_without_resolution_are_not_quantised():
    config = read_tachometers(reader({"rate": 50.0, "noise": 0.01}, "sensors.wheel_tachometers"))
    out = QuantisedChannels(config, sensor_stream(0, "wheel_tachometers")).sample(np.full(3, 100.0))
    assert len(set(out)) == 3 and np.all(np.abs(out - 100.0) < 0.1)


# ---- wrist force/torque ------------------------------------------------------------------------------------------
def force_torque(**fields):
    data = {"rate": 1000.0, **fields}
    return read_force_torque(reader(data, "sensors.wrist_force_torque"))


def test_force_torque_filter_follows_the_continuous_first_order_step_response():
    """A step held from t = 0 (zero-order hold): y(t_k) = 1 - exp(-2 pi f_c t_k), the continuous response."""
    config = force_torque(cutoff_frequency=20.0)
    sensor = ForceTorqueSensor(config, sensor_stream(0, "wrist_force_torque"))
    sensor.sample(np.zeros(6))                                          # starts the filter at rest
    step = np.array([10.0, 0, 0, 0, 0, 2.0])
    for k in range(1, 60):
        y = sensor.sample(step)
        expected = 1.0 - math.exp(-2 * math.pi * 20.0 * k / 1000.0)
        np.testing.assert_allclose(y[[0, 5]], step[[0, 5]] * expected, rtol=1e-12)


def test_force_torque_noise_bias_and_range():
    config = force_torque(force_noise=0.5, torque_noise=0.02, force_bias=[1.0, 0, 0], torque_bias=[0, 0, -0.1],
                          force_range=50.0, torque_range=5.0)
    sensor = ForceTorqueSensor(config, sensor_stream(0, "wrist_force_torque"))
    truth = np.array([3.0, -2.0, 0.0, 0.1, 0.0, 0.0])
    out = np.array([sensor.sample(truth) for _ in range(N)])
    errors = out - truth - config.bias
    sigma = np.array([0.5] * 3 + [0.02] * 3)
    np.testing.assert_allclose(np.mean(errors ** 2, axis=0) / sigma ** 2, 1.0, atol=VARIANCE_BOUND)
    np.testing.assert_allclose(np.mean(errors, axis=0) / sigma, 0.0, atol=K / math.sqrt(N))
    saturated = sensor.sample(np.array([100.0, -100.0, 0, 9.0, 0, 0]))
    assert saturated[0] == 50.0 and saturated[1] == -50.0 and saturated[3] == 5.0


def test_wrench_in_sensor_frame_keeps_the_power_of_any_twist():
    """Independent check: a wrench and its transform do the same work on any rigid motion
    (f_l . v_l + tau_l . w_l with v_l the velocity of the link origin, the same in the sensor's terms)."""
    rng = np.random.default_rng(0)
    mounting = read_force_torque(reader({"rate": 100.0, "position": [0.1, -0.05, 0.2],
                                         "orientation": list(Rotation.from_rotvec([0.3, -0.2, 0.5]).as_quat())},
                                        "ft")).mounting
    r = mounting.rotation.as_matrix()
    for _ in range(20):
        f, tau, v, w = rng.normal(size=(4, 3))
        ws = wrench_in_sensor_frame(mounting, f, tau)
        v_sensor = r.T @ (v + np.cross(w, mounting.position))        # the sensor origin's velocity, sensor axes
        assert ws[:3] @ v_sensor + ws[3:] @ (r.T @ w) == pytest.approx(f @ v + tau @ w, abs=1e-12)


def test_a_cut_off_above_nyquist_is_refused():
    with pytest.raises(ConfigError, match="sensors.wrist_force_torque.cutoff_frequency: must be below the Nyquist"):
        force_torque(cutoff_frequency=600.0)


# ---- relative pose sensor ----------------------------------------------------------------------------------------
POSE = {"rate": 5.0, "position_noise": {"at_zero_range": 0.002, "per_metre": 0.004},
        "attitude_noise": {"at_zero_range": 0.002, "per_metre": 0.003}, "field_of_view": math.radians(40.0),
        "min_range": 0.3, "max_range": 20.0}


def pose_sensor(**fields):
    config = rps.read_relative_pose(reader({**POSE, **fields}, "sensors.target_pose"))
    return rps.RelativePoseSensor(config, sensor_stream(11, "target_pose"))


@pytest.mark.parametrize("distance", [1.0, 8.0])
def test_pose_noise_grows_with_range_as_configured(distance):
    sensor = pose_sensor()
    truth_r = Rotation.from_euler("xyz", [0.2, -0.1, 0.4])
    position = np.array([0.1, -0.2, 1.0]) * distance / np.linalg.norm([0.1, -0.2, 1.0])
    p_err, a_err = [], []
    for k in range(N_ROTATIONS):
        assert sensor.sample(k * 0.2, position, truth_r), sensor.status
        (m,) = sensor.release(k * 0.2)
        p_err.append(m.value.position - position)
        a_err.append((Rotation.from_quat(m.value.xyzw) * truth_r.inv()).as_rotvec())     # about C's fixed axes
    sigma_p, sigma_a = 0.002 + 0.004 * distance, 0.002 + 0.003 * distance
    bound = variance_bound(N_ROTATIONS)
    np.testing.assert_allclose(np.diag(sample_covariance(np.array(p_err))) / sigma_p ** 2, 1.0, atol=bound)
    np.testing.assert_allclose(np.diag(sample_covariance(np.array(a_err))) / sigma_a ** 2, 1.0, atol=bound)
    np.testing.assert_allclose(np.diag(m.value.covariance), [sigma_p ** 2] * 3 + [sigma_a ** 2] * 3, rtol=1e-12)


@pytest.mark.parametrize("position, status", [
    ([0.0, 0.0, 0.2], rps.TOO_NEAR), ([0.0, 0.0, 25.0], rps.TOO_FAR),
    ([0.0, math.tan(math.radians(21.0)), 1.0], rps.OUT_OF_VIEW),          # 21 deg off the boresight: out
    ([0.0, math.tan(math.radians(19.0)), 1.0], rps.VISIBLE), ([0.0, 0.0, -2.0], rps.OUT_OF_VIEW),
])
def test_pose_visibility(position, status):
    sensor = pose_sensor()
    assert sensor.sample(0.0, np.array(position), Rotation.identity()) == (status == rps.VISIBLE)
    assert sensor.status == status


def test_pose_dropouts_random_and_scheduled():
    sensor = pose_sensor(dropout_probability=0.2, dropouts=[[10.0, 20.0]], latency=0.3)
    taken, in_window = 0, 0
    n = 5000
    for k in range(n):
        t = k * 0.2
        if sensor.sample(t, np.array([0.0, 0.0, 2.0]), Rotation.identity()):
            taken += 1
            in_window += 10.0 <= t < 20.0
        for s in sensor.release(t):
            assert t == pytest.approx(s.stamp + 0.4, abs=1e-9)    # the next 5 Hz tick after 0.3 s of latency
    outside = n - 50                                               # 50 samples fall in [10, 20)
    assert in_window == 0
    assert abs(taken / outside - 0.8) < K * math.sqrt(0.2 * 0.8 / outside)


def test_pose_sensor_settings_are_checked():
    with pytest.raises(ConfigError, match="sensors.target_pose.max_range: must be above min_range"):
        pose_sensor(min_range=5.0, max_range=2.0)
    with pytest.raises(ConfigError, match="sensors.target_pose.position_noise.at_zero_range: is required"):
        pose_sensor(position_noise={"per_metre": 0.01})
    with pytest.raises(ConfigError, match=r"sensors.target_pose.dropouts\[0\]: must end after it starts"):
        pose_sensor(dropouts=[[3.0, 1.0]])
