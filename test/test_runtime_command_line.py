"""The wrapper every command-line tool runs its body in (space_robot_runtime/command_line.py): a bug escaping the
body is its traceback, one line naming the tool and exit status 4; SIGINT and SIGTERM during the body only set
the interruption, whose status (130, 143) the body returns; messages carry the tool's name. And each of the
four console scripts goes through it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_runtime.command_line import EXIT_INTERNAL, CommandLine
from space_robot_runtime.interruption import Interruption

BUG_LINE = "tool-x: internal error (a bug; please report it with the traceback above): ZeroDivisionError: a bug"


def failing_body(_interruption):
    raise ZeroDivisionError("a bug")


def test_a_bug_in_the_body_is_its_traceback_one_line_and_exit_4(capsys):
    assert CommandLine("tool-x").run(failing_body) == EXIT_INTERNAL == 4
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "in failing_body" in err
    assert err.rstrip("\n").splitlines()[-1] == BUG_LINE


def test_bad_input_escaping_the_body_is_a_bug_too(capsys):
    """Bad input is the body's to catch and say (its own exit status, e.g. 2); one that escapes it was not
    expected there, so it is reported as a bug, not passed off as a one-line error."""
    def body(_interruption):
        raise ConfigError("simulation.dt", "must be > 0")

    assert CommandLine("tool-x").run(body) == 4
    assert capsys.readouterr().err.splitlines()[-1] == ("tool-x: internal error (a bug; please report it with the "
                                                        "traceback above): ConfigError: simulation.dt: must be > 0")


def test_the_bodys_status_passes_and_say_names_the_tool(capsys):
    tool = CommandLine("tool-x")

    def body(interruption):
        tool.say("error: one line")
        return 2

    assert tool.run(body) == 2
    assert capsys.readouterr() == ("", "tool-x: error: one line\n")
    assert tool.internal_error("what went wrong; outputs in out/x") == 4
    assert capsys.readouterr().err == ("tool-x: internal error (a bug; please report it with the traceback above): "
                                       "what went wrong; outputs in out/x\n")


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_the_body_is_a_stop_request_with_its_exit_status(sig, status):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    seen = []

    def body(interruption):
        assert isinstance(interruption, Interruption) and not interruption.requested
        assert signal.getsignal(sig) is not before[sig], "no handler installed: the signal would end the tests"
        os.kill(os.getpid(), sig)                   # the process goes on: the signal only sets the request
        deadline = time.monotonic() + 5.0
        while not interruption.requested and time.monotonic() < deadline:
            time.sleep(0.001)
        seen.append(interruption.name)
        return interruption.exit_status

    assert CommandLine("tool-x").run(body) == status
    assert seen == [signal.Signals(sig).name]
    assert {s: signal.getsignal(s) for s in before} == before          # handlers restored


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_body_without_safe_points_ends_at_once_on_a_signal_in_one_line(sig, status, capsys):
    """space-robot-plot: no safe point to stop at, so the signal ends the body where it is (no waiting for the
    end), said in one line with 128 + the signal; before, SIGINT was a KeyboardInterrupt traceback and SIGTERM a
    death by signal."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    reached = []

    def body(interruption):
        assert interruption is None
        os.kill(os.getpid(), sig)
        time.sleep(5.0)                          # never finishes: the handler raises in here
        reached.append("end")
        return 0

    assert CommandLine("tool-x").run(body, interruptible=False) == status
    assert reached == []
    assert capsys.readouterr().err == (f"tool-x: interrupted by {signal.Signals(sig).name}; what was written so far "
                                       "is left as it is\n")
    assert CommandLine("tool-x").run(failing_body, interruptible=False) == 4
    assert capsys.readouterr().err.splitlines()[-1] == BUG_LINE
    assert {s: signal.getsignal(s) for s in before} == before          # handlers restored


def test_usage_errors_and_keyboard_interrupts_are_not_taken_for_bugs():
    """argparse's SystemExit and a KeyboardInterrupt (a body run without the interruption) are not Exceptions:
    they pass through as before."""
    def leave(_interruption):
        raise SystemExit(2)

    with pytest.raises(SystemExit):
        CommandLine("tool-x").run(leave)

    def interrupted(_interruption):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        CommandLine("tool-x").run(interrupted, interruptible=False)


# (entry point module, main function, its body, arguments that parse, the tool's name)
ENTRY_POINTS = [
    ("space_robot_runtime.cli", "sim_main", "_simulate", [], "space-robot-sim"),
    ("space_robot_runtime.cli", "plot_main", "_plot", ["some/bag"], "space-robot-plot"),
    ("space_robot_identification.tool.cli", "identify_main", "_identify", ["config.yaml"], "space-robot-identify"),
    ("space_robot_campaign.cli", "main", "_campaign", ["campaign.yaml"], "space-robot-campaign"),
]


@pytest.mark.parametrize("module_name, main_name, body_name, argv, tool", ENTRY_POINTS,
                         ids=[e[-1] for e in ENTRY_POINTS])
def test_every_tool_runs_its_body_in_the_wrapper(module_name, main_name, body_name, argv, tool, monkeypatch, capsys):
    import importlib

    module = importlib.import_module(module_name)
    monkeypatch.setattr(module, body_name, lambda *_args: 1 / 0)
    assert getattr(module, main_name)(argv) == 4
    err = capsys.readouterr().err
    assert "Traceback" in err and err.splitlines()[-1] == (
        f"{tool}: internal error (a bug; please report it with the traceback above): "
        "ZeroDivisionError: division by zero")


def test_the_identify_tool_still_loads_no_numpy_before_its_main():
    """identify_main sets OPENBLAS_NUM_THREADS only if NumPy is not loaded yet: importing its module (and the
    wrapper with it) must not load NumPy."""
    code = "import sys, space_robot_identification.tool.cli; assert 'numpy' not in sys.modules, 'numpy loaded'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
