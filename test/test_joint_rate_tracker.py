"""The alpha-beta tracker of joint rates (space_robot_estimation/joint_rate_tracker.py).

Independent check of Kalata's steady-state covariance: a joint driven by white acceleration held over each period
(the model the gains assume), measured by space_robot_sensing's encoder model (noise and quantisation), tracked
over 200000 samples; the empirical variances of the angle and rate errors against the formulas. Bound: 4 times
the relative standard deviation of a variance estimate from n correlated samples, taken conservatively as
sqrt(2 / (n / 50 - 1)) (the errors decorrelate within ~1 / alpha ~ 20 samples here; 50 is more than that).
"""
import math

import numpy as np
import pytest

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_estimation.joint_rate_tracker import AlphaBetaGains, JointRateTracker
from space_robot_sensing.joint_encoders import QuantisedChannels, read_encoders
from space_robot_sensing.random_streams import sensor_stream

T = 1e-3                                    # s: 1 kHz encoders
SIGMA_W = 2.0                               # rad/s^2
N = 200_000


@pytest.mark.parametrize("counts", [None, 524288])          # noise only; noise and a 2^19-count encoder
def test_the_tracker_errors_have_kalatas_steady_state_covariance(counts):
    config = {"rate": 1.0 / T, "noise": 2e-5}
    if counts:
        config["counts_per_revolution"] = counts
    encoder_config = read_encoders(ConfigReader(config, "test", "joint_encoders"))
    encoders = QuantisedChannels(encoder_config, sensor_stream(0, "joint_encoders"))
    gains = AlphaBetaGains.from_noise(T, SIGMA_W, math.sqrt(encoder_config.variance))
    tracker = JointRateTracker(gains, 1)
    rng = np.random.default_rng(5)
    x, v = 0.3, 0.0
    errors = []
    for k in range(N):
        a = SIGMA_W * rng.standard_normal()
        x, v = x + T * v + 0.5 * T * T * a, v + T * a
        tracker.correct(encoders.sample(np.array([x])))
        if k > 1000:                                         # past the start-up transient
            errors.append((x - tracker.angles[0], v - tracker.rates[0]))
    errors = np.array(errors)
    expected = gains.steady_covariance()
    bound = 4.0 * math.sqrt(2.0 / (len(errors) / 50 - 1))
    assert abs(np.var(errors[:, 0]) / expected[0, 0] - 1.0) < bound
    assert abs(np.var(errors[:, 1]) / expected[1, 1] - 1.0) < bound
    assert abs(np.mean(errors[:, 0] * errors[:, 1]) / expected[0, 1] - 1.0) < 2 * bound


def test_the_rate_of_a_steady_motion_is_found_from_quantised_counts():
    """A joint turning at 0.1 rad/s read by a 2^19-count encoder without noise: a finite difference jumps between
    0.0 and 0.012 rad/s steps; the tracker's rate is within 1 % after 2 s."""
    encoder = QuantisedChannels(read_encoders(ConfigReader({"rate": 1000.0, "counts_per_revolution": 524288},
                                                           "test", "e")), sensor_stream(0, "e"))
    resolution = 2 * math.pi / 524288
    gains = AlphaBetaGains.from_noise(T, 0.5, resolution / math.sqrt(12.0))
    tracker = JointRateTracker(gains, 1)
    for k in range(2000):
        tracker.correct(encoder.sample(np.array([0.1 * k * T])))
    assert tracker.rates[0] == pytest.approx(0.1, rel=0.01)


def test_bad_tracker_settings_are_refused():
    with pytest.raises(ValueError, match="must be > 0"):
        AlphaBetaGains.from_noise(T, 0.0, 1e-5)
