"""The sensors node under ROS 2 (`ros2 run space_robot sensors_node`) beside the dynamics node, with a model that
declares a gyro, a star tracker and a target pose sensor: its measured topics arrive in their frames, stamped on
the simulated clock, and it ends cleanly on SIGINT and SIGTERM with its last report. A scenario whose model declares
no sensor is refused with exit status 2."""
from __future__ import annotations

import signal
import time

from ros2_available import require_ros2

require_ros2()

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import PoseWithCovarianceStamped  # noqa: E402
from ros2_processes import RosCommand, tracebacks, wait_until  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402

START_TIMEOUT = 60.0
SENSORS = """
sensors:
  seed: 4
  gyro: {rate: 100.0, angle_random_walk: 1.0e-4}
  star_tracker: {rate: 10.0, cross_boresight: 5.0e-5, about_boresight: 4.0e-4, latency: 0.1}
  target_pose:
    rate: 5.0
    latency: 0.2
    position_noise: {at_zero_range: 0.002, per_metre: 0.004}
    attitude_noise: {at_zero_range: 0.002, per_metre: 0.003}
    field_of_view: 2.0
    max_range: 20.0
"""


def sensed_scenario(share_dir, tmp_path):
    model = tmp_path / "sensed_model.yaml"
    model.write_text((share_dir / "config" / "models" / "servicer_target.yaml").read_text() + SENSORS)
    scenario = tmp_path / "sensed.yaml"
    scenario.write_text(f"name: sensed\nmodel: {model}\nduration: 60.0\n")
    return scenario


def ros_run(executable: str, scenario, log, env, *parameters: str) -> RosCommand:
    args = ["ros2", "run", "space_robot", executable, "--ros-args", "-p", f"scenario:={scenario}"]
    for parameter in parameters:
        args += ["-p", parameter]
    return RosCommand(args, log, env)


def stamp(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def test_the_sensors_node_reports_beside_the_dynamics_node_and_ends_cleanly(probe, share_dir, ros_env, tmp_path):
    scenario = sensed_scenario(share_dir, tmp_path)
    probe.listen("/imu/data", Imu).listen("/star_tracker/attitude", Imu).listen("/clock", Clock)
    probe.listen("/target/pose_measurement", PoseWithCovarianceStamped).listen("/diagnostics", DiagnosticArray)
    sensors = {way: ros_run("sensors_node", scenario, tmp_path / f"s{i}.log", ros_env, "use_sim_time:=true")
               for i, way in enumerate(("SIGINT", "SIGTERM"))}
    dynamics = ros_run("dynamics_node", scenario, tmp_path / "d.log", ros_env)
    try:
        for command in (*sensors.values(), dynamics):
            wait_until(lambda c=command: " running" in c.output() or not c.alive(), START_TIMEOUT, "a node to start")
            assert command.alive(), command.output()[-3000:]
        poses = probe.wait_for(lambda: probe.messages("/target/pose_measurement"), 30, "a target pose measurement")
        imu = probe.messages("/imu/data")
        tracker = probe.wait_for(lambda: probe.messages("/star_tracker/attitude"), 10, "a star tracker solution")
        assert {m.header.frame_id for m in imu} == {"gyro_link"}
        assert {m.header.frame_id for m in tracker} == {"base_link"}
        assert {m.header.frame_id for m in poses} == {"pose_sensor_link"}
        assert all(m.orientation_covariance[0] == -1.0 for m in imu)
        assert all(m.angular_velocity_covariance[0] == -1.0 for m in tracker)
        # stamped when taken, on the simulated clock: the node's clock follows the 1 kHz joint_states' stamps (its
        # time source), so each stamp is an instant of the physics' 1 ms grid (two sensors nodes run here, one for
        # each way of stopping, each sampling from when it started)
        stamps = sorted({stamp(m) for m in tracker})
        assert all(abs(t * 1000 - round(t * 1000)) < 1e-6 for t in stamps), stamps
        start = time.monotonic()
        pids = {way: wait_until(lambda c=c: c.children()[:1], 10, "the node process")[0]
                for way, c in sensors.items()}
        sensors["SIGINT"].signal_group(signal.SIGINT)
        sensors["SIGTERM"].signal_process(pids["SIGTERM"], signal.SIGTERM)
        for way, command in sensors.items():
            assert command.wait(30) == 0, (way, command.output()[-3000:])
            assert not tracebacks(command.output()), (way, command.output()[-3000:])
        for way in sensors:
            final = probe.wait_for(lambda way=way: [s for s in probe.statuses("sensors: node", start)
                                                    if s.message == f"stopped on {way}"], 5, f"the last report ({way})")
            assert final
    finally:
        for topic in ("/imu/data", "/star_tracker/attitude", "/clock", "/target/pose_measurement"):
            probe.forget(topic)
        for command in (*sensors.values(), dynamics):
            command.signal_group(signal.SIGINT)
            command.wait(30)
            command.kill()


def test_a_sensors_node_for_a_model_without_sensors_exits_2(share_dir, ros_env, tmp_path):
    command = ros_run("sensors_node", share_dir / "config" / "scenarios" / "servicer_pregrasp.yaml",
                      tmp_path / "s.log", ros_env)
    try:
        assert command.wait(60) == 2
        assert "declares no sensor" in command.output() and not tracebacks(command.output())
    finally:
        command.kill()
