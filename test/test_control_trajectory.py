"""JointTrajectory following (space_robot_control.joint_trajectory): validation, reordering, smoothness,
limits (rejection and time scaling). Pure Python, no model: limits are given directly.

Independent references: finite differences of the sampled reference (velocity and acceleration are
the derivatives of position; acceleration is continuous across knots), a dense resampling for the peak
velocity/acceleration after time scaling, and the closed-form rest-to-rest quintic peak
(15/8 * distance / T for velocity, 10/sqrt(3) * distance / T^2 for acceleration).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from space_robot_control.joint_trajectory import JointLimits, JointTrajectoryFollower, TrajectoryPoint
from space_robot_dynamics.errors import CommandError

NAMES = ["j0", "j1", "j2"]
LIMITS = JointLimits(lower=np.array([-2.0, -1.0, -3.0]), upper=np.array([2.0, 1.0, 3.0]),
                     velocity=np.array([1.0, 0.5, 2.0]), acceleration=np.array([2.0, 1.0, 4.0]))


def follower(policy="time_scale", **kw):
    f = JointTrajectoryFollower(NAMES, LIMITS, policy, **kw)
    f.hold(np.zeros(3))
    return f


def dense(f, t0, t1, n=20001):
    t = np.linspace(t0, t1, n)
    refs = [f.sample(x) for x in t]
    return (t, np.array([r.positions for r in refs]), np.array([r.velocities for r in refs]),
            np.array([r.accelerations for r in refs]))


def test_reorders_by_name_and_reaches_the_goal_at_rest():
    f = follower()
    goal = {"j0": 0.5, "j1": -0.3, "j2": 1.0}
    order = ["j2", "j0", "j1"]
    report = f.set_trajectory(order, [([goal[n] for n in order], None, None, 4.0)], now=1.0,
                              positions=np.zeros(3), velocities=np.zeros(3))
    assert report.time_scale == 1.0 and report.duration == pytest.approx(4.0)
    end = f.sample(5.0)
    assert np.allclose(end.positions, [0.5, -0.3, 1.0], atol=1e-12)
    assert np.allclose(end.velocities, 0.0) and np.allclose(end.accelerations, 0.0)
    assert f.sample(10.0).active is False and f.sample(3.0).active is True


def test_reference_is_consistent_and_c2_smooth():
    """Velocity and acceleration are the derivatives of position (central differences), and the
    acceleration is continuous across the knots even with given knot velocities and accelerations."""
    f = follower()
    points = [TrajectoryPoint([0.3, 0.2, -0.5], [0.2, 0.0, -0.3], None, 1.5),
              TrajectoryPoint([0.6, 0.1, -0.8], [0.1, -0.1, 0.0], [0.0, -0.2, 0.3], 3.0),
              TrajectoryPoint([0.2, -0.2, -0.2], None, None, 5.0)]
    f.set_trajectory(NAMES, points, now=0.0, positions=np.zeros(3), velocities=np.zeros(3))
    t, p, v, a = dense(f, 0.0, 5.0)
    dt = t[1] - t[0]
    assert np.abs((p[2:] - p[:-2]) / (2 * dt) - v[1:-1]).max() < 1e-6
    # The jerk jumps at the knots (C2, not C3): there the central difference errs by dt * jump / 4,
    # 2.5e-4 s * O(5 rad/s^3) / 4 ~ 3e-4; elsewhere by O(dt^2). An inconsistent rate would err by O(1).
    assert np.abs((v[2:] - v[:-2]) / (2 * dt) - a[1:-1]).max() < 2e-3
    for knot, point in ((1.5, points[0]), (3.0, points[1])):
        before, after = f.sample(knot - 1e-9), f.sample(knot + 1e-9)
        assert np.abs(after.accelerations - before.accelerations).max() < 1e-6
        assert np.allclose(f.sample(knot).positions, point.positions, atol=1e-12)
        assert np.allclose(f.sample(knot).velocities, point.velocities or [0, 0, 0], atol=1e-12)


def test_starts_from_the_current_state_and_replaces_a_running_trajectory_smoothly():
    f = follower()
    f.set_trajectory(NAMES, [([1.0, 0.5, 1.0], None, None, 4.0)], 0.0, np.zeros(3), np.zeros(3))
    mid = f.sample(2.0)
    f.set_trajectory(NAMES, [([-0.5, 0.0, 0.0], None, None, 4.0)], 2.0, mid.positions, mid.velocities)
    after = f.sample(2.0)
    assert np.allclose(after.positions, mid.positions) and np.allclose(after.velocities, mid.velocities)
    assert np.allclose(after.accelerations, mid.accelerations)       # the commanded acceleration does not jump


def test_moveit_style_first_point_at_zero_is_merged_into_the_start():
    f = follower()
    here = np.array([0.01, -0.02, 0.0])
    report = f.set_trajectory(NAMES, [(here, None, None, 0.0), ([0.5, 0.0, 0.0], None, None, 2.0)], 0.0, here,
                              np.zeros(3))
    assert report.duration == pytest.approx(2.0)
    with pytest.raises(CommandError) as err:
        f.set_trajectory(NAMES, [([0.5, 0.0, 0.0], None, None, 0.0), ([0.6, 0, 0], None, None, 1.0)], 0.0,
                         np.zeros(3), np.zeros(3))
    assert err.value.field == "points[0].positions" and "j0" in str(err.value)


def test_future_start_holds_until_then():
    f = follower()
    f.set_trajectory(NAMES, [([0.5, 0.0, 0.0], None, None, 2.0)], 0.0, np.zeros(3), np.zeros(3), start_time=1.0)
    assert np.allclose(f.sample(0.5).positions, 0.0) and not f.sample(0.5).active
    assert np.allclose(f.sample(3.0).positions, [0.5, 0.0, 0.0])


def test_a_past_stamp_keeps_its_time_base_and_skips_the_points_already_past():
    """joint_trajectory_controller's rule (trajectory.cpp): the points are reached at header.stamp +
    time_from_start whenever the goal arrives; here the ones already past are skipped and the reference runs
    from the current state to the next one (continuous: no jump to a point between two past ones)."""
    points = [([0.05, 0.0, 0.0], None, None, 1.0), ([0.1, 0.02, 0.0], None, None, 2.0),
              ([0.12, 0.02, 0.05], None, None, 3.0)]
    f = follower()
    report = f.set_trajectory(NAMES, points, 1.5, np.zeros(3), np.zeros(3), start_time=0.25)    # 1.25 s late
    assert report.late == pytest.approx(1.25) and report.skipped == 1 and report.time_scale == 1.0
    assert report.start_time == 1.5 and report.duration == pytest.approx(1.75)
    assert np.allclose(f.sample(1.5).positions, 0.0)                   # from the current state ...
    assert np.allclose(f.sample(2.25).positions, [0.1, 0.02, 0.0])     # ... to points[1] at its stamped time
    assert np.allclose(f.sample(3.25).positions, [0.12, 0.02, 0.05]) and not f.sample(3.3).active
    on_time = follower()
    assert on_time.set_trajectory(NAMES, points, 0.0, np.zeros(3), np.zeros(3), start_time=0.25).late == 0.0
    with pytest.raises(CommandError) as err:                          # ended before it arrived: rejected
        follower().set_trajectory(NAMES, points, 3.5, np.zeros(3), np.zeros(3), start_time=0.25)
    assert err.value.field == "header.stamp" and "ended 0.25 s before it arrived" in str(err.value)


def test_partial_goals_hold_the_missing_joints_when_allowed():
    with pytest.raises(CommandError) as err:
        follower().set_trajectory(["j1"], [([0.3], None, None, 2.0)], 0.0, np.zeros(3), np.zeros(3))
    assert err.value.field == "joint_names" and "j0" in str(err.value)
    f = follower(allow_partial_joints=True)
    start = np.array([0.2, 0.0, -0.1])
    f.set_trajectory(["j1"], [([0.3], None, None, 2.0)], 0.0, start, np.zeros(3))
    assert np.allclose(f.sample(5.0).positions, [0.2, 0.3, -0.1])


@pytest.mark.parametrize("joint_names, points, field", [
    (["j0", "j1", "bogus"], [([0, 0, 0], None, None, 1.0)], "joint_names[2]"),
    (["j0", "j1", "j1"], [([0, 0, 0], None, None, 1.0)], "joint_names[2]"),
    ([], [([0, 0, 0], None, None, 1.0)], "joint_names"),
    (NAMES, [], "points"),
    (NAMES, [([0, 0], None, None, 1.0)], "points[0].positions"),
    (NAMES, [([0, 0, float("nan")], None, None, 1.0)], "points[0].positions"),
    (NAMES, [([0, 0, 0], [0, float("inf"), 0], None, 1.0)], "points[0].velocities"),
    (NAMES, [([0, 0, 0], None, [0, 0], 1.0)], "points[0].accelerations"),
    (NAMES, [([0, 0, 0], 0.5, None, 1.0)], "points[0].velocities"),
    (NAMES, [("abc", None, None, 1.0)], "points[0].positions"),
    (NAMES, [([0, 0, 0], None, None, "1 s")], "points[0].time_from_start"),
    (["j0", ["j1"], "j2"], [([0, 0, 0], None, None, 1.0)], "joint_names[1]"),
    ("j0", [([0], None, None, 1.0)], "joint_names"),
    (NAMES, [([0, 0, 0], None, None, float("nan"))], "points[0].time_from_start"),
    (NAMES, [([0, 0, 0], None, None, -1.0)], "points[0].time_from_start"),
    (NAMES, [([0, 0, 0], None, None, 1.0), ([0.1, 0, 0], None, None, 1.0)], "points[1].time_from_start"),
    (NAMES, [([0, 0, 0], None, None, 2.0), ([0.1, 0, 0], None, None, 1.0)], "points[1].time_from_start"),
    (NAMES, [([0, 0, 0], None, None)], "points[0]"),
    (NAMES, [([0, 0, 0], None, None, 1.0), ([0, 1.5, 0], None, None, 9.0)], "points[1].positions"),
])
def test_bad_trajectories_are_rejected_naming_the_field(joint_names, points, field):
    f = follower()
    before = f.sample(0.0)
    with pytest.raises(CommandError) as err:
        f.set_trajectory(joint_names, points, 0.0, np.zeros(3), np.zeros(3))
    assert err.value.field == field
    assert np.array_equal(f.sample(0.0).positions, before.positions)   # the old reference is kept


def test_interpolation_overshoot_past_a_position_limit_is_rejected():
    """Knots inside the limits, but a large knot velocity makes the quintic overshoot j1's upper limit."""
    f = follower()
    with pytest.raises(CommandError) as err:
        f.set_trajectory(NAMES, [([0, 0.9, 0], [0, 0.5, 0], None, 4.0), ([0, 0.95, 0], None, None, 8.0)], 0.0,
                         np.zeros(3), np.zeros(3))
    assert err.value.field == "points[1]" and "j1" in str(err.value)


