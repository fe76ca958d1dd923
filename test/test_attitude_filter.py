"""The attitude MEKF (space_robot_estimation/attitude_filter.py) fed by the sensor models of space_robot_sensing.

Consistency (Bar-Shalom et al. 2001, sec. 5.4.2): over M independent runs the average NEES of the 6-dimensional
error (attitude, bias) is chi-square(6 M) / M for a consistent filter; with M = 20 its 95 % interval is
[4.58, 7.61]. Checked at 10 instants; a consistent filter has each inside with probability 0.95, so at least 8 of
10 inside fails with probability 1.2 % (binomial) at an arbitrary seed; the seeds here are fixed. The truth: a bus
turning at a rate that changes at every gyro sample and is held in between (what the discrete gyro model assumes),
a constant gyro bias drawn from the filter's initial bias distribution, plus the model's rate random walk.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_estimation.attitude_filter import AttitudeFilter, read_attitude_filter
from space_robot_estimation.consistency import chi_square_interval, nees
from space_robot_sensing.gyro import Gyro, read_gyro
from space_robot_sensing.random_streams import sensor_stream
from space_robot_sensing.star_tracker import StarTracker, read_star_tracker

GYRO_RATE, TRACKER_EVERY = 50.0, 10                   # Hz; a star tracker solution every 10th gyro sample (5 Hz)
ARW, RRW = 1e-4, 1e-6                                 # rad/s^0.5, rad/s^1.5
CROSS, ABOUT = 1e-4, 5e-4                             # rad
BIAS_SIGMA = 1e-3                                     # rad/s: the turn-on bias spread, and the filter's initial sigma
RUNS, DURATION = 20, 30.0                             # runs, s
CHECK_TIMES = np.arange(3.0, 30.0, 3.0) - 0.02        # 9 instants...
CHECK_TIMES = np.append(CHECK_TIMES, 29.98)           # ...and the end: 10


def filter_config(**fields):
    data = {"angle_random_walk": ARW, "rate_random_walk": RRW, "initial_attitude_sigma": ABOUT,
            "initial_bias_sigma": BIAS_SIGMA, **fields}
    return read_attitude_filter(ConfigReader(data, "test", "estimators.attitude"))


def true_rate(t):
    return np.array([0.02 * np.sin(0.2 * t), 0.01, -0.015 * np.cos(0.1 * t)])        # rad/s, body


def one_run(seed, latency=0.0):
    """The errors (attitude rotation vector, bias) and covariances at CHECK_TIMES."""
    tilted = Rotation.from_euler("y", 90, degrees=True).as_quat()                        # boresight along bus x
    gyro = Gyro(read_gyro(ConfigReader({"rate": GYRO_RATE, "angle_random_walk": ARW, "rate_random_walk": RRW,
                                        "bias": list(np.random.default_rng(seed).normal(0.0, BIAS_SIGMA, 3))},
                                       "test", "gyro")), sensor_stream(seed, "gyro"))
    tracker = StarTracker(read_star_tracker(ConfigReader(
        {"rate": GYRO_RATE / TRACKER_EVERY, "cross_boresight": CROSS, "about_boresight": ABOUT, "latency": latency,
         "orientation": list(tilted)}, "test", "star_tracker")), sensor_stream(seed, "star_tracker"))
    kf = AttitudeFilter(filter_config())
    truth = Rotation.from_euler("zyx", [0.3, 0.2, -0.1])
    dt = 1.0 / GYRO_RATE
    checks = iter(CHECK_TIMES)
    check = next(checks)
    out = []
    for k in range(int(round(DURATION * GYRO_RATE))):
        t = k * dt
        if k > 0:
            omega = true_rate(t)
            truth = truth * Rotation.from_rotvec(omega * dt)           # held over (t - dt, t]
            kf.propagate(t, gyro.sample(omega))
        if k % TRACKER_EVERY == 0:
            tracker.sample(t, truth.as_quat())
        for solution in tracker.release(t):
            kf.update(solution.stamp, solution.value.xyzw, solution.value.covariance)
        if check is not None and abs(t - check) < 1e-9:
            e = kf.estimate()
            error = np.concatenate([(Rotation.from_quat(e.xyzw).inv() * truth).as_rotvec(),
                                    gyro.bias + gyro.drift - e.bias])
            out.append((error, e.covariance))
            check = next(checks, None)
    return out


@pytest.mark.slow                # 2 x 20 runs of 30 s at 50 Hz: ~8 s
@pytest.mark.parametrize("latency", [0.0, 0.2])
def test_the_attitude_filter_is_consistent_over_runs(latency):
    runs = [one_run(seed, latency) for seed in range(RUNS)]
    low, high = chi_square_interval(6, RUNS)
    average = [np.mean([nees(*run[i]) for run in runs]) for i in range(len(CHECK_TIMES))]
    inside = sum(low <= a <= high for a in average)
    assert inside >= 8, (low, high, np.round(average, 2))


def test_a_late_solution_gives_the_estimate_an_on_time_one_would():
    """Rolling back and propagating again is exact: a filter that gets every solution 0.14 s late has, once the
    solution is in, the estimate of a filter that got it on time, to round-off (the first solution included: the
    late filter starts from it and propagates through the gyro samples it kept)."""
    gyro_samples = [np.array([0.01, -0.02, 0.005]) + 1e-4 * np.sin([k, 2 * k, 3 * k]) for k in range(200)]
    solutions = {k: Rotation.from_rotvec([0.001 * k, 0.0, 0.0005]).as_quat() for k in range(0, 200, 10)}
    r = np.diag([1e-8, 1e-8, 2.5e-7])
    on_time, late = AttitudeFilter(filter_config()), AttitudeFilter(filter_config())
    delay = 7                              # samples (0.14 s at 50 Hz): before the next solution, every 10 samples
    for k in range(200):
        t = k / GYRO_RATE
        on_time.propagate(t, gyro_samples[k])
        late.propagate(t, gyro_samples[k])
        if k in solutions:
            on_time.update(t, solutions[k], r)
        if k - delay in solutions and k >= delay:
            late.update((k - delay) / GYRO_RATE, solutions[k - delay], r)
        if k >= delay and (k - delay) in solutions:
            a, b = on_time.estimate(), late.estimate()
            assert np.allclose(a.xyzw, b.xyzw, rtol=0, atol=1e-14) or np.allclose(a.xyzw, -b.xyzw, atol=1e-14)
            np.testing.assert_allclose(b.bias, a.bias, rtol=0, atol=1e-16)
            np.testing.assert_allclose(b.covariance, a.covariance, rtol=1e-12, atol=0)


def test_a_solution_older_than_the_history_is_refused_and_counted():
    kf = AttitudeFilter(filter_config(history=0.5))
    kf.update(0.0, [0.0, 0.0, 0.0, 1.0], np.eye(3) * 1e-8)
    for k in range(1, 60):
        kf.propagate(k / GYRO_RATE, np.zeros(3))
    assert not kf.update(0.1, [0.0, 0.0, 0.0, 1.0], np.eye(3) * 1e-8)
    assert kf.too_old == 1 and kf.updates == 0
