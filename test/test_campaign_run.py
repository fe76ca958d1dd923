"""A campaign end to end without Ray (the in-process executor runs the same run_task rows): the table written
as runs finish, failing runs as rows, interruption and --resume giving the rows of an uninterrupted campaign
bit for bit, output directory rules, bags, the report and its reproduce commands; the statistics."""
from __future__ import annotations

import json
import math
import shlex

import pytest
from campaign_files import write_campaign

from space_robot_campaign import campaign_statistics as stats
from space_robot_campaign.campaign_config import load_campaign
from space_robot_campaign.campaign_run import BagSelection, run_campaign
from space_robot_campaign.executors import InProcessExecutor
from space_robot_campaign.result_table import ResultTable
from space_robot_campaign.run_task import figure_value
from space_robot_runtime.output_directory import OutputError
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario, parse_overrides

pytest.importorskip("pyarrow", reason="pyarrow comes with the [campaign] extra: pip install -e '.[campaign]'")
NONDETERMINISTIC = ("wall_time_s", "host")     # columns that say where and how fast, not what


class StopAfter:
    """A stop request after `polls` looks (the campaign looks once per batch of results)."""

    def __init__(self, polls: int):
        self.polls, self.name = polls, "SIGINT"

    @property
    def requested(self) -> bool:
        self.polls -= 1
        return self.polls < 0


