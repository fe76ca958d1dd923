"""Campaigns on Ray (a local Ray with 2 CPUs, and one joined with --address): the same rows, bit for bit, as
in process; Ray's processes end with the campaign; Ctrl-C on a real space-robot-campaign process keeps the
finished runs and --resume completes them. Skipped, with the reason, where Ray is not installed or cannot
start."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
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
