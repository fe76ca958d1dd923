"""The capture scenario under ROS 2 (docs/contact.md sec. 10-11): `ros2 launch space_robot simulation.launch.py
scenario:=.../capture.yaml rviz:=false`, the scenario player sending the planned approach (a joint trajectory to the
standoff, then a Cartesian goal on the fixture) and the gripper's closing, checked with rclpy: the grasp closes
(grasp/events, grasp/state), grasp/wrench is in the hand's frame, the controller and the monitor switch to the joined
system by themselves; a gripper command from a user reaches the controller; the launch ends cleanly on Ctrl-C.

Simulated time is paced on the wall clock: the grasp closes at ~11.55 s of simulated time, ~12 s after the start.
"""
from __future__ import annotations

import time

from ros2_available import require_ros2

require_ros2()

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from ros2_probe import latched_qos, values  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

from space_robot_nodes.grasp_state_message import GRASP_STATE_FIELDS  # noqa: E402

GRASP_TIMEOUT = 60.0         # s of wall time after the start for the grasp at ~11.55 s of simulated time
LISTENED = {"/grasp/events": (String, latched_qos()), "/grasp/state": (Float64MultiArray, 10),
            "/grasp/wrench": (WrenchStamped, 10), "/diagnostics": (DiagnosticArray, 10)}


def grasp_state(msg) -> dict:
    assert msg.layout.dim[0].label.split(",") == list(GRASP_STATE_FIELDS)
    return dict(zip(GRASP_STATE_FIELDS, msg.data))


def test_capture_under_ros2_launch(probe, listen_for_test, simulation_launch):
    listen_for_test(LISTENED)
    with simulation_launch("capture") as launch:
        launch.wait_for_simulation(probe)
        events = launch.wait_while_alive(lambda: probe.messages("/grasp/events"), GRASP_TIMEOUT, "the grasp event")
        assert "grasp:" in events[0].data and "grasp_failed" not in events[0].data, events[0].data

        state = probe.wait_for(lambda: [m for m in probe.messages("/grasp/state") if grasp_state(m)["holding"] == 1.0],
                               10.0, "grasp/state holding")[-1]
        figures = grasp_state(state)
        assert 11.5 < figures["grasp_time_s"] < 12.0        # the gripper goal at 11.55 s, delivered within ~1 ms
        # the hand went in under the controller's Cartesian mode (the goal on the fixture, sent at 7.55 s)
        assert any(s.message.startswith("tracking") for s in probe.statuses("controller: cartesian"))
        assert figures["momentum_change_across_grasp"] < 1e-12        # an internal impulse: round-off only
        assert figures["drift_position_m"] < 1e-9 and figures["drift_angle_rad"] < 1e-9
        time.sleep(1.0)
        wrench = probe.messages("/grasp/wrench")[-1]
        assert wrench.header.frame_id == "right_hand"
        force = wrench.wrench.force
        assert 0.0 < (force.x ** 2 + force.y ** 2 + force.z ** 2) ** 0.5 < 25.0     # held, below the limit's margin

        capture = probe.wait_for(lambda: [s for s in probe.statuses("controller: capture")
                                          if "holding the target" in s.message], 10.0, "the controller's switch")
        assert values(capture[-1])["holding"] == "true"
        monitor = probe.wait_for(lambda: [s for s in probe.statuses("holonomy_monitor: holonomy")
                                          if values(s).get("attached") == "true"], 10.0, "the monitor's switch")
        assert "grasp closed" in values(monitor[-1])["last_contact_event"]
        assert not [s for s in probe.statuses("dynamics: contact") if s.level == DiagnosticStatus.ERROR]
    launch.assert_ended_cleanly()
