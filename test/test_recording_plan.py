"""The recording plan (space_robot_scenario/recording.py, space_robot_runtime/bag_recorder.py): a scenario's
`recording.topics` gives topics a bag rate of their own (0: not in the bag); the summary does not depend on it.

- servicer_pregrasp for 1 s with `clock` left out and `joint_states` at 10 Hz: the bag has no clock topic,
  joint_states has 11 messages (0, 0.1, ..., 0.9 s and the final instant's) against the default plan's 101 (100 Hz
  over [0, 1 s) and the final instant's), every other topic the default plan's count, and summary.json is the default
  plan's in every entry but the `topics` counts, bit for bit (the run trace still takes the 100 Hz messages).
- Bad plans are refused when the run is built, naming the field: an unknown topic, a negative rate, a rate whose
  period overflows.
"""
from __future__ import annotations

import dataclasses

import pytest
from rosbags.rosbag2 import Reader

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario
from space_robot_scenario.recording import read_recording

DURATION = 1.0


def run_with(tmp_path, name: str, topics: tuple):
    scenario = load_scenario("servicer_pregrasp")
    scenario = dataclasses.replace(scenario, recording=dataclasses.replace(scenario.recording, topics=topics))
    result = SimulationRun(scenario).run(duration=DURATION, out_dir=tmp_path / name, plots=False, progress=False)
    with Reader(result.bag) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
    return result.summary, counts


def without_counts(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in ("topics", "wall_time_s", "real_time_factor", "run")}


def test_a_plan_changes_the_bag_and_not_the_summary(tmp_path):
    full_summary, full = run_with(tmp_path, "full", ())
    summary, planned = run_with(tmp_path, "planned", (("clock", 0.0), ("joint_states", 10.0)))
    assert "clock" in full and "clock" not in planned
    assert summary["topics"]["clock"]["recorded"] == 0
    assert full["joint_states"] == 101                     # 100 Hz over [0, 1 s) and the final instant's
    assert planned["joint_states"] == 11                   # 10 Hz: 0, 0.1, ..., 0.9 s and the final instant's
    assert {t: n for t, n in planned.items() if t != "joint_states"} == \
        {t: n for t, n in full.items() if t not in ("joint_states", "clock")}
    assert without_counts(summary) == without_counts(full_summary)


@pytest.mark.parametrize("plan, field", [({"nope": 10.0}, "recording.topics.nope"),
                                         ({"clock": -1.0}, "recording.topics.clock"),
                                         ({"clock": 5e-324}, "recording.topics.clock"),
                                         ({"clock": "fast"}, "recording.topics.clock")])
def test_a_bad_plan_is_refused_naming_the_field(plan, field):
    if field.endswith("nope"):
        scenario = load_scenario("servicer_pregrasp")
        recording = read_recording(ConfigReader({"recording": {"topics": plan}}, source="test"))
        with pytest.raises(ConfigError, match=field):
            SimulationRun(dataclasses.replace(scenario, recording=recording))
    else:
        with pytest.raises(ConfigError, match=field):
            read_recording(ConfigReader({"recording": {"topics": plan}}, source="test"))
