"""The target filter (space_robot_estimation/target_filter.py) fed by the relative pose sensor model.

Truth, independent of the filter: the torque-free rigid body integrated by scipy's solve_ivp (DOP853, rtol 1e-11)
in quaternion form, with its centre of mass drifting at constant velocity. The sensor sits at the bus origin
(bus at rest, world-aligned) looking along +z at a target ~3 m away.

Consistency (Bar-Shalom et al. 2001, sec. 5.4.2): the 12-dimensional NEES averaged over M = 20 runs is
chi-square(240) / 20 for a consistent filter; 95 % interval from scipy. Checked at 10 instants from 10 s (after
the start-up transient: the initial rate and velocity spreads are wider than the truths drawn); a consistent filter
has each inside with probability 0.95, so fewer than 8 of 10 happens with probability 1.2 %.
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_estimation.consistency import chi_square_interval, nees
from space_robot_estimation.target_filter import TargetFilter, pose_measurement_in_world, read_target_filter
from space_robot_sensing.random_streams import sensor_stream
from space_robot_sensing.relative_pose_sensor import RelativePoseSensor, read_relative_pose

INERTIA_URDF = [250.0, 10.0, -5.0, 300.0, 8.0, 350.0]            # kg m^2: ixx, ixy, ixz, iyy, iyz, izz
COM = np.array([0.05, -0.02, 0.1])                               # m, target frame
FILTER_RATE, POSE_EVERY = 25.0, 5                                # Hz; a pose sample every 5th step (5 Hz)
RUNS, DURATION = 20, 30.0
CHECK_TIMES = np.arange(10.0, 30.0, 2.0)
POSE = {"rate": FILTER_RATE / POSE_EVERY, "latency": 0.2, "position_noise": {"at_zero_range": 0.005,
        "per_metre": 0.002}, "attitude_noise": {"at_zero_range": 0.01, "per_metre": 0.002},
        "field_of_view": math.radians(60.0), "max_range": 20.0}


def filter_config(**fields):
    data = {"inertia": INERTIA_URDF, "com": list(COM), "acceleration_noise": 1e-5,
            "angular_acceleration_noise": 1e-5, "initial_velocity_sigma": 0.05, "initial_rate_sigma": 0.1, **fields}
    return read_target_filter(ConfigReader(data, "test", "estimators.target"))


def inertia_matrix():
    i = INERTIA_URDF
    return np.array([[i[0], i[1], i[2]], [i[1], i[3], i[4]], [i[2], i[4], i[5]]])


def torque_free_truth(q0_xyzw, omega0, times):
    """R_world_target and body rate at `times`: quaternion kinematics and Euler's equations, solved by scipy."""
    j = inertia_matrix()
    j_inv = np.linalg.inv(j)

    def rhs(_t, y):
        x, yq, z, w = y[:4]
        om = y[4:]
        dq = 0.5 * np.array([w * om[0] + yq * om[2] - z * om[1], w * om[1] + z * om[0] - x * om[2],
                             w * om[2] + x * om[1] - yq * om[0], -x * om[0] - yq * om[1] - z * om[2]])
        return np.concatenate([dq, j_inv @ (-np.cross(om, j @ om))])

    sol = solve_ivp(rhs, (0.0, times[-1]), np.concatenate([q0_xyzw, omega0]), method="DOP853", t_eval=times,
                    rtol=1e-11, atol=1e-13)
    return [Rotation.from_quat(sol.y[:4, k]) for k in range(len(times))], sol.y[4:].T


def one_run(seed, rate_deg=None):
    rng = np.random.default_rng(1000 + seed)
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    omega0 = direction * math.radians(rate_deg if rate_deg is not None else rng.uniform(1.0, 4.0))
    velocity = rng.normal(0.0, 0.005, 3)                          # m/s
    r0 = np.array([0.3, -0.2, 3.0])                                # CoM, m
    times = np.arange(int(round(DURATION * FILTER_RATE)) + 1) / FILTER_RATE
    rotations, rates = torque_free_truth(Rotation.random(random_state=seed).as_quat(), omega0, times)
    sensor = RelativePoseSensor(read_relative_pose(ConfigReader(POSE, "test", "target_pose")),
                                sensor_stream(seed, "target_pose"))
    kf = TargetFilter(filter_config())
    out = {}
    for k, t in enumerate(times):
        com = r0 + velocity * t
        frame = com + rotations[k].apply(-COM)
        kf.predict(t)
        if k % POSE_EVERY == 0:
            sensor.sample(t, frame, rotations[k])
        for m in sensor.release(t):
            p, xyzw, r_ws = pose_measurement_in_world(m.value.position, m.value.xyzw, np.eye(3), np.zeros(3),
                                                      np.eye(3))
            kf.update(m.stamp, p, xyzw, m.value.covariance[0, 0], m.value.covariance[3, 3], r_ws)
        if np.any(np.abs(CHECK_TIMES - t) < 1e-9):
            e = kf.estimate()
            error = np.concatenate([com - e.com_position, velocity - e.velocity,
                                    (Rotation.from_quat(e.xyzw).inv() * rotations[k]).as_rotvec(), rates[k] - e.rate])
            out[round(t, 6)] = (error, e.covariance)
    return out


@pytest.mark.slow                # 20 runs of 30 s at 25 Hz: ~5 s
def test_the_target_filter_is_consistent_over_runs():
    runs = [one_run(seed) for seed in range(RUNS)]
    low, high = chi_square_interval(12, RUNS)
    average = [np.mean([nees(*run[round(t, 6)]) for run in runs]) for t in CHECK_TIMES]
    inside = sum(low <= a <= high for a in average)
    assert inside >= 8, (low, high, np.round(average, 2))


@pytest.mark.parametrize("rate_deg", [1.0, 4.0])
def test_the_target_filter_converges_on_a_tumbling_target(rate_deg):
    """After 30 s (150 measurements, 0.2 s late, centimetre noise) the rate error is within 3 sigma of the filter's
    own covariance and below 0.05 deg/s, the attitude within 3 sigma and 0.5 deg."""
    error, covariance = one_run(3, rate_deg)[round(CHECK_TIMES[-1], 6)]
    sigma = np.sqrt(np.diag(covariance))
    assert np.all(np.abs(error) < 3.0 * sigma + 1e-12), (error, sigma)
    assert np.linalg.norm(error[9:12]) < math.radians(0.05)
    assert np.linalg.norm(error[6:9]) < math.radians(0.5)


def test_an_inertia_that_is_no_body_is_refused():
    with pytest.raises(ConfigError, match="estimators.target.inertia: is not the inertia of a body"):
        filter_config(inertia=[1.0, 0.0, 0.0, 1.0, 0.0, 3.0])
