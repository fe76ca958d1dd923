"""capture_sensed under ROS 2 (docs/sensing.md): `ros2 launch space_robot simulation.launch.py
scenario:=.../capture_sensed.yaml rviz:=false`, the controller on the estimators' estimates, paced on the wall
clock: does the grasp close at the planned instant as it does in the standalone runtime (0.6 mm from the fixture)?"""
from __future__ import annotations

from ros2_available import require_ros2

require_ros2()

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from ros2_probe import latched_qos, values  # noqa: E402
from std_msgs.msg import String  # noqa: E402

GRASP_TIMEOUT = 60.0
LISTENED = {"/grasp/events": (String, latched_qos()), "/diagnostics": (DiagnosticArray, 10)}


def test_capture_on_estimates_under_ros2_launch(probe, listen_for_test, simulation_launch):
    listen_for_test(LISTENED)
    with simulation_launch("capture_sensed") as launch:
        launch.wait_for_simulation(probe)
        events = launch.wait_while_alive(lambda: probe.messages("/grasp/events"), GRASP_TIMEOUT, "the grasp event")
        missed = [values(s).get("missed_periods") for s in probe.statuses("controller: state")]
        assert "grasp:" in events[0].data and "grasp_failed" not in events[0].data, (events[0].data, missed[-3:])
