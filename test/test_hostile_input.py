"""Bad input and signals, round two: what a hostile user tried against space-robot-sim, -plot and
-identify, each a test that failed before its fix. Every refusal is exit status 2 and one line on stderr naming
the field; a signal at any point of start-up is exit status 130 / 143 and one line; nothing is written."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_runtime.cli import EXIT_BAD_INPUT, EXIT_OK, plot_main, sim_main
from space_robot_scenario import load_scenario, parse_overrides
from space_robot_scenario.scenario import MAX_STEPS

QUIET = ["--no-progress", "--no-plots"]
REPOSITORY = Path(__file__).resolve().parents[1]


def refused(capsys, status: int, *words: str) -> str:
    """The one stderr line of a refusal (exit 2), checked for `words`."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == EXIT_BAD_INPUT, err
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# ---- durations that cannot finish -------------------------------------------------------------
def test_a_huge_duration_on_the_command_line_is_refused_not_overflowed(tmp_path, capsys):
    """Before: 1e308 passed the finiteness check, then round(1e308 / dt) raised OverflowError (exit 4)."""
    status = sim_main(["--duration", "1e308", "--out", str(tmp_path / "o")] + QUIET)
    refused(capsys, status, "--duration: 1e+308 s is more than 1e+08 steps of 0.001 s")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("text", ["1.0e+30", "1.0e30", "1e30"])
def test_a_scenario_duration_that_cannot_finish_is_a_load_error(text, tmp_path, capsys):
    """Before: accepted, and the run went on until killed."""
    scenario = tmp_path / "long.yaml"
    scenario.write_text(f"model: config/models/servicer_target.yaml\nduration: {text}\n")
    with pytest.raises(ConfigError, match=r"long.yaml: duration: 1e\+30 s is more than 1e\+08 steps"):
        load_scenario(scenario)
    status = sim_main([str(scenario), "--out", str(tmp_path / "o")] + QUIET)
    refused(capsys, status, "duration:")
    assert not (tmp_path / "o").exists()


def test_the_duration_limit_is_a_step_count_and_its_bound_is_accepted():
    """MAX_STEPS steps are accepted, one more is refused, at two step sizes (the limit scales with dt)."""
    for dt in (0.001, 0.0005):
        set_dt = [f"simulation.dt={dt}"]
        assert load_scenario("servicer_pregrasp", parse_overrides(set_dt + [f"duration={MAX_STEPS * dt}"]))
        with pytest.raises(ConfigError, match="the most one run takes"):
            load_scenario("servicer_pregrasp", parse_overrides(set_dt + [f"duration={(MAX_STEPS + 2) * dt}"]))


# ---- names the file system cannot hold ------------------------------------------------------------
@pytest.mark.parametrize("length, words", [(300, "is 300 bytes; this file system allows 255"),
                                           (245, "at most 236 here")])     # fits, but its staging name does not
def test_an_output_name_too_long_for_the_file_system_is_bad_input(length, words, tmp_path, capsys):
    """Before: OSError: [Errno 36] File name too long, exit 4."""
    status = sim_main(["--duration", "0.01", "--out", str(tmp_path / ("a" * length))] + QUIET)
    refused(capsys, status, "--out: the name 'aaaa", words)
    assert not list(tmp_path.iterdir())


def test_a_too_long_directory_above_the_output_is_bad_input(tmp_path, capsys):
    status = sim_main(["--duration", "0.01", "--out", str(tmp_path / ("b" * 256) / "run")] + QUIET)
    refused(capsys, status, "is 256 bytes; this file system allows 255; choose a shorter --out")


# ---- a signal at any point of start-up -------------------------------------------------------------
def console_script(function: str, *args: str) -> subprocess.Popen:
    """A console script as setup.py installs it: its function in space_robot_runtime.console_scripts."""
    code = f"import sys; from space_robot_runtime.console_scripts import {function}; sys.exit({function}())"
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=args and None)


