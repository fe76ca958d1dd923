"""The gyro model (space_robot_sensing/gyro.py) against its configured statistics and its deterministic terms.

Allan deviation: computed here from the output samples with the overlapping estimator (IEEE Std 952-1997, annex C:
the rate samples integrated to angle, then the second difference over clusters of m samples), independently of the
model's code, and compared with sqrt(sigma_v^2 / tau + sigma_u^2 tau / 3). Bound per tau: three times the
1-sigma relative uncertainty of the non-overlapping estimate with K = N / m clusters, 1 / sqrt(2 (K - 1)) (IEEE 952
annex C, eq. C.2's approximation); the overlapping estimate used here is at least as good, so the bound holds with
more than 99.7 % probability at any seed.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_sensing.gyro import Gyro, read_gyro
from space_robot_sensing.random_streams import sensor_stream
from space_robot_sensing.sensor_suite import read_sensor_suite

RATE = 100.0                  # Hz
ARW = 1.0e-4                  # rad/s^0.5: sigma_v (0.34 deg/h^0.5, a MEMS gyro)
RRW = 1.0e-4                  # rad/s^1.5: sigma_u, large enough that it dominates from ~2 s (tau_c = sqrt(3) ARW/RRW)
SAMPLES = 200_000             # 2000 s at 100 Hz: 100 clusters at tau = 20 s


def gyro_config(**fields):
    data = {"rate": RATE, "angle_random_walk": ARW, "rate_random_walk": RRW, **fields}
    return read_gyro(ConfigReader(data, "test", "sensors.gyro"))


def overlapping_allan_deviation(rates: np.ndarray, dt: float, m: int) -> float:
    """IEEE 952 annex C: theta = integral of the rate; sigma^2(tau) = <(theta_{k+2m} - 2 theta_{k+m} + theta_k)^2>
    / (2 tau^2), tau = m dt, over every k."""
    theta = np.concatenate([[0.0], np.cumsum(rates) * dt])
    second = theta[2 * m:] - 2.0 * theta[m:-m] + theta[:-2 * m]
    tau = m * dt
    return float(np.sqrt(np.mean(second ** 2) / (2.0 * tau ** 2)))


@pytest.fixture(scope="module")
def still_gyro_output():
    gyro = Gyro(gyro_config(), sensor_stream(7, "gyro"))
    return np.array([gyro.sample(np.zeros(3)) for _ in range(SAMPLES)])


@pytest.mark.parametrize("tau", [0.05, 2.0, 20.0])     # angle random walk, both, rate random walk
def test_allan_deviation_matches_the_configured_random_walks(still_gyro_output, tau):
    dt = 1.0 / RATE
    m = int(round(tau / dt))
    expected = np.sqrt(ARW ** 2 / tau + RRW ** 2 * tau / 3.0)
    bound = 3.0 / np.sqrt(2.0 * (SAMPLES // m - 1))
    for axis in range(3):
        measured = overlapping_allan_deviation(still_gyro_output[:, axis], dt, m)
        assert abs(measured / expected - 1.0) < bound, (tau, axis, measured, expected, bound)


def test_without_noise_the_output_is_the_gain_times_the_rate_in_the_sensor_frame_plus_bias():
    """Independent: the sensor axes from the mounting quaternion through scipy, A and b written out here."""
    xyzw = Rotation.from_euler("zyx", [0.3, -0.2, 0.1]).as_quat()
    scale, bias = [1e-3, -2e-3, 5e-4], [1e-3, 2e-3, -3e-3]
    mis = [[0.0, 1e-3, -2e-3], [3e-4, 0.0, 1e-3], [-1e-3, 2e-4, 0.0]]
    config = gyro_config(angle_random_walk=0.0, rate_random_walk=0.0, orientation=list(xyzw),
                         scale_factor=scale, bias=bias, misalignment=mis)
    gyro = Gyro(config, sensor_stream(0, "gyro"))
    omega_link = np.array([0.02, -0.05, 0.01])
    omega_sensor = Rotation.from_quat(xyzw).inv().apply(omega_link)
    expected = (np.eye(3) + np.diag(scale) + np.array(mis)) @ omega_sensor + np.array(bias)
    np.testing.assert_allclose(gyro.sample(omega_link), expected, rtol=0, atol=1e-15)


def test_saturation_and_quantisation():
    config = gyro_config(saturation=0.1, quantisation=1e-3, angle_random_walk=1e-3)
    gyro = Gyro(config, sensor_stream(0, "gyro"))
    out = np.array([gyro.sample([0.5, -0.5, 0.0123]) for _ in range(200)])
    np.testing.assert_array_equal(out[:, 0], 0.1)
    np.testing.assert_array_equal(out[:, 1], -0.1)
    counts = out[:, 2] / 1e-3
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    assert len(np.unique(out[:, 2])) > 3                   # the noise spans several counts


def test_a_bias_jump_moves_the_mean_by_the_jump():
    gyro = Gyro(gyro_config(rate_random_walk=0.0), sensor_stream(1, "gyro"))
    before = np.mean([gyro.sample(np.zeros(3)) for _ in range(20000)], axis=0)
    gyro.add_bias([0.01, 0.0, -0.02])
    after = np.mean([gyro.sample(np.zeros(3)) for _ in range(20000)], axis=0)
    sigma_mean = ARW / np.sqrt(1.0 / RATE) / np.sqrt(20000)          # std of a 20000-sample mean
    np.testing.assert_allclose(after - before, [0.01, 0.0, -0.02], atol=5 * np.sqrt(2) * sigma_mean)


def suite(extra=None, seed=5):
    data = {"seed": seed, "gyro": {"rate": RATE, "angle_random_walk": ARW, "rate_random_walk": RRW}}
    data.update(extra or {})
    return read_sensor_suite(ConfigReader(data, "test", "sensors")).build()


def run(gyro, n=500):
    return np.array([gyro.sample([0.01, 0.02, 0.03]) for _ in range(n)])


def test_the_same_seed_gives_the_same_numbers_and_another_sensor_does_not_change_them():
    star = {"star_tracker": {"rate": 10.0, "cross_boresight": 1e-5, "about_boresight": 8e-5}}
    first, again, with_star = run(suite()["gyro"]), run(suite()["gyro"]), run(suite(star)["gyro"])
    assert first.tobytes() == again.tobytes() == with_star.tobytes()
    assert first.tobytes() != run(suite(seed=6)["gyro"]).tobytes()


@pytest.mark.parametrize("fields, words", [
    ({"misalignment": [[1e-3, 0, 0], [0, 0, 0], [0, 0, 0]]}, "sensors.gyro.misalignment: its diagonal must be zero"),
    ({"misalignment": [[0, 0], [0, 0], [0, 0]]}, "sensors.gyro.misalignment: must be a 3x3 matrix"),
    ({"scale_factor": [100.0, 0, 0]}, "sensors.gyro.scale_factor[0]: must be <= 0.5"),
    ({"rate": 0.0}, "sensors.gyro.rate: must be > 0"),
    ({"angle_random_walk": float("nan")}, "sensors.gyro.angle_random_walk: must be finite"),
    ({"orientation": [0, 0, 0, 2]}, "sensors.gyro.orientation: must be a unit quaternion"),
    ({"saturation": -1.0}, "sensors.gyro.saturation: must be > 0"),
    ({"arw": 1.0}, "sensors.gyro.arw: unknown key"),
])
def test_bad_gyro_settings_are_refused_naming_the_field(fields, words):
    with pytest.raises(ConfigError, match=words.replace("[", r"\[").replace("]", r"\]")):
        gyro_config(**fields)