def test_too_fast_trajectory_is_time_scaled_to_the_limits():
    """1.5 rad on j0 in 1 s, rest to rest: quintic peak velocity 15/8 * 1.5 = 2.81 rad/s (> 1.0) and peak
    acceleration 10/sqrt(3) * 1.5 = 8.66 rad/s^2 (> 2.0). The velocity limit needs s = 2.81, the
    acceleration limit sqrt(8.66 / 2) = 2.08: the scaled duration must be 2.81 s (+ the 0.1% margin)."""
    f = follower()
    report = f.set_trajectory(NAMES, [([1.5, 0.0, 0.0], None, None, 1.0)], 0.0, np.zeros(3), np.zeros(3))
    assert report.time_scale == pytest.approx(15 / 8 * 1.5, rel=2e-3)
    assert "j0 velocity" in report.message and "time-scaled" in report.message
    _, _, v, a = dense(f, 0.0, report.duration)
    peak_v, peak_a = np.abs(v).max(axis=0), np.abs(a).max(axis=0)
    assert np.all(peak_v <= LIMITS.velocity) and np.all(peak_a <= LIMITS.acceleration)
    assert peak_v[0] > 0.995 * LIMITS.velocity[0]                     # not slowed more than needed
    assert np.allclose(f.sample(report.duration).positions, [1.5, 0.0, 0.0])