def test_the_installed_scripts_start_with_the_signals_held():
    """The tests below run console_scripts' functions: the scripts setup.py installs must be those."""
    setup = (REPOSITORY / "setup.py").read_text()
    for tool in ("sim", "plot", "identify", "campaign"):
        name = f"space-robot-{tool}"
        assert f'"{name} = space_robot_runtime.console_scripts:{name.replace("-", "_")}"' in setup, name
    code = "import sys, space_robot_runtime.console_scripts; assert 'numpy' not in sys.modules, 'numpy loaded'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr        # identify sets OPENBLAS_NUM_THREADS before NumPy loads


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("delay", [0.15, 0.5, 1.0])
def test_a_signal_during_start_up_is_one_line_and_its_exit_status(delay, sig, status, tmp_path):
    """Before: SIGINT 1 s after launch (imports, model building) was a KeyboardInterrupt traceback and a death by
    signal. Delays from the imports (0.15 s) to the model building (1 s on a quiet machine); on a slow one all
    fall into the imports, still start-up."""
    out = tmp_path / "run"
    process = console_script("space_robot_sim", "--out", str(out), "--no-progress")
    time.sleep(delay)
    process.send_signal(sig)
    _stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == status, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and f"interrupted by {signal.Signals(sig).name}" in lines[0], stderr
    assert "Traceback" not in stderr
    if "before the run started" in lines[0] or "while starting" in lines[0]:
        assert not list(tmp_path.iterdir())           # nothing written, no staging or lock file left


@pytest.mark.parametrize("function, args", [
    ("space_robot_plot", ["{tmp}/no_bag"]),
    ("space_robot_identify", ["config/identification/target_inertia.yaml", "--out", "{tmp}/id"]),
    ("space_robot_campaign", ["pregrasp_robustness", "--in-process", "--out", "{tmp}/campaign"]),
])
def test_every_tool_says_a_signal_during_its_imports_in_one_line(function, args, tmp_path):
    process = console_script(function, *(a.format(tmp=tmp_path) for a in args))
    time.sleep(0.15)                                  # in the imports (NumPy alone takes longer here)
    process.send_signal(signal.SIGINT)
    _stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert len(stderr.strip().splitlines()) == 1 and "interrupted by SIGINT" in stderr, stderr


# ---- malformed YAML in one line -----------------------------------------------------------------
def test_malformed_yaml_in_a_scenario_is_one_line_with_line_and_column(tmp_path, capsys):
    """Before: PyYAML's 4 lines naming '<unicode string>'."""
    scenario = tmp_path / "bad.yaml"
    scenario.write_text("model: config/models/servicer_target.yaml\nduration: [1,\n  2\n")
    status = sim_main([str(scenario), "--out", str(tmp_path / "o")] + QUIET)
    line = refused(capsys, status, "bad.yaml: <yaml>: not valid YAML: line 4, column 1: did not find expected ',' "
                                   "or ']' (while parsing a flow sequence at line 2, column 11)")
    assert "<unicode string>" not in line


def test_malformed_yaml_in_a_set_value_is_one_line(tmp_path, capsys):
    status = sim_main(["--set", "controller.controller.modes=[joint_tracking", "--out", str(tmp_path / "o")] + QUIET)
    refused(capsys, status, "--set controller.controller.modes=[joint_tracking", "the value is not YAML: line 2, "
            "column 1: did not find expected ',' or ']' (while parsing a flow sequence at line 1, column 1)")


def small_bag(tmp_path) -> Path:
    out = tmp_path / "run"
    assert sim_main(["--duration", "0.05", "--out", str(out)] + QUIET) == EXIT_OK
    return out / "bag"


