"""envisat_capture under ROS 2 (docs/orbit.md): `ros2 launch space_robot simulation.launch.py
scenario:=.../envisat_capture.yaml rviz:=false` is a graph in orbit: orbit/reference gives the LVLH frame (`world`) in
`eci` at 770 km and 7.46 km/s, the controller's station keeping commands the thrusters and the bus leaves its hold
point along R-bar towards the target (the approach starts at 2 s), the holonomy monitor reports no ERROR (gravity
gradient and thrust taken out of its momentum check) and the visualization draws the orbit markers."""
from __future__ import annotations

import math

from ros2_available import require_ros2

require_ros2()

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

SIMULATED = 8.0          # s of simulation watched (the approach's quintic has moved the bus ~0.2 m by then)
TIMEOUT = 90.0           # s of wall time for it (in orbit the standalone runtime runs at ~0.5x real time)
RADIUS = 6378137.0 + 770000.0
LISTENED = {"/orbit/reference": (Odometry, 10), "/base_thrusters/command": (WrenchStamped, 10),
            "/base/odom_throttle": (Odometry, 10), "/diagnostics": (DiagnosticArray, 10),
            "/visualization/markers": (MarkerArray, 10)}


def seconds(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def test_envisat_capture_runs_in_orbit_under_ros2_launch(probe, listen_for_test, simulation_launch):
    listen_for_test(LISTENED)
    with simulation_launch("envisat_capture") as launch:
        launch.wait_for_simulation(probe)
        launch.wait_while_alive(lambda: [m for m in probe.messages("/base/odom_throttle") if seconds(m) > SIMULATED],
                                TIMEOUT, f"{SIMULATED} s of simulation")
        reference = probe.messages("/orbit/reference")[-1]
        assert (reference.header.frame_id, reference.child_frame_id) == ("eci", "world")
        p, v = reference.pose.pose.position, reference.twist.twist.linear
        # J2 makes the osculating radius of a circular orbit swing by ~J2 R_e^2 / a ~ 6 km
        assert abs(math.hypot(p.x, p.y, p.z) - RADIUS) < 2.0e4
        assert abs(math.hypot(v.x, v.y, v.z) - math.sqrt(3.986004418e14 / RADIUS)) < 20.0
        assert v.y > 7000.0                          # along-track, LVLH axes
        thrusts = probe.messages("/base_thrusters/command")
        assert thrusts and max(abs(m.wrench.force.x) for m in thrusts) > 0.1
        bus = probe.messages("/base/odom_throttle")[-1].pose.pose.position
        assert bus.x > -9.95 and abs(bus.y) < 0.05       # moving up R-bar from -10 m
        # (before the first state arrives the monitor says it waits for it, at WARN: not a finding.) Never ERROR; under
        # ROS 2 on a loaded machine the applied thrust and the state the monitor pairs can be a cycle apart, which it
        # has reported as a WARN of ~4e-3 of its capacity (the standalone runtime: OK in every report, test_orbit_*)
        reports = [s for s in probe.statuses("holonomy_monitor: holonomy") if not s.message.startswith("waiting for")]
        assert reports and all(s.level != DiagnosticStatus.ERROR for s in reports), \
            [s.message for s in reports if s.level == DiagnosticStatus.ERROR][:3]
        namespaces = {m.ns for array in probe.messages("/visualization/markers") for m in array.markers}
        assert "orbit" in namespaces
