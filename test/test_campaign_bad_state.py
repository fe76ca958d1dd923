"""A campaign's directory damaged or busy between two runs of the tool (a table cut in half or emptied, a stray
file among the flushed rows, a table of another campaign, an unreadable campaign.json, a report/ that is not ours,
another campaign writing it) and a campaign that cannot start its executor: refused in one line (exit 2, or 3
for the executor), before anything runs, with nothing of the directory deleted or rewritten; a directory that
is created only once the executor has started; Ray's errors and --connect-timeout said in one line.

The directories are made with rows that no simulation made (`Instant`), so these tests take well under a
second each; the campaign's check against its scenario (seconds) comes after its output directory's."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from campaign_files import write_campaign

from space_robot_campaign.campaign_config import load_campaign
from space_robot_campaign.campaign_run import run_campaign
from space_robot_campaign.cli import main
from space_robot_campaign.executors import ExecutorError
from space_robot_campaign.result_table import ResultTable
from space_robot_campaign.run_plan import run_spec
from space_robot_campaign.run_task import empty_row
from space_robot_runtime.output_directory import OutputError

pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow comes with the [campaign] extra: "
                                                   "pip install -e '.[campaign]'")
RECORDED = 2                   # runs in the directory before it is damaged (of the small campaign's 4)


class Instant:
    """An executor whose runs end at once with a made-up row: a campaign directory in milliseconds."""

    name, workers, capacity = "instant", 1, 1

    def __init__(self):
        self.queue = []

    @property
    def busy(self) -> int:
        return len(self.queue)

    def submit(self, spec) -> None:
        self.queue.append(spec)

    def finished(self, timeout=None) -> list:
        done, self.queue = self.queue, []
        return [(spec, made_up_row(spec)) for spec in done]

    def cancel(self) -> None:
        self.queue.clear()

    def close(self) -> None:
        self.cancel()


def made_up_row(spec) -> dict:
    row = empty_row(spec)
    row.update(outcome="met", complete=True, requirements_met=True, simulated_time_s=0.2,
               figures=dict.fromkeys(spec.figures, 1.0e-4))
    return row


def never_started():
    pytest.fail("the executor was started although the campaign had to be refused first")


def snapshot(folder: Path) -> dict:
    """Every file under `folder` (relative name -> bytes): what must be left exactly as it was."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def recorded(tmp_path):
    """(campaign file, campaign directory holding RECORDED rows in runs.parquet)."""
    path = write_campaign(tmp_path)
    out = tmp_path / "out"
    run_campaign(load_campaign(path), out, Instant, limit=RECORDED, check=False, progress=False, plots=False)
    assert (out / "runs.parquet").is_file() and not (out / "runs.partial").exists()
    return path, out


