"""A run interrupted by SIGINT or SIGTERM ends like `ros2 bag record`: the bag closed and readable up to the
last instant reached, summary.json marked incomplete with the reason and the time, plots of what was run,
exit status 130 / 143, one line saying so, no traceback. Real signals to a real `space-robot-sim` process."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from rosbags.rosbag2 import Reader

from space_robot_dynamics.errors import SimulationDivergedError
from space_robot_runtime.run_trace import STATUS_KEY, bag_custom_data
from space_robot_runtime.simulation_run import RunInterrupted, SimulationRun
from space_robot_scenario import load_scenario

START_TIMEOUT = 60.0      # s: imports, model building and the first progress line on a loaded CI machine


def start_sim(out, *extra):
    """space-robot-sim on the default scenario (8 s simulated, several seconds of wall time) with its progress
    bar forced on, returned once the run loop has started (the first progress line)."""
    command = [sys.executable, "-c", "import sys; from space_robot_runtime.cli import sim_main; "
                                     "sys.exit(sim_main())", "--out", str(out), "--progress", *extra]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_TIMEOUT
    seen = ""
    while time.monotonic() < deadline:
        char = process.stderr.read(1)
        if not char:
            break
        seen += char
        if "% " in seen:              # "[###...]  12.5%  t = ..."
            return process, seen
    process.kill()
    pytest.fail(f"space-robot-sim did not start its run: {seen}")


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.slow
def test_a_signal_ends_the_run_cleanly_with_its_outputs(sig, status, tmp_path):
    out = tmp_path / "run"
    process, _ = start_sim(out)
    time.sleep(0.5)
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == status, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    name = signal.Signals(sig).name
    lines = [line for line in stderr.splitlines() if line.startswith("space-robot-sim:")]
    assert len(lines) == 1 and f"interrupted by {name} at t = " in lines[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["stopped_by"] == name
    assert summary["incomplete_reason"] == f"interrupted by {name}"
    reached = summary["simulated_time_s"]
    assert 0.0 < reached < summary["requested_duration_s"] == 8.0
    assert summary["duration_s"] == pytest.approx(reached, abs=1e-9)       # the final instant is recorded
    with Reader(out / "bag") as reader:              # closed: metadata.yaml and the MCAP summary are there
        assert reader.message_count > 0
        assert reader.end_time * 1e-9 == pytest.approx(reached, abs=1.5e-3)
    assert json.loads(bag_custom_data(out / "bag")[STATUS_KEY])["complete"] is False
    for plot in ("joint_angles.png", "momentum_drift.png"):
        assert (out / plot).stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]          # no staging directory left


@pytest.mark.slow
def test_a_second_sigint_does_not_break_the_outputs_and_overwrite_then_works(tmp_path):
    out = tmp_path / "run"
    process, _ = start_sim(out)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    time.sleep(0.02)
    process.send_signal(signal.SIGINT)            # a terminal's Ctrl-C twice
    _stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in stderr
    assert json.loads((out / "summary.json").read_text())["complete"] is False
    # the interrupted run is this tool's: --overwrite replaces it (and only with --overwrite)
    rerun = [sys.executable, "-c", "import sys; from space_robot_runtime.cli import sim_main; sys.exit(sim_main())",
             "--duration", "0.01", "--out", str(out), "--no-progress"]
    refused = subprocess.run(rerun, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "pass --overwrite" in refused.stderr
    done = subprocess.run(rerun + ["--overwrite"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["steps"] == 10


@pytest.mark.slow
def test_a_killed_runs_staging_directory_is_removed_by_the_next_run(tmp_path):
    out = tmp_path / "run"
    process, _ = start_sim(out)
    process.kill()                               # SIGKILL: no cleanup possible
    process.communicate(timeout=60)
    staged = [p for p in tmp_path.iterdir() if p.name.startswith(".run.partial-")]
    assert len(staged) == 1 and not out.exists()
    rerun = [sys.executable, "-c", "import sys; from space_robot_runtime.cli import sim_main; sys.exit(sim_main())",
             "--duration", "0.01", "--out", str(out), "--no-progress", "--no-plots"]
    assert subprocess.run(rerun, capture_output=True, timeout=120).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


class StopAfter:
    """A stand-in of interruption.Interruption: a stop requested after `polls` looks (in-process, no signal)."""

    def __init__(self, polls: int, name: str = "SIGTERM"):
        self.polls, self.name = polls, name

    @property
    def requested(self) -> bool:
        self.polls -= 1
        return self.polls < 0


def test_the_python_api_stops_where_asked_and_keeps_the_outputs(tmp_path):
    run = SimulationRun(load_scenario("servicer_pregrasp"))
    result = run.run(duration=1.0, out_dir=tmp_path / "o", plots=False, progress=False, stop=StopAfter(4))
    assert not result.complete and result.status.stopped_by == "SIGTERM"
    reached = result.status.simulated_time           # 4 chunks of the loop (of at most 0.05 s each)
    assert 0.0 < reached <= 0.2 + 1e-9
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["simulated_time_s"] == reached and summary["duration_s"] == pytest.approx(reached, abs=1e-12)


def test_run_raises_run_interrupted_after_writing_when_it_handles_sigint_itself(tmp_path):
    run = SimulationRun(load_scenario("servicer_pregrasp"))
    original = run.graph.run_ticks
    calls = []

    def run_ticks(count):                       # the user presses Ctrl-C during the 3rd chunk
        calls.append(count)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        original(count)

    run.graph.run_ticks = run_ticks
    before = signal.getsignal(signal.SIGINT)    # default_int_handler; SIG_IGN when started as a background job
    with pytest.raises(RunInterrupted) as raised:
        run.run(duration=1.0, out_dir=tmp_path / "o", plots=False, progress=False)
    result = raised.value.result
    assert not result.complete and result.status.stopped_by == "SIGINT"
    assert (tmp_path / "o" / "bag" / "metadata.yaml").is_file()
    assert signal.getsignal(signal.SIGINT) is before        # handlers restored


def test_a_diverging_run_stops_at_the_failing_step_with_its_outputs(tmp_path):
    run = SimulationRun(load_scenario("servicer_pregrasp"))
    real_step, steps = run.simulator.step, []

    def diverge_at_the_30th_step(*args):
        steps.append(1)
        if len(steps) == 30:
            raise SimulationDivergedError(run.simulator.state.t, [0], [])
        return real_step(*args)

    run.simulator.step = diverge_at_the_30th_step
    result = run.run(duration=1.0, out_dir=tmp_path / "o", plots=False, progress=False)
    assert not result.complete and result.status.stopped_by == "diverged"
    assert result.status.simulated_time == pytest.approx(0.029, abs=1e-12)   # not one tick further
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["complete"] is False and "diverged" in summary["incomplete_reason"]
    assert summary["duration_s"] == pytest.approx(0.029, abs=1e-12)


def test_the_cli_exits_3_on_a_diverging_simulation(tmp_path, capsys):
    from space_robot_runtime.cli import EXIT_RUN_FAILED, sim_main

    # 1e5 rad/s on the shoulder: the explicit integrator blows up within two steps (no goal, so the
    # controller's trajectory check does not refuse the start)
    status = sim_main(["--duration", "0.1", "--set", "goals.trajectory=null", "--set",
                       "initial_state.joint_velocities.right_j0=1.0e5", "--out", str(tmp_path / "o"),
                       "--no-progress", "--no-plots"])
    assert status == EXIT_RUN_FAILED
    assert "space-robot-sim: simulation diverged in the step from t=" in capsys.readouterr().err
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["stopped_by"] == "diverged"
