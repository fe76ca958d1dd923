"""Campaigns on Ray (a local Ray with 2 CPUs, and one joined with --address): the same rows, bit for bit, as
in process; Ray's processes end with the campaign; Ctrl-C on a real space-robot-campaign process keeps the
finished runs and --resume completes them, and SIGTERM does the same (Ray replaces its handler); a cluster
that does not answer (nothing listening, or a server that accepts and stays silent, on loopback) is given up
at --connect-timeout in one line, with no --out created. Skipped, with the reason, where Ray is not installed
or cannot start."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from campaign_files import write_campaign

from space_robot_campaign.campaign_config import load_campaign
from space_robot_campaign.campaign_run import run_campaign
from space_robot_campaign.executors import InProcessExecutor
from space_robot_campaign.result_table import ResultTable

pytest.importorskip("ray", reason="Ray comes with the [campaign] extra: pip install -e '.[campaign]'")
pytest.importorskip("pyarrow", reason="pyarrow comes with the [campaign] extra: pip install -e '.[campaign]'")
pytestmark = pytest.mark.slow        # Ray's start-up alone takes seconds; test_campaign_run.py runs in process
NONDETERMINISTIC = ("wall_time_s", "host")
START_TIMEOUT = 120.0         # s: Ray's start-up and the first runs on a loaded 2-core CI machine


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every live process below `pid`."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            command = (Path("/proc") / str(child) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        out.append((child, command))
        todo += children.get(child, [])
    return out


def ray_processes(pid: int) -> list:
    return [(p, c) for p, c in descendants(pid) if "ray" in c]


def wait_until_gone(pid: int, timeout: float = 20.0) -> list:
    deadline = time.monotonic() + timeout
    while (left := ray_processes(pid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def deterministic(table) -> dict:
    return {k: v for k, v in table.to_pydict().items() if k not in NONDETERMINISTIC}


def test_ctrl_c_keeps_the_finished_runs_and_resume_completes_the_campaign(tmp_path):
    """A real process on a local Ray with 2 workers, in its own session, SIGINT to its whole process group
    (what a terminal's Ctrl-C does): exit 130, the finished rows kept, no Ray process left; --resume then runs
    the missing ones only, and the table is the in-process campaign's, bit for bit."""
    path = write_campaign(tmp_path, {"samples: 2": "samples: 6", "set: [duration=0.2]": "set: [duration=0.5]"})
    out = tmp_path / "out"
    command = [sys.executable, "-c", "import sys; from space_robot_campaign.cli import main; sys.exit(main())",
               str(path), "--out", str(out), "--workers", "2", "--no-progress", "--no-plots"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None and not list(out.glob("runs.partial/*.parquet")):
        time.sleep(0.05)
    if process.poll() is not None:
        stdout, stderr = process.communicate()
        if process.returncode == 3:
            pytest.skip(f"Ray cannot start on this machine: {stderr.strip()[-500:]}")
        pytest.fail(f"the campaign ended before it could be interrupted ({process.returncode}): {stderr[-2000:]}")
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr[-3000:]
    assert "interrupted by SIGINT" in stderr and "--resume" in stderr and "Traceback" not in stderr
    assert "WARNING" not in stderr, stderr[-3000:]        # Ray 2.5x warned of its default token auth on every start
    assert not wait_until_gone(process.pid)
    campaign = load_campaign(path)
    kept = ResultTable(out, campaign).read()
    assert 0 < kept.num_rows < 12 and set(kept.column("outcome").to_pylist()) <= {"not_evaluated", "not_met", "met"}
    resumed = run_campaign(campaign, out, InProcessExecutor, resume=True, progress=False, plots=False)
    assert resumed.complete and resumed.new_runs == 12 - kept.num_rows
    table = ResultTable(out, campaign).read()
    assert table.column("run").to_pylist() == list(range(12))
    alone = run_campaign(campaign, tmp_path / "alone", InProcessExecutor, progress=False, plots=False)
    assert deterministic(table) == deterministic(ResultTable(alone.out, campaign).read())


CLUSTER = """
import os, sys
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
import ray
ray.init(num_cpus=2, include_dashboard=False, object_store_memory=96 * 1024 * 1024, logging_level="WARNING")
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()                 # until the test closes our stdin
ray.shutdown()
"""


def test_address_joins_a_running_ray_and_leaves_it_running(tmp_path):
    """A Ray started by another process stands for a cluster (`ray start --head` does the same): the campaign
    joins it with --address, gives the same rows, and disconnects without stopping it."""
    cluster = subprocess.Popen([sys.executable, "-c", CLUSTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        address = cluster.stdout.readline().strip()
        if not address:
            pytest.skip(f"Ray cannot start on this machine: {cluster.stderr.read()[-500:]}")
        path = write_campaign(tmp_path, {"samples: 2": "samples: 1"})
        # Ray's token authentication (recent releases): a driver joining a cluster needs RAY_AUTH_MODE=token (the
        # token itself is the one in ~/.ray, shared here); older releases ignore the variable
        joined = subprocess.run([sys.executable, "-c", "import sys; from space_robot_campaign.cli import main; "
                                 "sys.exit(main())", str(path), "--address", address, "--out", str(tmp_path / "joined"),
                                 "--no-progress", "--no-plots"], capture_output=True, text=True, timeout=300,
                                env={**os.environ, "RAY_AUTH_MODE": "token"})
        assert joined.returncode == 0, joined.stderr[-3000:]
        assert f"on Ray ({address}, 2 workers)" in joined.stdout
        campaign = load_campaign(path)
        alone = run_campaign(campaign, tmp_path / "alone", InProcessExecutor, progress=False, plots=False)
        assert deterministic(ResultTable(tmp_path / "joined", campaign).read()) == \
            deterministic(ResultTable(alone.out, campaign).read())
        assert cluster.poll() is None and ray_processes(cluster.pid), "the cluster was stopped by the campaign"
    finally:
        cluster.communicate(input="", timeout=60)
    assert not wait_until_gone(cluster.pid)


CAMPAIGN_COMMAND = [sys.executable, "-c", "import sys; from space_robot_runtime.console_scripts import "
                    "space_robot_campaign; sys.exit(space_robot_campaign())"]   # as the installed script starts
CONNECT_TIMEOUT = 3.0         # s: --connect-timeout of the tests that join nothing
GIVE_UP_BOUND = 60.0          # s: the campaign's start (scenario check), Ray's import and CONNECT_TIMEOUT, loaded


def wait_for_a_flushed_row(process: subprocess.Popen, out: Path) -> None:
    """Until the campaign has flushed a row (skip when Ray cannot start here)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None and not list(out.glob("runs.partial/*.parquet")):
        time.sleep(0.05)
    if process.poll() is not None:
        _stdout, stderr = process.communicate()
        if process.returncode == 3:
            pytest.skip(f"Ray cannot start on this machine: {stderr.strip()[-500:]}")
        pytest.fail(f"the campaign ended before it could be interrupted ({process.returncode}): {stderr[-2000:]}")


def test_sigterm_on_ray_stops_the_campaign_cleanly(tmp_path):
    """SIGTERM to the campaign process alone (what a batch system or `kill` sends) once a row is flushed: Ray's
    core worker had installed glog's SIGTERM handler (a stack, exit 1, no table); the campaign re-installs its
    own, so it stops as on Ctrl-C: exit 143, the table and the report written."""
    path = write_campaign(tmp_path, {"samples: 2": "samples: 6", "set: [duration=0.2]": "set: [duration=0.5]"})
    out = tmp_path / "out"
    process = subprocess.Popen([*CAMPAIGN_COMMAND, str(path), "--out", str(out), "--workers", "2", "--no-progress",
                                "--no-plots"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_a_flushed_row(process, out)
    process.send_signal(signal.SIGTERM)
    _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr[-3000:]
    assert "*** SIGTERM" not in stderr and "Traceback" not in stderr, stderr[-3000:]
    assert "interrupted by SIGTERM" in stderr and "--resume" in stderr
    assert (out / "runs.parquet").is_file() and (out / "report" / "report.md").is_file()
    assert 0 < ResultTable(out, load_campaign(path)).read().num_rows < 12
    assert not wait_until_gone(process.pid)


def test_sigterm_after_ray_has_shut_down_lets_the_report_finish(tmp_path):
    """Ray's shutdown leaves SIGTERM at the default (death by signal): the campaign installs its handler again,
    so a SIGTERM while the report is written (after the table is merged, Ray gone) lets it finish."""
    path = write_campaign(tmp_path)
    out = tmp_path / "out"
    process = subprocess.Popen([*CAMPAIGN_COMMAND, str(path), "--out", str(out), "--workers", "2", "--no-progress"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None and not (out / "runs.parquet").exists():
        time.sleep(0.01)
    if process.poll() is not None:
        stderr = process.communicate()[1]
        if process.returncode == 3:
            pytest.skip(f"Ray cannot start on this machine: {stderr.strip()[-500:]}")
        pytest.fail(f"the campaign ended before its report ({process.returncode}): {stderr[-2000:]}")
    assert not (out / "report").exists()           # the plots take seconds: the signal comes while they are drawn
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, f"{process.returncode}: {stderr[-3000:]}"     # every run has its row
    assert "Traceback" not in stderr and "campaign small: 4 of 4 runs recorded" in stdout
    assert (out / "report" / "report.md").is_file() and list((out / "report").glob("*.png"))


def closed_port() -> int:
    """A loopback port with nothing listening on it (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SilentListener:
    """A TCP server that accepts every connection and never says a word, on 127.0.0.2 (loopback: Ray turns
    127.0.0.1 into this machine's address, where a server bound to 127.0.0.1 is not found)."""

    def __init__(self):
        self.server = socket.socket()
        try:
            self.server.bind(("127.0.0.2", 0))
        except OSError as exc:
            self.server.close()
            pytest.skip(f"no loopback address 127.0.0.2 here: {exc}")
        self.server.listen()
        self.accepted = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.2:{self.server.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                self.accepted.append(self.server.accept()[0])
            except OSError:           # closed
                return

    def close(self) -> None:
        self.server.close()
        for connection in self.accepted:
            connection.close()


@pytest.fixture
def silent_listener():
    listener = SilentListener()
    yield listener
    listener.close()


@pytest.mark.parametrize("where", ["nothing_listening", "a_silent_listener"])
def test_a_cluster_that_does_not_answer_is_given_up_at_the_connect_timeout_in_one_line(tmp_path, where, request):
    """Ray alone retried for 824 s with 61 lines of log, and --out existed by then: now one line, exit 3 after
    --connect-timeout, and no --out (a retry needs neither --resume nor --overwrite)."""
    listener = request.getfixturevalue("silent_listener") if where == "a_silent_listener" else None
    address = listener.address if listener else f"127.0.0.1:{closed_port()}"
    path = write_campaign(tmp_path)
    out = tmp_path / "new" / "out"
    start = time.monotonic()
    ended = subprocess.run([*CAMPAIGN_COMMAND, str(path), "--address", address, "--connect-timeout",
                            f"{CONNECT_TIMEOUT:g}", "--out", str(out), "--no-progress"], capture_output=True,
                           text=True, timeout=GIVE_UP_BOUND * 4)
    elapsed = time.monotonic() - start
    assert ended.returncode == 3, ended.stderr[-3000:]
    assert len(ended.stderr.splitlines()) == 1, ended.stderr[-3000:]
    assert f"could not join the Ray cluster at {address}: no answer within 3 s (--connect-timeout)" in ended.stderr
    assert CONNECT_TIMEOUT < elapsed < GIVE_UP_BOUND
    assert not (tmp_path / "new").exists()
    if listener:
        assert listener.accepted, "the campaign never reached the listener: the test tested nothing"


def test_ctrl_c_while_waiting_for_a_cluster_ends_at_once(tmp_path, silent_listener):
    """A signal while the cluster is asked ends the wait: 130 within seconds, not at the end of the timeout."""
    path = write_campaign(tmp_path)
    out = tmp_path / "out"
    process = subprocess.Popen([*CAMPAIGN_COMMAND, str(path), "--address", silent_listener.address,
                                "--connect-timeout", "600", "--out", str(out), "--no-progress"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_TIMEOUT
    while not silent_listener.accepted and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert silent_listener.accepted, process.communicate(timeout=60)[1][-3000:]
    process.send_signal(signal.SIGINT)
    _stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr[-3000:]
    assert stderr.strip() == ("space-robot-campaign: interrupted by SIGINT before any run started; nothing was "
                              "written")
    assert not out.exists()
