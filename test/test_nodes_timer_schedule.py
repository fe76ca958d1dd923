"""TimerSchedule (a core's timers on a clock that jumps) and WallPacing (physics steps due on the wall clock):
the scheduling the ROS 2 host runs, without ROS."""
from __future__ import annotations

import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_nodes.node_core import ACTUATE, CONTROL, MONITOR, SENSE, Timer
from space_robot_nodes.timer_schedule import TimerSchedule
from space_robot_nodes.wall_pacing import WallPacing


def recording_timers(specs):
    """Timers (name, period, phase) whose calls go to one list as (name, time)."""
    calls = []
    timers = [Timer(name, period, lambda now, name=name: calls.append((name, now)), phase)
              for name, period, phase in specs]
    return timers, calls


def test_due_timers_run_in_phase_order_at_their_instants():
    timers, calls = recording_timers([("diagnostics", 0.1, MONITOR), ("step", 0.001, ACTUATE),
                                      ("control", 0.001, CONTROL), ("state", 0.001, SENSE)])
    schedule = TimerSchedule(timers)
    assert schedule.run(0.0) == 4
    assert [name for name, _ in calls] == ["state", "control", "diagnostics", "step"]
    calls.clear()
    for k in range(1, 200):                          # 1 kHz instants as sums of float steps
        schedule.run(k * 0.001)
    assert sum(name == "control" for name, _ in calls) == 199
    assert [t for name, t in calls if name == "diagnostics"] == pytest.approx([0.1])
    assert schedule.next_due() == pytest.approx(0.2)


def test_a_jump_over_several_periods_runs_a_timer_once_and_moves_it_past_now():
    timers, calls = recording_timers([("monitor", 0.02, MONITOR)])
    schedule = TimerSchedule(timers)
    schedule.run(0.0)
    assert schedule.run(0.013) == 0                  # not due yet
    assert schedule.run(0.095) == 1                  # four periods jumped over: once, as rclpy skips them
    assert schedule.next_due() == pytest.approx(0.1)
    assert calls == [("monitor", 0.0), ("monitor", 0.095)]


def test_a_tick_splits_into_sensing_then_actuation():
    timers, calls = recording_timers([("step", 0.001, ACTUATE), ("state", 0.001, SENSE)])
    schedule = TimerSchedule(timers)
    sensing, actuating = range(ACTUATE), (ACTUATE,)
    schedule.run(0.0, sensing)
    assert calls == [("state", 0.0)]
    schedule.run(0.0, actuating)                     # later, once the commands had their time
    schedule.run(0.0, sensing)                       # nothing runs twice at one instant
    assert calls == [("state", 0.0), ("step", 0.0)]


def test_a_wall_clock_schedule_counts_from_its_start():
    timers, calls = recording_timers([("forward", 0.001, ACTUATE)])
    schedule = TimerSchedule(timers, start=1.7e9)    # seconds of system time
    schedule.run(1.7e9)
    assert schedule.next_due() == pytest.approx(1.7e9 + 0.001, abs=1e-6)


def test_pacing_follows_the_wall_clock_times_the_real_time_factor():
    pacing = WallPacing(0.001, real_time_factor=2.0, max_catch_up=0.1)
    pacing.start(100.0)
    assert pacing.steps_due(100.0, 0) == 0
    assert pacing.steps_due(100.050, 0) == 100       # 50 ms of wall time at 2x: 100 steps of 1 ms
    assert pacing.wall_time_of(100) == pytest.approx(100.0505)


def test_pacing_drops_a_backlog_instead_of_spiralling():
    pacing = WallPacing(0.001, max_catch_up=0.1)
    pacing.start(0.0)
    assert pacing.steps_due(10.0, 0) == 100          # a 10 s stall: 0.1 s of steps at most
    assert pacing.dropped == pytest.approx(9.9)
    assert pacing.steps_due(10.005, 100) == 5        # then paced again from there


@pytest.mark.parametrize("factor", [0.0, -1.0, float("nan"), float("inf")])
def test_pacing_refuses_a_factor_that_is_not_a_positive_number(factor):
    with pytest.raises(ConfigError, match="real_time_factor"):
        WallPacing(0.001, real_time_factor=factor)
