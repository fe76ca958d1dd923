"""The estimators node under ROS 2 (`ros2 run space_robot estimators_node`) on the shipped capture_sensed scenario,
beside the dynamics and sensors nodes: estimate/joint_states, estimate/base/odom and estimate/target/odom arrive in
their frames with covariances, the estimated bus attitude agrees with the dynamics node's truth at the same
instants, its diagnostics carry NEES (the truth is at hand), and it ends cleanly on SIGINT and SIGTERM with its last
report. A scenario whose model declares no estimators is refused with exit status 2. Under
`ros2 launch space_robot simulation.launch.py` the controller reads the estimates (state_source:
{controller: estimates}): it subscribes the estimate topics, not the truth's, reports its state OK and commands the
arm; the launch ends cleanly.

Two tests guard the rates under ROS 2: the sensors node once ran its 1 kHz sensors at /clock's 100 Hz (its
timers followed /clock), so the estimates came at 100 Hz and the controller's 1 kHz loop closed on them diverged
within ~2 s of the arm's reach; the sensors node now takes the 1 kHz joint_states' stamps as its clock.

This module's probe runs on an rclpy context of its own (the `probe` fixture below overrides conftest's):
test_launch_simulation.py needs the default context untouched (conftest.ros_context), whatever order the modules
run in.

Tolerances:
- ATTITUDE_TOLERANCE, 1e-2 rad between the estimated and the true bus attitude at matching stamps: the star tracker
  alone is good to ~2e-4 rad about its boresight (2.4e-5 across), the gyro between two solutions adds ~1e-5 rad, so
  a consistent filter stays two orders of magnitude inside (3e-4 rad seen on a still bus, 1e-4 rad on a bus the
  arm turns once the sensors follow the 1 kHz state); what 1e-2 rad catches is a wrong frame, a quaternion
  convention, a stale or never-updated estimate, or an estimate stamped at another instant than its content.
- STAMP_MATCH, 0.5 ms: the estimates follow the encoders' stamps, the truth is read on base/odom_throttle (the same
  state as base/odom, 50 Hz: the 1 kHz topic would cost the dynamics node and the probe a receive per millisecond),
  so a matching estimate is one of the same physics step, never a neighbour (1 ms apart).
- ONE_KHZ_SPACING, 1.5 ms: the median step between consecutive stamps of a 1 kHz topic (1 ms; a loaded machine
  may skip some, which moves the median little), against the 10 ms of one that follows the 100 Hz /clock.
- TRACKING_TOLERANCE, 0.2 rad of the controller's largest joint tracking error over the reach: a stable loop on the
  estimates keeps it to ~0.05 rad even on a loaded 2-core machine that skips a third of the control periods (seen
  with the sensors node on the 1 kHz state); the loop at 100 Hz saturates every arm joint and reaches ~7 rad by
  1.8 s and hundreds of rad by 2.4 s.
"""
from __future__ import annotations

import bisect
import math
import signal
import time
from functools import partial
from unittest import mock

from ros2_available import require_ros2

require_ros2()

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import ros2_probe  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from ros2_probe import Probe, values  # noqa: E402
from ros2_processes import LAUNCH_START_TIMEOUT, RosCommand, tracebacks, wait_until  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

# s of wall time for a `ros2 run` node to log "running": imports, model building and DDS discovery, on a 2-core
# machine loaded by other work
START_TIMEOUT = 90.0
# s of wall time from the nodes' start to the first estimate: every estimator needs its first measurement (the
# star tracker's 0.1 s latency, the pose sensor's 10 Hz with its 0.1 s latency, the 1 kHz encoders), a fraction of
# a second of simulated time, plus discovery between four processes
ESTIMATE_TIMEOUT = 60.0
ATTITUDE_TOLERANCE = 1e-2      # rad (module docstring)
STAMP_MATCH = 5e-4             # s (module docstring)
MIN_MATCHES = 50               # instants compared at least: 1 s of the truth's 50 Hz
ONE_KHZ_SPACING = 1.5e-3       # s (module docstring)
TRACKING_TOLERANCE = 0.2       # rad (module docstring)
ESTIMATE_TOPICS = ("estimate/joint_states", "estimate/base/odom", "estimate/target/odom")

