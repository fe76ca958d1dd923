"""ros2 CLI commands (launch, run, bag) started by the real ROS 2 tests, each in its own process group as a
terminal starts a command, stopped the way a user stops them, and their output and exit statuses read back.

A test that starts a launch waits for what it needs while the launch runs (RosCommand.wait_while_alive), stops it
with a terminal's Ctrl-C at the end of a `with` block (RosCommand.ctrl_c), then reads how it ended
(RosLaunch.assert_ended_cleanly). The fixtures ros2_launch and simulation_launch (conftest.py) start them."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# s of wall time a launch has to start: xacro expansion, model building, a planned approach (the capture scenario)
# and DDS discovery, on a 2-core machine loaded by other work
LAUNCH_START_TIMEOUT = 90.0
# s of wall time a command has to end after a Ctrl-C: every node of a launch sends its last report and exits, on a
# loaded machine
CTRL_C_TIMEOUT = 60.0

# what launch prints when a process ends: "[INFO] [dynamics_node-4]: process has finished cleanly [pid 1]" or
# "[ERROR] [dynamics_node-4]: process has died [pid 1, exit code -2, cmd '...']"
_ENDED = re.compile(r"\[(?P<name>[A-Za-z0-9_]+)-\d+\]: process (?P<how>has finished cleanly|has died) "
                    r"\[pid \d+(?:, exit code (?P<code>-?\d+))?")


class RosCommand:
    """One ros2 CLI command in its own session (process group), output in `log`.

    As a context manager it gets a terminal's Ctrl-C when the block ends, also when the block fails half-way, so a
    failed check does not leave its nodes talking to the next test's graph."""

    def __init__(self, args: list[str], log: Path, env: dict | None = None):
        self.args = list(args)
        self.log = Path(log)
        self._file = open(self.log, "w")       # noqa: SIM115 - closed in wait()
        self.process = subprocess.Popen(self.args, stdout=self._file, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        self.returncode: int | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def __enter__(self) -> RosCommand:
        return self

    def __exit__(self, *exc_info) -> None:
        self.ctrl_c()

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_while_alive(self, condition, timeout: float, what: str):
        """condition() until it is truthy (returned), while the command runs. A command that ends first (a node that
        died at start, an error in a launch file) fails at once with the end of its output, not after the whole
        timeout with nothing to read."""
        value = wait_until(lambda: condition() or not self.alive(), timeout, what)
        assert self.alive(), self.output()[-3000:]
        return value

    def output(self) -> str:
        if not self._file.closed:
            self._file.flush()
        return self.log.read_text(errors="replace")

    def signal_group(self, signum: int = signal.SIGINT) -> None:
        """As a terminal's Ctrl-C (SIGINT) reaches every process of the foreground group."""
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def signal_process(self, pid: int, signum: int) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    def ctrl_c(self, timeout: float = CTRL_C_TIMEOUT) -> int:
        """A terminal's Ctrl-C, then the exit status (wait(timeout)).

        SIGINT to the whole group, as a terminal sends it: that is how a user stops `ros2 launch` or `ros2 run`, so
        every node of a launch gets it from the "terminal" and again from launch, the case each node's shutdown
        guards against (../shared/ros2/README.md, pitfalls). Not SIGTERM: Humble's launch ends on SIGTERM without
        stopping its processes. There is no escalation to SIGTERM either: a node that outlives its Ctrl-C is a
        failure the test must report, so after `timeout` wait() kills the group and raises with the output and the
        stacks."""
        self.signal_group(signal.SIGINT)
        return self.wait(timeout)

    def wait(self, timeout: float = 30.0) -> int:
        """The exit status; after `timeout` the group is killed and AssertionError raised."""
        try:
            self.returncode = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            stacks = self.stacks()
            self.kill()
            raise AssertionError(f"{' '.join(self.args)} did not end within {timeout} s:\n"
                                 f"{self.output()[-3000:]}\n{stacks}") from None
        finally:
            self._file.close()
        return self.returncode

    def stacks(self) -> str:
        """Where each process of the group is (py-spy's Python and native stacks, when py-spy is installed: the
        development environment has it), for the report of a command that did not end."""
        try:
            pids = subprocess.run(["pgrep", "-g", str(self.pid)], capture_output=True, text=True).stdout.split()
        except OSError as exc:
            return f"(no pgrep: {exc})"
        spy = shutil.which("py-spy") or next((str(p) for p in [REPO / ".venv" / "bin" / "py-spy"] if p.exists()), None)
        report = []
        for pid in pids:
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = Path(f"/proc/{pid}/wchan").read_text()
            except OSError:
                continue
            report.append(f"--- pid {pid} ({state}): {command}")
            if spy:
                dump = subprocess.run([spy, "dump", "--native", "--pid", pid], capture_output=True, text=True,
                                      timeout=30)
                report.append(dump.stdout + dump.stderr)
        return "\n".join(report)

    def kill(self) -> None:
        """Last resort (a test that failed half-way): SIGKILL to the whole group, reaped."""
        if self.alive():
            self.signal_group(signal.SIGKILL)
            self.process.wait(10)
        self._file.close()

    def children(self) -> list[int]:
        """Process ids of every descendant (the nodes of a launch, the node of a `ros2 run`)."""
        parents: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                parents.setdefault(ppid, []).append(int(entry.name))
        found, todo = [], [self.process.pid]
        while todo:
            for child in parents.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
        return found


class RosLaunch(RosCommand):
    """`ros2 launch space_robot <launch file> <arguments>`, and launch's report of how its processes ended."""

    def __init__(self, launch_file: str, arguments, log: Path, env: dict | None = None):
        super().__init__(["ros2", "launch", "space_robot", launch_file, *arguments], log, env)

    def wait_for_nodes_running(self, count: int, what: str) -> None:
        """Until `count` of this package's nodes run (the node host logs "<node> running" once its core runs)."""
        self.wait_while_alive(lambda: self.output().count(" running") >= count, LAUNCH_START_TIMEOUT, what)

    def wait_for_simulation(self, probe) -> None:
        """Until the dynamics node's first "dynamics: simulation" status: the graph is built and steps (the probe must
        listen to /diagnostics)."""
        self.wait_while_alive(lambda: probe.statuses("dynamics: simulation"), LAUNCH_START_TIMEOUT,
                              "the simulation to start")

    def assert_ended_cleanly(self) -> None:
        """After ctrl_c(): launch ended with status 0, its output has no traceback (a node interrupted again while it
        cleaned up dies with a KeyboardInterrupt), and every process it started ended with status 0."""
        output = self.output()
        assert self.returncode == 0 and not tracebacks(output), output[-3000:]
        assert all(status == 0 for status in launch_exits(output).values()), launch_exits(output)


def launch_exits(output: str) -> dict[str, int]:
    """Launch's report of how each process ended: executable name -> exit code (0 for 'finished cleanly')."""
    ended = {}
    for match in _ENDED.finditer(output):
        ended[match["name"]] = 0 if match["how"] == "has finished cleanly" else int(match["code"] or 1)
    return ended


def tracebacks(output: str) -> list[str]:
    """The lines of `output` that start a Python traceback or report a KeyboardInterrupt."""
    return [line for line in output.splitlines() if "Traceback (most recent call last)" in line
            or "KeyboardInterrupt" in line]


def wait_until(condition, timeout: float, what: str, period: float = 0.1):
    """condition() until it is truthy (returned) or `timeout` s pass (AssertionError naming `what`)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(period)