def test_a_bag_with_malformed_metadata_is_one_line_for_plot_and_identify(tmp_path, capsys):
    from space_robot_identification.tool.cli import identify_main

    bag = small_bag(tmp_path)
    capsys.readouterr()
    (bag / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: [8,\n")
    # PyYAML's text (plot reads the run info first) and ruamel's inside rosbags' ReaderError (identify): both were
    # one line but with the parsers' marks in it ('<unicode string>', a caret); now the file, line and column
    line = refused(capsys, plot_main([str(bag)]), "space-robot-plot: error: cannot read",
                   "metadata.yaml: not valid YAML: line 2, column 1")
    assert "<unicode string>" not in line
    config = REPOSITORY / "config" / "identification" / "target_inertia.yaml"
    status = identify_main([str(config), "--data", str(bag), "--out", str(tmp_path / "id"), "--no-progress"])
    line = refused(capsys, status, "--data: cannot read the bag", "metadata.yaml: not valid YAML: line 2, column 1")
    assert "<unicode string>" not in line
    assert not (tmp_path / "id").exists()


def test_malformed_yaml_in_identification_and_campaign_configs_is_one_line(tmp_path, capsys):
    from space_robot_campaign.cli import main as campaign_main
    from space_robot_identification.tool.cli import identify_main

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nparameters: {a: [1,\n")
    refused(capsys, identify_main([str(bad), "--out", str(tmp_path / "id")]), "not valid YAML: line 3, column 1")
    refused(capsys, campaign_main([str(bad), "--in-process", "--out", str(tmp_path / "c")]),
            "not valid YAML: line 3, column 1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


@pytest.mark.parametrize("old, new, words", [
    ("sample_rate: 100.0 ", "sample_rate: 1.0e15", "1e+15 Hz over the 10 s of case 'offset_2.8deg' is 1e+16 samples"),
    ("{name: offset_2.8deg, main: true,", "{name: offset_2.8deg, main: true, duration: 1.0e308,",
     "100 Hz over the 1e+308 s of case 'offset_2.8deg' is inf samples"),
])
def test_a_simulated_identification_case_too_long_to_hold_is_a_load_error(old, new, words, tmp_path, capsys):
    """Before: the case was simulated, then np.arange of 1e16 samples raised MemoryError (exit 4, after the output
    directory was staged); a duration of 1e308 overflowed int() (OverflowError)."""
    from space_robot_identification.tool.cli import identify_main

    text = (REPOSITORY / "config" / "identification" / "seed003_study.yaml").read_text()
    assert old in text
    config = tmp_path / "study.yaml"
    config.write_text(text.replace(old, new).replace("model: config/", f"model: {REPOSITORY}/config/"))
    refused(capsys, identify_main([str(config), "--out", str(tmp_path / "id"), "--no-progress"]),
            "synthetic_data.sample_rate:", words, "more than 1e+07")
    assert not (tmp_path / "id").exists()


# ---- one writer per output directory ---------------------------------------------------------------
HOLD_LOCK = ("import sys, time; from space_robot_runtime import directory_lock; "
             "directory_lock.acquire(sys.argv[1], 'space-robot-sim'); print('held', flush=True); time.sleep(600)")


def test_a_second_run_into_the_same_output_is_refused_while_the_first_writes(tmp_path, capsys):
    """Before: both ran with --overwrite and the later to finish silently replaced the other's outputs. The lock
    dies with its holder (here SIGKILL): never stale."""
    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        status = sim_main(["--duration", "0.01", "--out", str(out), "--overwrite"] + QUIET)
        refused(capsys, status, f"--out {out}: space-robot-sim (pid {holder.pid}) is writing there now")
    finally:
        holder.kill()
        holder.wait()
    assert sim_main(["--duration", "0.01", "--out", str(out), "--overwrite"] + QUIET) == EXIT_OK
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]          # the lock file goes with its holder


def test_two_real_runs_at_once_one_writes_and_the_other_is_refused(tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, "-c", "import sys; from space_robot_runtime.console_scripts import "
               "space_robot_sim; sys.exit(space_robot_sim())", "--out", str(out), "--overwrite", "--no-progress",
               "--no-plots", "--duration"]
    first = subprocess.Popen(command + ["8"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".run.partial-*")) and time.monotonic() < deadline:
        time.sleep(0.05)                             # the first run owns its output once it stages
    second = subprocess.run(command + ["0.01"], capture_output=True, text=True, timeout=120)
    first.communicate(timeout=120)
    assert first.returncode == EXIT_OK
    assert second.returncode == EXIT_BAD_INPUT and "is writing there now" in second.stderr, second.stderr
    assert json.loads((out / "summary.json").read_text())["complete"] is True


# ---- the step the stability check names passes the rate check too ------------------------------------
def test_the_step_an_unstable_dt_error_names_passes_every_check(tmp_path, capsys):
    """Before: 'use dt <= 0.00558 s' for the flexible arm, which the node rates then refused (1 kHz is not a whole
    number of 5.58 ms steps)."""
    status = sim_main(["servicer_flexible", "--set", "simulation.dt=0.01", "--out", str(tmp_path / "o")] + QUIET)
    line = refused(capsys, status, "simulation.dt: the stiffest flexible mode", "use dt <= 0.00558 s (e.g. ")
    step = line.split("(e.g. ")[1].split(" s:")[0]
    assert float(step) <= 0.00558
    status = sim_main(["servicer_flexible", "--set", f"simulation.dt={step}", "--duration", str(20 * float(step)),
                       "--out", str(tmp_path / "o")] + QUIET)
    assert status == EXIT_OK, capsys.readouterr().err


@pytest.mark.parametrize("periods, limit, step", [
    ([0.001, 0.01, 0.1], 0.00558, "0.001"),          # 1 kHz control: nothing above 1 ms fits
    ([0.02, 0.1], 0.00558, "0.005"),                 # 50 and 10 Hz only: 5 ms
    ([0.001, 0.1], 0.0004, "0.00025"),               # 1/3 ms fits, but 1/4 ms can be written exactly
    ([1 / 30, 0.001], 0.1, "0.0003333333333333333"),  # 30 Hz: no finite decimal divides 1/30 s
])
def test_the_largest_common_step_divides_every_period(periods, limit, step):
    from space_robot_nodes.lockstep_graph import largest_common_step

    assert largest_common_step(periods, limit) == step
    for period in periods:
        ratio = period / float(step)
        assert abs(ratio - round(ratio)) < 1e-9 * ratio          # the graph's own slack (lockstep_graph.py)


def test_no_lock_file_or_staging_is_left_by_a_refused_run(tmp_path, capsys):
    assert sim_main(["--set", "simulation.dt=0.0015", "--out", str(tmp_path / "o")] + QUIET) == EXIT_BAD_INPUT
    assert not list(tmp_path.iterdir()) and os.listdir(tmp_path) == []


def test_a_directory_refused_after_its_lock_was_taken_lets_the_lock_go(tmp_path):
    """Before: OutputDirectory kept the lock (and its file beside --out) when the directory was refused after
    the lock was taken (earlier outputs, no --overwrite), until the process ended: a long-lived process (a
    campaign, a test session) then refused itself nothing, but left `.o.lock` behind for its lifetime."""
    from space_robot_runtime import directory_lock
    from space_robot_runtime.output_directory import OutputDirectory, OutputError

    first = OutputDirectory(tmp_path / "o")
    first.commit({})
    with pytest.raises(OutputError, match="--overwrite"):
        OutputDirectory(tmp_path / "o")
    assert sorted(os.listdir(tmp_path)) == ["o"]
    assert not directory_lock._held


# ---- the same classes elsewhere: a rate whose period overflows ----------------------------------------------
@pytest.mark.parametrize("setting, field", [
    ("nodes.dynamics.rates.tf=5e-324", "dynamics.rates.tf"),        # 1 / 5e-324 is inf: the graph rounded it
    ("recording.rate=5e-324", "recording.rate"),                    # ... and the bag recorder, after outputs existed
    ("controller.controller.rate=5e-324", "controller.rate"),
])
def test_a_rate_whose_period_overflows_is_refused(setting, field, tmp_path, capsys):
    """Before: OverflowError (exit 4), for recording.rate once the run's output directory existed."""
    status = sim_main(["--set", setting, "--duration", "0.01", "--out", str(tmp_path / "o")] + QUIET)
    refused(capsys, status, f"{field}: must be a rate in Hz whose period 1 / rate is finite, got 5e-324")
    assert not list(tmp_path.iterdir())


def test_the_graph_refuses_a_timer_period_it_cannot_count_in_steps():
    from space_robot_nodes.lockstep_graph import Graph
    from space_robot_nodes.node_core import SENSE, NodeCore

    node = NodeCore("n")
    node.add_timer("t", float("inf"), lambda _now: None, SENSE)
    graph = Graph(0.001)
    graph.add(node)
    with pytest.raises(ConfigError, match=r"\.t: 0 Hz \(period inf s"):
        graph.check()


@pytest.mark.parametrize("where", ["file/x", "n" * 300])
def test_plot_into_a_directory_it_cannot_write_is_bad_input(where, tmp_path, capsys):
    """Before: NotADirectoryError / OSError ENAMETOOLONG, exit 4."""
    bag = small_bag(tmp_path)
    (tmp_path / "file").write_text("x")
    capsys.readouterr()
    status = plot_main([str(bag), "--out", str(tmp_path / where)])
    refused(capsys, status, "cannot write the plots there", "choose a directory you can write")
