"""Standalone runtime: the node cores in one process, lockstep simulated time, in-process topics, rosbag2
(MCAP) recording, summary and plots. No ROS installation needed; the messages are the ROS 2 Humble
definitions from the rosbags typestore. The public names below are importable from the package itself, each
imported on first use (space_robot_dynamics.lazy_exports).
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    "SimulationRun": ".simulation_run", "RunResult": ".simulation_run",
    "RunTrace": ".run_trace", "read_bag": ".run_trace",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
