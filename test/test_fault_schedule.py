"""The `faults:` schedule (space_robot_scenario/faults.py): read, checked against the model, and queried."""
import re

import numpy as np
import pytest

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_scenario.faults import KINDS, read_faults

WHEELS = ("rw_x_joint", "rw_y_joint", "rw_z_joint")
JOINTS = tuple(f"right_j{i}" for i in range(7))
SENSORS = ("gyro", "star_tracker", "target_pose")
EVERY_KIND = [
    {"time": 30.0, "component": "rw_z_joint", "kind": "wheel_stuck", "torque": 0.5},
    {"time": 12.0, "component": "rw_x_joint", "kind": "wheel_lost"},
    {"time": 20.0, "component": "rw_y_joint", "kind": "wheel_torque_halved"},
    {"time": 60.0, "component": "right_j3", "kind": "joint_limp"},
    {"time": 5.0, "component": "gyro", "kind": "bias_jump", "value": [1e-4, 0.0, 0.0]},
    {"time": 40.0, "component": "star_tracker", "kind": "outage", "duration": 60.0},
    {"time": 50.0, "component": "target_pose", "kind": "dropout", "duration": 3.0},
    {"time": 70.0, "component": "target_pose", "kind": "dropout", "duration": 1.0},
]


def schedule(items, duration=120.0, sensors=SENSORS):
    return read_faults(ConfigReader({"faults": items}, "s.yaml"), duration, WHEELS, JOINTS, sensors)


def test_every_kind_is_read_and_the_schedule_is_in_time_order():
    faults = schedule(EVERY_KIND)
    assert {f.kind for f in faults.faults} == set(KINDS)
    assert [f.time for f in faults.faults] == sorted(item["time"] for item in EVERY_KIND)
    np.testing.assert_array_equal(faults.of_kind("bias_jump")[0].value, [1e-4, 0.0, 0.0])


def test_due_gives_each_fault_once_at_the_tick_it_happens():
    faults = schedule(EVERY_KIND)
    ticks = np.arange(0, 120001) * 1e-3                  # 1 kHz
    seen = []
    for before, now in zip(ticks[:-1], ticks[1:]):
        seen += [(f.kind, round(now, 9)) for f in faults.due(before, now)]
    assert sorted(seen, key=lambda s: s[1]) == [(f.kind, f.time) for f in faults.faults]


def test_windows_of_a_sensor():
    faults = schedule(EVERY_KIND)
    assert faults.windows("target_pose").windows == ((50.0, 53.0), (70.0, 71.0))
    assert faults.windows("star_tracker").contains(99.9) and not faults.windows("star_tracker").contains(100.0)
    assert faults.windows("gyro").windows == ()


def test_no_faults_section_or_an_empty_one_is_no_fault():
    assert read_faults(ConfigReader({}, "s.yaml"), 10.0, WHEELS, JOINTS, SENSORS).faults == ()
    assert schedule([]).faults == ()


@pytest.mark.parametrize("item, words", [
    ({"time": 1.0, "component": "rw_x_joint", "kind": "wheel_exploded"}, "faults[0].kind: must be one of"),
    ({"time": 1.0, "component": "right_j3", "kind": "wheel_lost"},
     "faults[0].component: a wheel_lost strikes one of the model's reaction wheels (rw_x_joint, "),
    ({"time": 1.0, "component": "rw_x_joint", "kind": "joint_limp"},
     "a joint_limp strikes one of the model's arm joints (right_j0, "),
    ({"time": 1.0, "component": "star_tracker", "kind": "bias_jump", "value": [0, 0, 0]},
     "faults[0].component: a bias_jump strikes the gyro, got 'star_tracker'"),
    ({"time": 1.0, "component": "gyro", "kind": "bias_jump"}, "faults[0].value: is required"),
    ({"time": 1.0, "component": "gyro", "kind": "bias_jump", "value": [0.0, float("nan"), 0.0]},
     "faults[0].value[1]: must be finite"),
    ({"time": 1.0, "component": "star_tracker", "kind": "outage"}, "faults[0].duration: is required"),
    ({"time": 1.0, "component": "star_tracker", "kind": "outage", "duration": 0.0}, "faults[0].duration: must be > 0"),
    ({"time": 500.0, "component": "rw_x_joint", "kind": "wheel_lost"}, "faults[0].time: 500 s is not within the run"),
    ({"time": -1.0, "component": "rw_x_joint", "kind": "wheel_lost"}, "faults[0].time: must be >= 0"),
    ({"time": 1.0, "component": "rw_x_joint", "kind": "wheel_lost", "duration": 2.0},
     "faults[0].duration: unknown key"),
    ({"time": 1.0, "component": "rw_x_joint", "kind": "wheel_stuck"}, "faults[0].torque: is required"),
    ({"time": 1.0, "component": "rw_x_joint", "kind": "wheel_stuck", "torque": -0.5},
     "faults[0].torque: must be > 0"),
    ({"time": 1.0, "component": "rw_x_joint", "kind": "wheel_lost", "torque": 0.5}, "faults[0].torque: unknown key"),
])
def test_a_bad_fault_is_refused_naming_the_entry_and_field(item, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        schedule([item])


def test_a_sensor_fault_needs_the_sensor():
    with pytest.raises(ConfigError, match="faults.0..component: the model declares no star_tracker"):
        schedule([{"time": 1.0, "component": "star_tracker", "kind": "outage", "duration": 1.0}], sensors=("gyro",))