@pytest.fixture(scope="module")
def probe():
    """ros2_probe.Probe on an rclpy context of this module's own, shut down after its last test: conftest's probe
    would init the default context, and test_launch_simulation.py (run after this module: the names sort so) calls
    rclpy.init() on it itself ("Context.init() must only be called once", and its try_shutdown would then end the
    session's context). conftest's listen_for_test takes this probe too."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    with mock.patch.object(ros2_probe.rclpy, "create_node", partial(rclpy.create_node, context=context)), \
            mock.patch.object(ros2_probe, "SingleThreadedExecutor", partial(SingleThreadedExecutor, context=context)):
        node = Probe("space_robot_estimators_test_probe")
    yield node
    node.close()
    rclpy.try_shutdown(context=context)


def capture_sensed(share_dir):
    return share_dir / "config" / "scenarios" / "capture_sensed.yaml"


def ros_run(executable: str, scenario, log, env, *parameters: str, remaps: tuple = ()) -> RosCommand:
    args = ["ros2", "run", "space_robot", executable, "--ros-args", "-p", f"scenario:={scenario}"]
    for parameter in parameters:
        args += ["-p", parameter]
    for remap in remaps:
        args += ["-r", remap]
    return RosCommand(args, log, env)


def stamp(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def xyzw(msg) -> np.ndarray:
    o = msg.pose.pose.orientation
    return np.array([o.x, o.y, o.z, o.w])


def angle_between(a: np.ndarray, b: np.ndarray) -> float:
    """rad of the rotation between two unit quaternions (x, y, z, w); q and -q are one attitude."""
    return 2.0 * math.acos(min(1.0, abs(float(np.dot(a, b)) / (np.linalg.norm(a) * np.linalg.norm(b)))))


def attitude_errors(estimates: list, truths: list) -> list[tuple[float, float]]:
    """(stamp, rad) between each truth message and the estimate of the same instant (within STAMP_MATCH)."""
    by_stamp = sorted((stamp(m), m) for m in estimates)
    stamps = [t for t, _ in by_stamp]
    errors = []
    for truth in truths:
        t = stamp(truth)
        i = bisect.bisect_left(stamps, t)
        near = [j for j in (i - 1, i) if 0 <= j < len(stamps)]
        if not near:
            continue
        j = min(near, key=lambda j: abs(stamps[j] - t))
        if abs(stamps[j] - t) <= STAMP_MATCH:
            errors.append((t, angle_between(xyzw(by_stamp[j][1]), xyzw(truth))))
    return errors


def median_spacing(messages: list) -> float:
    """s: the median step between the distinct stamps of `messages` (nan for fewer than two)."""
    stamps = np.unique([stamp(m) for m in messages])
    return float(np.median(np.diff(stamps))) if len(stamps) > 1 else math.nan


def covariance_diagonals(msg) -> tuple[np.ndarray, np.ndarray]:
    pose = np.asarray(msg.pose.covariance, float).reshape(6, 6)
    twist = np.asarray(msg.twist.covariance, float).reshape(6, 6)
    return np.diag(pose), np.diag(twist)


def assert_covariance(msg) -> None:
    """A covariance that looks positive definite: every variance positive and finite, the matrix symmetric to within
    1e-9 of its largest variance (the round-off of R C R^T, the blocks turned between the link's and the world's
    axes: ~1e-22 against ~1e-4 seen) and Cholesky-factorable (pose and twist)."""
    for name, flat in (("pose", msg.pose.covariance), ("twist", msg.twist.covariance)):
        matrix = np.asarray(flat, float).reshape(6, 6)
        assert np.isfinite(matrix).all() and (np.diag(matrix) > 0.0).all(), (name, np.diag(matrix))
        assert np.abs(matrix - matrix.T).max() <= 1e-9 * np.diag(matrix).max(), (name, matrix)
        np.linalg.cholesky(matrix)           # raises LinAlgError unless positive definite


def start_sensed_graph(scenario, tmp_path, env, estimators: dict) -> tuple[dict, list]:
    """The estimators nodes ({name: remappings}) and a sensors node on simulated time, then, once they run, the
    dynamics node (the simulation then starts with every estimator listening). Returns ({name: estimators
    command}, every command); the caller stops them all (stop_all) whatever happens."""
    started = {name: ros_run("estimators_node", scenario, tmp_path / f"{name}.log", env, "use_sim_time:=true",
                             remaps=remaps) for name, remaps in estimators.items()}
    commands = [*started.values(), ros_run("sensors_node", scenario, tmp_path / "sensors.log", env,
                                           "use_sim_time:=true")]
    try:
        for command in commands:
            wait_until(lambda c=command: " running" in c.output() or not c.alive(), START_TIMEOUT, "a node to start")
            assert command.alive(), command.output()[-3000:]
        commands.append(ros_run("dynamics_node", scenario, tmp_path / "dynamics.log", env))
        wait_until(lambda: " running" in commands[-1].output() or not commands[-1].alive(), START_TIMEOUT,
                   "the dynamics node to start")
        assert commands[-1].alive(), commands[-1].output()[-3000:]
    except BaseException:
        stop_all(commands)
        raise
    return started, commands


def stop_all(commands: list) -> None:
    for command in commands:
        command.signal_group(signal.SIGINT)
        command.wait(30)
        command.kill()


def test_the_estimators_node_estimates_beside_the_sensors_and_ends_cleanly(probe, share_dir, ros_env, tmp_path):
    probe.listen("/estimate/base/odom", Odometry).listen("/estimate/target/odom", Odometry)
    probe.listen("/estimate/joint_states", JointState).listen("/base/odom_throttle", Odometry)
    probe.listen("/diagnostics", DiagnosticArray)
    # One estimators node for each way of stopping. The SIGTERM one publishes its estimates where nobody listens
    # (a message nobody takes is not built): the probe hears one node's estimates, not two.
    estimators, commands = start_sensed_graph(
        capture_sensed(share_dir), tmp_path, ros_env,
        {"SIGINT": (), "SIGTERM": tuple(f"{t}:=unheard/{t}" for t in ESTIMATE_TOPICS)})
    try:
        probe.wait_for(lambda: all(probe.messages(f"/{t}") for t in ESTIMATE_TOPICS), ESTIMATE_TIMEOUT,
                       "every estimate topic")
        assert probe.node.count_publishers("/estimate/base/odom") == 1      # the SIGTERM node's remapped away
        joints = probe.messages("/estimate/joint_states")[-1]
        # the arm's seven joints and the three wheels (config/models/servicer_target.yaml)
        assert list(joints.name) == [*(f"right_j{i}" for i in range(7)), "rw_x_joint", "rw_y_joint", "rw_z_joint"], \
            joints.name
        assert len(joints.position) == len(joints.velocity) == len(joints.name)
        assert all(math.isfinite(x) for x in (*joints.position, *joints.velocity))
        probe.forget("/estimate/joint_states")     # no need to keep hearing it
        target = probe.messages("/estimate/target/odom")[-1]
        assert (target.header.frame_id, target.child_frame_id) == ("world", "target/base_link")
        assert_covariance(target)
        probe.forget("/estimate/target/odom")

        # MIN_MATCHES of the truth's instants with the bus's estimate of the same instant
        since = time.monotonic()
        errors = probe.wait_for(
            lambda: (lambda e: e if len(e) >= MIN_MATCHES else None)(attitude_errors(
                probe.messages("/estimate/base/odom", since), probe.messages("/base/odom_throttle", since))),
            30, f"{MIN_MATCHES} estimates at the truth's instants")
        bus = probe.messages("/estimate/base/odom", since)
        probe.forget("/estimate/base/odom")
        assert {(m.header.frame_id, m.child_frame_id) for m in bus} == {("world", "base_link")}
        assert_covariance(bus[-1])
        worst = max(e for _t, e in errors)
        print(f"attitude estimate vs truth at {len(errors)} instants ({errors[0][0]:.3f}..{errors[-1][0]:.3f} s): "
              f"max {worst:.3e} rad, mean {np.mean([e for _t, e in errors]):.3e} rad; estimates every "
              f"{median_spacing(bus) * 1e3:.1f} ms (median); last covariance diagonals pose "
              f"{covariance_diagonals(bus[-1])[0]}, twist {covariance_diagonals(bus[-1])[1]}")
        assert worst < ATTITUDE_TOLERANCE, errors

        # NEES in the diagnostics: the node reads the truth (base/odom, target/odom)
        for name, dof in (("estimators: attitude", 3), ("estimators: target", 12)):
            status = probe.wait_for(lambda name=name: [s for s in probe.statuses(name, since) if "nees" in values(s)],
                                    20, f"a {name} status with NEES")[-1]
            figures = values(status)
            print(f"{name}: {status.message}; {figures}")
            assert math.isfinite(float(figures["nees"])) and float(figures["nees"]) >= 0.0, figures
            assert int(figures["nees_dof"]) == dof, figures

        start = time.monotonic()
        pids = {way: wait_until(lambda c=c: c.children()[:1], 10, "the node process")[0]
                for way, c in estimators.items()}
        estimators["SIGINT"].signal_group(signal.SIGINT)
        estimators["SIGTERM"].signal_process(pids["SIGTERM"], signal.SIGTERM)
        for way, command in estimators.items():
            assert command.wait(30) == 0, (way, command.output()[-3000:])
            assert not tracebacks(command.output()), (way, command.output()[-3000:])
        for way in estimators:
            final = probe.wait_for(lambda way=way: [s for s in probe.statuses("estimators: node", start)
                                                    if s.message == f"stopped on {way}"], 5, f"the last report ({way})")
            assert final
    finally:
        for topic in ("/estimate/base/odom", "/estimate/target/odom", "/estimate/joint_states", "/base/odom_throttle"):
            probe.forget(topic)
        stop_all(commands)


def test_the_estimates_follow_the_1khz_encoders(probe, share_dir, ros_env, tmp_path):
    """The estimators' updates follow the encoders' stamps (estimators_node.py, estimators_core.py), which the
    model file samples at 1 kHz (capture_sensed: joint_encoders.rate, estimators.rate): both topics step by 1 ms."""
    probe.listen("/encoders/joint_states", JointState).listen("/estimate/joint_states", JointState)
    _estimators, commands = start_sensed_graph(capture_sensed(share_dir), tmp_path, ros_env, {"estimators": ()})
    try:
        # 0.2 s of simulated time of the 1 kHz topics (0.2 s of 100 Hz ones: 20 messages)
        for topic in ("/encoders/joint_states", "/estimate/joint_states"):
            probe.wait_for(lambda topic=topic: len(probe.messages(topic)) >= 200
                           or (probe.messages(topic) and stamp(probe.messages(topic)[-1])
                               - stamp(probe.messages(topic)[0]) > 0.2), ESTIMATE_TIMEOUT, f"0.2 s of {topic}")
        encoders, estimates = probe.messages("/encoders/joint_states"), probe.messages("/estimate/joint_states")
        print(f"median stamp steps: encoders {median_spacing(encoders) * 1e3:.1f} ms, estimates "
              f"{median_spacing(estimates) * 1e3:.1f} ms")
        assert median_spacing(encoders) <= ONE_KHZ_SPACING
        assert median_spacing(estimates) <= ONE_KHZ_SPACING
    finally:
        for topic in ("/encoders/joint_states", "/estimate/joint_states"):
            probe.forget(topic)
        stop_all(commands)


def test_an_estimators_node_for_a_model_without_estimators_exits_2(share_dir, ros_env, tmp_path):
    command = ros_run("estimators_node", share_dir / "config" / "scenarios" / "servicer_pregrasp.yaml",
                      tmp_path / "e.log", ros_env)
    try:
        assert command.wait(60) == 2
        output = command.output()
        reasons = [line for line in output.splitlines() if line.startswith("estimators: ")]
        assert len(reasons) == 1 and "declares no estimators" in reasons[0], output
        assert not tracebacks(output), output
    finally:
        command.kill()


# s of wall time from the simulation's start to the arm's first commands on estimates: the estimators' first
# estimate (a fraction of a second of simulated time, paced on the wall clock) and the controller's 10 Hz report
CONTROL_TIMEOUT = 60.0
# s of simulated time: the capture goal is sent at 0.5 s, the arm reaches out from then on and its reaction turns
# the bus; the loop's stability is judged up to STABLE_UNTIL, the attitude estimate from COMPARED_FROM
COMPARED_FROM = 1.0
STABLE_UNTIL = 5.0


def test_the_controller_reads_the_estimates_under_ros2_launch(probe, listen_for_test, simulation_launch):
    listen_for_test({"/diagnostics": (DiagnosticArray, 10)})
    with simulation_launch("capture_sensed") as launch:
        launch.wait_for_simulation(probe)
        # the controller reads the estimates (state_source: {controller: estimates}), not the truth
        for topic in ("/estimate/joint_states", "/estimate/base/odom", "/estimate/target/odom"):
            readers = launch.wait_while_alive(
                lambda topic=topic: [i.node_name for i in probe.node.get_subscriptions_info_by_topic(topic)
                                     if i.node_name == "controller"], 30, f"the controller on {topic}")
            assert readers == ["controller"]
        for topic in ("/joint_states", "/base/odom", "/target/odom"):
            assert "controller" not in [i.node_name for i in probe.node.get_subscriptions_info_by_topic(topic)]

        controlling = launch.wait_while_alive(
            lambda: [s for s in probe.statuses("controller: state")
                     if s.level == DiagnosticStatus.OK and s.message == "controlling"], CONTROL_TIMEOUT,
            "the controller's state OK")
        assert values(controlling[-1])["ready"] == "true", values(controlling[-1])
        listen_for_test({"/arm_effort_controller/commands": (Float64MultiArray, 10)})
        arm = launch.wait_while_alive(lambda: probe.messages("/arm_effort_controller/commands")[:20], 10,
                                      "the arm's commands")
        probe.forget("/arm_effort_controller/commands")
        assert all(len(m.data) == 7 and all(math.isfinite(x) for x in m.data) for m in arm)
        assert not [s for s in probe.statuses("controller: state") if s.level == DiagnosticStatus.ERROR]
    launch.assert_ended_cleanly()


def tracking_errors(probe) -> list[tuple[float, float]]:
    """(stamp, rad) of the controller's largest joint tracking error in its reports (controller: goals)."""
    return [(t, float(values(s)["tracking_error_max_rad"])) for t, s in probe.stamped_statuses("controller: goals")
            if "tracking_error_max_rad" in values(s)]


