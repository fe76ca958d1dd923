"""CPU per node of the paced simulation graph under real ROS 2 (test/ros2): `ros2 launch space_robot
simulation.launch.py rviz:=false`, physics and control at 1 kHz paced on the wall clock, measured from /proc.

After a warm-up it reads every launched process's user + system time (all threads) over a window and prints
each node's share of one core, our nodes' total (robot_state_publisher aside) against the goal of 0.8 core,
and what the graph did meanwhile (from /diagnostics: simulated seconds per wall second, control updates per
simulated second), so that a cut in CPU cannot hide a graph that fell behind or stopped controlling.

Needs a sourced ROS 2 with this package built (`make bench-ros2` does both). Exit status 1 when our nodes take
more than the goal or the graph did not keep pace. The machine's other load adds to every figure: run it on
an otherwise idle machine and compare runs made in the same conditions.

    python bench/bench_ros2_cpu.py [--window S] [--warmup S] [--scenario PATH]
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 0.8                   # cores for our nodes together (robot_state_publisher aside)
PACE_TOLERANCE = 0.05        # simulated s per wall s within 5 % of 1.0
TICK = os.sysconf("SC_CLK_TCK")
OURS = ("dynamics", "controller", "holonomy_monitor", "scenario_player")
DISPLAY = ("visualization",)  # what the scene in RViz costs (goal: under 5 % of a core)
DISPLAY_GOAL = 0.05


def children(root: int) -> list[int]:
    """Every descendant process of `root`."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def node_name(pid: int) -> str | None:
    try:
        args = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    for arg in args:
        if arg.startswith(b"__node:="):
            return arg.split(b"=", 1)[1].decode()
    return None


def cpu_seconds(pid: int) -> float:
    fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK       # utime + stime (fields 14, 15 of stat)


class GraphProbe:
    """/diagnostics of the graph: the dynamics node's simulated time and the controller's update count."""

    def __init__(self):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray

        rclpy.init()
        self.rclpy = rclpy
        self.node = rclpy.create_node("bench_ros2_cpu_probe")
        self.sim_time = None
        self.updates = None
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if status.name == "dynamics: simulation":
                self.sim_time = float(values["time_s"])
            elif status.name == "controller: state":
                self.updates = int(values["updates"])

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.rclpy.spin_once(self.node, timeout_sec=min(0.1, max(0.0, end - time.monotonic())))

    def sample(self) -> tuple[float, float | None, int | None]:
        """(wall time, simulated time, controller updates) as of the latest reports."""
        self.spin_for(0.3)
        return time.monotonic(), self.sim_time, self.updates

    def close(self) -> None:
        self.node.destroy_node()
        self.rclpy.try_shutdown()


def stop(launch: subprocess.Popen) -> None:
    """SIGINT to the launch's process group, as a terminal's Ctrl-C; escalate if it does not end."""
    for sig, wait in ((signal.SIGINT, 20), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(launch.pid, sig)
        except ProcessLookupError:
            return
        try:
            launch.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=30.0, help="wall seconds measured")
    parser.add_argument("--warmup", type=float, default=10.0, help="wall seconds after the graph runs")
    parser.add_argument("--scenario", help="scenario YAML (default: the launch file's)")
    args = parser.parse_args(argv)

    command = ["ros2", "launch", "space_robot", "simulation.launch.py", "rviz:=false"]
    if args.scenario:
        command.append(f"scenario:={args.scenario}")
    log = tempfile.NamedTemporaryFile("w+", prefix="bench_ros2_cpu_", suffix=".log", delete=False)
    launch = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    probe = GraphProbe()
    try:
        deadline = time.monotonic() + 60.0
        while probe.sim_time is None or probe.updates is None:
            if time.monotonic() > deadline or launch.poll() is not None:
                log.seek(0)
                print(log.read()[-3000:], file=sys.stderr)
                print("bench_ros2_cpu: the graph did not start (no dynamics/controller diagnostics)", file=sys.stderr)
                return 1
            probe.spin_for(0.5)
        probe.spin_for(args.warmup)
        pids = {pid: node_name(pid) for pid in children(launch.pid)}
        pids = {pid: name for pid, name in pids.items() if name}
        before = {pid: cpu_seconds(pid) for pid in pids}
        wall0, sim0, updates0 = probe.sample()
        probe.spin_for(args.window)
        wall1, sim1, updates1 = probe.sample()
        after = {pid: cpu_seconds(pid) for pid in pids}
    finally:
        probe.close()
        stop(launch)

    wall = wall1 - wall0
    shares = {}
    for pid, name in pids.items():
        shares[name] = shares.get(name, 0.0) + (after[pid] - before[pid]) / wall
    pace = (sim1 - sim0) / wall
    control_rate = (updates1 - updates0) / max(sim1 - sim0, 1e-9)
    ours = sum(share for name, share in shares.items() if name in OURS)
    print(f"ROS 2 graph, paced at real time: CPU over {wall:.1f} s of wall time after a {args.warmup:.0f} s warm-up "
          f"(share of one core, user + system, all threads)")
    for name in sorted(shares, key=lambda n: (n not in OURS, n in DISPLAY, n)):
        print(f"  {name:36s} {100 * shares[name]:6.1f} %")
    print(f"  {'our nodes together':36s} {100 * ours:6.1f} %   (goal <= {100 * GOAL:.0f} %)")
    display = sum(share for name, share in shares.items() if name in DISPLAY)
    print(f"  {'display publishers (visualization)':36s} {100 * display:6.1f} %   (goal <= {100 * DISPLAY_GOAL:.0f} %)")
    print(f"  simulated s per wall s {pace:.3f}; controller updates per simulated s {control_rate:.0f}")
    ok = ours <= GOAL and display <= DISPLAY_GOAL and abs(pace - 1.0) <= PACE_TOLERANCE
    if not ok:
        print("bench_ros2_cpu: " + ("over the CPU goal" if ours > GOAL or display > DISPLAY_GOAL
                                    else "the graph did not keep pace"), file=sys.stderr)
    os.unlink(log.name)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