def deterministic(table) -> dict:
    return {k: v for k, v in table.to_pydict().items() if k not in NONDETERMINISTIC}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The small campaign run once, uninterrupted, in process."""
    folder = tmp_path_factory.mktemp("reference")
    campaign = load_campaign(write_campaign(folder))
    result = run_campaign(campaign, folder / "out", InProcessExecutor, csv=True, progress=False)
    return campaign, result


@pytest.mark.slow
def test_a_campaign_writes_its_table_csv_and_report(reference):
    campaign, result = reference
    assert result.complete and result.recorded == result.requested == result.new_runs == 4
    rows = ResultTable(result.out, campaign).read().to_pydict()
    assert rows["run"] == [0, 1, 2, 3] and rows["outcome"] == ["not_evaluated"] * 4   # 0.2 s: before the goal ends
    assert rows["rate"] == [0.0, 0.01, 0.0, 0.01] and all(0.9 <= x < 1.1 for x in rows["inertia_x"])
    assert set(rows) >= {"axis[0]", "axis[1]", "axis[2]", "pregrasp.distance_m", "error", "overrides", "seed"}
    assert all(abs(t - 0.2) < 1e-9 for t in rows["simulated_time_s"])
    assert not (result.out / "runs.partial").exists()                          # merged into runs.parquet
    assert (result.out / "runs.csv").read_text().splitlines()[0].startswith('"run","seed","rate","axis[0]"')
    report = json.loads((result.out / "report" / "report.json").read_text(),
                        parse_constant=lambda c: pytest.fail(f"report.json holds {c}: not strict JSON"))
    assert report["success_rate"]["runs"] == 4 and report["success_rate"]["method"].startswith("Clopper-Pearson")
    assert report["runs"] == {"in_campaign": 4, "requested": 4, "recorded": 4, "missing": 0}
    assert set(report["figures"]) == set(campaign.figures) and "p50" in report["figures"]["pregrasp.distance_m"][
        "percentiles"]
    assert [e["value"] for e in report["success_by_parameter"]["rate"]] == [0.0, 0.01]
    names = set(report["plots"])
    assert {"histogram-pregrasp.distance_m.png", "scatter-pregrasp.distance_m.png"} <= names
    assert all((result.out / "report" / name).stat().st_size > 5000 for name in names)
    assert "## Worst runs" in (result.out / "report" / "report.md").read_text()


@pytest.mark.slow
def test_the_worst_runs_command_reproduces_the_run_alone_bit_for_bit(reference):
    campaign, result = reference
    rows = ResultTable(result.out, campaign).read().to_pydict()
    worst = result.report["worst_runs"][0]
    words = shlex.split(worst["command"])
    assert words[:2] == ["space-robot-sim", "servicer_pregrasp"] and words[-2] == "--out"
    sets = [words[i + 1] for i, w in enumerate(words) if w == "--set"]
    alone = SimulationRun(load_scenario(words[1], parse_overrides(sets))).run(progress=False).summary
    i = rows["run"].index(worst["run"])
    for figure in campaign.figures:
        assert figure_value(alone, figure) == rows[figure][i], figure
    # the worst is the largest pre-grasp distance (all runs are unsuccessful here: no requirement evaluated)
    assert rows["pregrasp.distance_m"][i] == max(rows["pregrasp.distance_m"])


@pytest.mark.slow
def test_an_interrupted_campaign_keeps_its_rows_and_resume_gives_the_uninterrupted_rows(reference, tmp_path):
    campaign, result = reference
    out = tmp_path / "out"
    first = run_campaign(campaign, out, InProcessExecutor, stop=StopAfter(2), progress=False, plots=False)
    assert first.interrupted == "SIGINT" and 0 < first.recorded < 4 and not first.complete
    assert first.report["runs"]["missing"] == 4 - first.recorded
    assert (out / "report" / "report.md").is_file()                     # a report of what finished
    second = run_campaign(campaign, out, InProcessExecutor, resume=True, progress=False, plots=False)
    assert second.complete and second.new_runs == 4 - first.recorded
    reference_rows = deterministic(ResultTable(result.out, campaign).read())
    assert deterministic(ResultTable(out, campaign).read()) == reference_rows
    again = run_campaign(campaign, out, InProcessExecutor, resume=True, progress=False, plots=False)   # nothing missing
    assert again.new_runs == 0 and again.executor.startswith("none")


@pytest.mark.slow
def test_rows_flushed_before_a_kill_are_kept_and_a_run_recorded_twice_counts_once(reference, tmp_path):
    campaign, result = reference
    rows = [{"run": i, "seed": 1, "values": {"rate": 0.0, "axis": [1.0, 0.0, 0.0], "inertia_x": 1.0},
             "outcome": "met", "complete": True, "requirements_met": True, "figures": dict.fromkeys(campaign.figures),
             "simulated_time_s": 0.2, "wall_time_s": 0.1, "error": None, "overrides": ["duration=0.2"], "host": "h"}
            for i in (2, 0)]
    table = ResultTable(tmp_path, campaign)
    table.add(rows[0])
    table.flush()                                           # what a killed campaign leaves: runs.partial/*.parquet
    assert len(list((tmp_path / "runs.partial").glob("*.parquet"))) == 1
    table.consolidate()
    later = ResultTable(tmp_path, campaign)
    later.add(rows[1])
    later.add(rows[0])                                      # again (a crash between consolidation steps)
    later.flush()
    assert later.read().column("run").to_pylist() == [0, 2]
    assert later.recorded_runs() == {0, 2}


def test_failing_and_diverging_runs_are_rows_with_their_error(tmp_path, monkeypatch):
    text = """
    name: failing
    scenario: servicer_pregrasp
    set: [duration=0.05, goals.trajectory=null]
    parameters:
      wx: {key: model.subtrees.target.xacro_args.inertia_scale_x, list: [1.0, 3.0, 1.0, 1.0]}
      spin: {key: initial_state.joint_velocities.right_j0, list: [0.0, 0.0, 1.0e5, 0.0]}
      bug: {key: recording.rate, list: [100, 100, 100, 99]}      # 99: the stand-in bug below
    figures: [max_attitude_error_rad]
    success: {max_attitude_error_rad: 1.0}
    """
    campaign = load_campaign(write_campaign(tmp_path, text=text))
    real_run = SimulationRun.run

    def run_with_a_bug(self, *args, **kwargs):
        if self.scenario.recording.rate == 99:
            raise ZeroDivisionError("a bug")
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(SimulationRun, "run", run_with_a_bug)
    result = run_campaign(campaign, tmp_path / "out", InProcessExecutor, progress=False, plots=False)
    rows = ResultTable(result.out, campaign).read().to_pydict()
    assert rows["outcome"] == ["not_met", "bad_input", "diverged", "error"]
    assert "link[target/base_link].inertial.inertia: is not a physical inertia tensor" in rows["error"][1]
    assert "simulation diverged in the step from t=" in rows["error"][2]
    assert rows["error"][3].startswith("internal error: ZeroDivisionError: a bug") and rows["error"][0] is None
    assert result.report["success_rate"]["successes"] == 1 and result.report["worst_runs"][0]["run"] == 1
    assert result.report["outcomes"] == {"bad_input": 1, "diverged": 1, "error": 1, "not_met": 1}


@pytest.mark.slow
def test_failed_runs_keep_their_bag_by_running_again(tmp_path):
    campaign = load_campaign(write_campaign(tmp_path, {"success: {max_attitude_error_rad: 1.0e-3}":
                                                       "success: {pregrasp.distance_m: 0.2422}",
                                                       "samples: 2": "samples: 1"}))
    result = run_campaign(campaign, tmp_path / "out", InProcessExecutor, bags=BagSelection.parse("failed,0"),
                          progress=False, plots=False)
    rows = ResultTable(result.out, campaign).read().to_pydict()
    failed = [r for r, d in zip(rows["run"], rows["pregrasp.distance_m"]) if not d <= 0.2422]
    assert failed == [1] and not result.bag_mismatches          # 0.2419 m (rate 0) and 0.2427 m
    kept = sorted(p.name for p in (result.out / "bags").iterdir() if not p.name.startswith("."))
    assert kept == sorted({f"run-{r:06d}" for r in [0, *failed]})
    for name in kept:
        summary = json.loads((result.out / "bags" / name / "summary.json").read_text())
        i = rows["run"].index(int(name.split("-")[1]))
        assert summary["pregrasp"]["distance_m"] == rows["pregrasp.distance_m"][i]   # the same run, with its bag
        assert (result.out / "bags" / name / "bag" / "metadata.yaml").is_file()


@pytest.mark.slow
def test_output_directory_rules(reference, tmp_path):
    campaign, _result = reference
    out = tmp_path / "out"
    run_campaign(campaign, out, InProcessExecutor, limit=1, progress=False, plots=False)
    with pytest.raises(OutputError, match=r"holds an earlier campaign; pass --resume .* --overwrite"):
        run_campaign(campaign, out, InProcessExecutor, limit=1, progress=False, plots=False)
    changed = load_campaign(write_campaign(tmp_path, {"seed: 7": "seed: 9"}))
    with pytest.raises(OutputError, match=r"holds a different campaign \(it differs at seed;"):
        run_campaign(changed, out, InProcessExecutor, resume=True, progress=False)
    replaced = run_campaign(changed, out, InProcessExecutor, limit=1, overwrite=True, progress=False,
                            plots=False)
    assert replaced.recorded == 1
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    for resume in (False, True):
        with pytest.raises(OutputError, match="not empty and was not written by space-robot-campaign|holds no "
                                              "campaign"):
            run_campaign(campaign, foreign, InProcessExecutor, resume=resume, progress=False)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_the_cli_in_process_and_its_exit_statuses(tmp_path, capsys):
    from space_robot_campaign.cli import main

    path = write_campaign(tmp_path)
    assert main([str(path), "--in-process", "--runs", "1", "--out", str(tmp_path / "o"), "--no-progress",
                 "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "campaign small: 1 of 1 runs recorded (1 new" in out and "worst run 0" in out
    assert main([str(path), "--in-process", "--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert "holds an earlier campaign" in capsys.readouterr().err
    assert main([str(path), "--in-process", "--workers", "2"]) == 2
    assert main([str(tmp_path / "missing.yaml")]) == 2
    assert "space-robot-campaign: error: campaign: " in capsys.readouterr().err
    assert main([str(path), "--keep-bags", "some", "--in-process"]) == 2


def test_success_rate_interval_is_clopper_pearson():
    zero = stats.success_rate(0, 10, 0.95)
    assert zero["low"] == 0.0 and math.isclose(zero["high"], 1 - 0.025 ** (1 / 10), rel_tol=1e-9)
    every = stats.success_rate(10, 10, 0.95)
    assert every["high"] == 1.0 and math.isclose(every["low"], 0.025 ** (1 / 10), rel_tol=1e-9)
    half = stats.success_rate(50, 100, 0.95)
    assert math.isclose(half["low"], 0.3983, abs_tol=1e-4) and math.isclose(half["high"], 0.6017, abs_tol=1e-4)
    assert stats.success_rate(0, 0, 0.95)["rate"] is None


def test_figure_statistics_and_worst_runs():
    s = stats.figure_statistics([1.0, None, 3.0, 2.0, float("nan"), 4.0], (0, 50, 100, 25))
    assert (s["count"], s["missing"], s["min"], s["max"], s["mean"]) == (4, 2, 1.0, 4.0, 2.5)
    assert s["percentiles"] == {"p0": 1.0, "p50": 2.5, "p100": 4.0, "p25": 1.75}
    rows = {"run": [0, 1, 2, 3, 4], "d": [0.1, None, 0.5, 0.3, 0.9]}
    success = [True, False, False, True, True]
    assert stats.worst_runs(rows, success, "d", 4) == [1, 2, 4, 3]     # failed (no value first), then largest


def test_in_process_a_stop_request_ends_the_run_in_progress_which_stays_missing(tmp_path):
    campaign = load_campaign(write_campaign(tmp_path, {"set: [duration=0.2]": "set: [duration=5.0]"}))
    stop = StopAfter(40)                # polled by the first run's loop (every 0.05 s simulated) and between runs
    result = run_campaign(campaign, tmp_path / "out", lambda: InProcessExecutor(stop), stop=stop, progress=False,
                          plots=False)
    assert result.interrupted == "SIGINT" and result.recorded == 0 and result.new_runs == 0
    assert ResultTable(result.out, campaign).read().num_rows == 0