def test_the_loop_on_the_estimates_stays_stable_under_ros2_launch(probe, listen_for_test, simulation_launch):
    """The first STABLE_UNTIL s of capture_sensed under launch: the controller tracks the planned reach on the
    estimates, and the bus it turns is estimated within ATTITUDE_TOLERANCE of the truth."""
    listen_for_test({"/diagnostics": (DiagnosticArray, 10), "/base/odom_throttle": (Odometry, 10),
                     "/estimate/base/odom": (Odometry, 10)})
    with simulation_launch("capture_sensed") as launch:
        launch.wait_for_simulation(probe)
        # until STABLE_UNTIL s of simulated time, or a tracking error out of bounds (a diverging loop: no need to
        # wait for its end, nor for a simulation that may stall on its state)
        launch.wait_while_alive(lambda: [m for m in probe.messages("/base/odom_throttle") if stamp(m) >= STABLE_UNTIL]
                                or [e for _t, e in tracking_errors(probe) if not e < TRACKING_TOLERANCE],
                                LAUNCH_START_TIMEOUT + STABLE_UNTIL, f"{STABLE_UNTIL} s of simulated time")
        estimates = probe.messages("/estimate/base/odom")
        probe.forget("/estimate/base/odom")          # (forgets what it heard too)
    launch.assert_ended_cleanly()
    tracking = [(t, e) for t, e in tracking_errors(probe) if t <= STABLE_UNTIL]
    truths = [m for m in probe.messages("/base/odom_throttle") if COMPARED_FROM <= stamp(m) <= STABLE_UNTIL]
    assert truths and tracking, "no truth or no tracking report within the compared time"
    errors = attitude_errors(estimates, truths)
    turned = max(angle_between(xyzw(m), np.array([0.0, 0.0, 0.0, 1.0])) for m in truths)
    print(f"up to {stamp(truths[-1]):.2f} s: largest tracking error {max(e for _t, e in tracking):.3g} rad; the bus "
          f"turned by up to {turned:.3e} rad; attitude estimate vs truth at {len(errors)} instants: max "
          f"{max((e for _t, e in errors), default=math.nan):.3e} rad; estimates every "
          f"{median_spacing(estimates) * 1e3:.1f} ms (median)")
    assert max(e for _t, e in tracking) < TRACKING_TOLERANCE, tracking
    assert len(errors) >= MIN_MATCHES and max(e for _t, e in errors) < ATTITUDE_TOLERANCE, errors