def test_acceleration_bound_trajectory_is_scaled_and_given_rates_are_rescaled():
    """Given knot velocities and accelerations are divided by s and s^2, so the path is unchanged."""
    f = follower()
    pts = [([0.0, 0.4, 0.0], [0.0, 0.2, 0.0], [0.0, 0.1, 0.0], 0.5), ([0.0, 0.6, 0.0], None, None, 1.0)]
    report = f.set_trajectory(NAMES, pts, 0.0, np.zeros(3), np.zeros(3))
    s = report.time_scale
    assert s > 1.0 and "j1 acceleration" in report.message
    knot = f.sample(0.5 * s)
    assert np.allclose(knot.positions, [0.0, 0.4, 0.0]) and np.allclose(knot.velocities, [0.0, 0.2 / s, 0.0])
    assert np.allclose(knot.accelerations, [0.0, 0.1 / s**2, 0.0])
    _, _, v, a = dense(f, 0.0, report.duration)
    assert np.all(np.abs(a).max(axis=0) <= LIMITS.acceleration)
    assert np.abs(a).max(axis=0)[1] > 0.99 * LIMITS.acceleration[1]


def test_reject_policy_refuses_and_says_why():
    f = follower("reject")
    with pytest.raises(CommandError) as err:
        f.set_trajectory(NAMES, [([1.5, 0.0, 0.0], None, None, 1.0)], 0.0, np.zeros(3), np.zeros(3))
    assert err.value.field == "points"
    assert "j0 velocity" in str(err.value) and "reject" in str(err.value)
    report = f.set_trajectory(NAMES, [([1.5, 0.0, 0.0], None, None, 3.0)], 0.0, np.zeros(3), np.zeros(3))
    assert report.time_scale == 1.0                                 # 15/8 * 1.5 / 3 = 0.94 rad/s: within limits


values = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3),
                   st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=4))


@settings(max_examples=100, deadline=None)
@given(names=st.lists(st.sampled_from(NAMES + ["x", ""]), max_size=4),
       points=st.lists(st.tuples(values, values, values, values), max_size=3))
def test_arbitrary_goals_are_accepted_or_rejected_with_command_error(names, points):
    """Whatever arrives, the follower either accepts it or raises CommandError, and its reference stays finite."""
    f = follower()
    try:
        f.set_trajectory(names, points, 0.0, np.zeros(3), np.zeros(3))
    except CommandError:
        pass
    for t in (0.0, 0.5, 100.0):
        ref = f.sample(t)
        assert np.all(np.isfinite(ref.positions)) and np.all(np.isfinite(ref.accelerations))