def cut_in_half(out: Path) -> Path:
    table = out / "runs.parquet"
    table.write_bytes(table.read_bytes()[:table.stat().st_size // 2])
    return table


def emptied(out: Path) -> Path:
    table = out / "runs.parquet"
    table.write_bytes(b"")
    return table


def stray_partial(out: Path) -> Path:
    (out / "runs.partial").mkdir()
    stray = out / "runs.partial" / "part-x.parquet"
    stray.write_bytes(b"not a Parquet file\n")
    return stray


def of_another_campaign(out: Path) -> Path:
    """The same rows with one parameter of another name: a table copied from a different campaign."""
    table = out / "runs.parquet"
    other = pq.read_table(table)
    pq.write_table(other.rename_columns([{"inertia_x": "inertia_y"}.get(n, n) for n in other.column_names]),
                   table)
    return table


def a_folder(out: Path) -> Path:
    table = out / "runs.parquet"
    table.unlink()
    (table / "part-0.parquet").parent.mkdir()
    return table


@pytest.mark.parametrize("damage", [cut_in_half, emptied, stray_partial, of_another_campaign, a_folder])
def test_resume_on_a_damaged_table_is_refused_in_one_line_and_leaves_it_as_it_is(recorded, damage, capsys):
    path, out = recorded
    damaged = damage(out)
    before = snapshot(out)
    status = main([str(path), "--resume", "--in-process", "--out", str(out), "--no-progress", "--no-plots"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    line = err.strip()
    assert line.startswith("space-robot-campaign: error: --out ") and str(damaged.relative_to(out)) in line
    assert "move" in line and "--resume" in line and "--overwrite" in line
    assert snapshot(out) == before and damaged.exists()


def test_a_damaged_flushed_file_never_reaches_the_consolidation(recorded):
    """The merge removes the flushed files it merged: a file it cannot read stops it before any removal."""
    path, out = recorded
    table = ResultTable(out, load_campaign(path))
    table.add(made_up_row(run_spec(table.campaign, RECORDED)))
    table.flush()                                   # a flushed row of this campaign, to be merged
    (out / "runs.partial" / "part-x.parquet").write_bytes(b"\0" * 16)
    before = snapshot(out)
    with pytest.raises(OutputError, match=r"runs\.partial/part-x\.parquet"):
        table.consolidate()
    assert snapshot(out) == before


def test_a_campaign_whose_executor_cannot_start_creates_nothing(tmp_path):
    """--out (and the folders above it) appear only once the executor has started: a retry needs neither
    --resume nor --overwrite."""
    campaign = load_campaign(write_campaign(tmp_path))
    out = tmp_path / "new" / "deeper" / "out"

    def unreachable():
        raise ExecutorError("could not join the Ray cluster at 127.0.0.1:9")

    with pytest.raises(ExecutorError):
        run_campaign(campaign, out, unreachable, check=False, progress=False, plots=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["campaign.yaml"]


def test_output_refusals_come_before_the_executor_starts(recorded, tmp_path):
    path, out = recorded
    campaign = load_campaign(path)
    with pytest.raises(OutputError, match="holds an earlier campaign"):
        run_campaign(campaign, out, never_started, check=False, progress=False)
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(OutputError, match="not written by space-robot-campaign"):
        run_campaign(campaign, foreign, never_started, check=False, progress=False)
    assert snapshot(foreign) == {"notes.txt": b"keep me"}


def test_resume_with_a_report_folder_that_is_not_ours_is_refused_before_anything_runs(recorded):
    """The report is replaced when the campaign ends: a report/ whose marker is damaged (or that holds the user's
    files) would stop the campaign only then, after every run."""
    path, out = recorded
    (out / "report" / ".space-robot-sim.json").write_text('{"tool": "space-robot-camp')
    before = snapshot(out)
    with pytest.raises(OutputError, match=r"report/ is not a report of space-robot-campaign .* move it out"):
        run_campaign(load_campaign(path), out, never_started, resume=True, check=False, progress=False)
    assert snapshot(out) == before


@pytest.mark.parametrize("identity", [b"", b'{"identity": ', b"\xff\xfe", b"[]"])
def test_resume_with_an_unreadable_identity_is_refused_in_one_line(recorded, identity, capsys):
    path, out = recorded
    (out / "campaign.json").write_bytes(identity)
    before = snapshot(out)
    assert main([str(path), "--resume", "--in-process", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "cannot read campaign.json" in err, err
    assert snapshot(out) == before


HOLD = """import sys
from space_robot_runtime import directory_lock
directory_lock.acquire(sys.argv[1], "space-robot-campaign")
print("held", flush=True)
sys.stdin.read()
"""


def test_a_directory_another_campaign_is_writing_is_refused_before_anything_runs(recorded):
    """Two campaigns resuming one directory (two terminals, a script started twice) ran the same runs and merged
    each other's files away: the first holds the directory for its whole run, and the second is refused."""
    path, out = recorded
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = snapshot(out)
        with pytest.raises(OutputError, match=r"space-robot-campaign \(pid \d+\) is writing there now"):
            run_campaign(load_campaign(path), out, never_started, resume=True, check=False, progress=False)
        assert snapshot(out) == before
    finally:
        holder.communicate(input="", timeout=60)


def test_a_multi_line_error_of_ray_is_said_in_one_line(monkeypatch):
    """Ray's start-up errors can carry a whole traceback after their first line (node.py's 'Last connection
    error: Traceback ...'): the campaign says the first line only."""
    ray = pytest.importorskip("ray", reason="Ray comes with the [campaign] extra: pip install -e '.[campaign]'")
    from space_robot_campaign.executors import RayExecutor

    def failing_init(*args, **kwargs):
        raise RuntimeError("Failed to connect to GCS. Last connection error: Traceback (most recent call last):\n"
                           '  File "node.py", line 996, in _init_gcs_client\nRpcError: Deadline Exceeded')

    monkeypatch.setattr(ray, "init", failing_init)
    with pytest.raises(ExecutorError) as raised:
        RayExecutor(workers=1)
    assert str(raised.value).startswith("could not start or join a local Ray: RuntimeError: Failed to connect to GCS")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e308", "soon"])
def test_a_connect_timeout_that_is_not_a_bounded_positive_time_is_refused(tmp_path, value, capsys):
    """1e308 s passes a finiteness check and then overflows the wait (threading.TIMEOUT_MAX): at most an hour."""
    path = write_campaign(tmp_path)
    with pytest.raises(SystemExit) as ended:
        main([str(path), "--address", "127.0.0.1:9", f"--connect-timeout={value}", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert ended.value.code == 2 and "argument --connect-timeout: must be" in err, err
    assert not (tmp_path / "o").exists()


def test_a_connect_timeout_without_an_address_is_refused_in_one_line(tmp_path, capsys):
    path = write_campaign(tmp_path)
    assert main([str(path), "--connect-timeout", "3", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--connect-timeout bounds joining a cluster: give it with --address" in err
