"""A scenario's `faults:` section: what fails, when, and how.

    faults:
      - {time: 12.0, component: rw_x_joint, kind: wheel_lost}            # the wheel gives no torque from then on
      - {time: 20.0, component: rw_y_joint, kind: wheel_torque_halved}   # its torque limit halves
      - {time: 30.0, component: rw_z_joint, kind: wheel_stuck, torque: 0.5}   # seized: braked to the bus (N m)
      - {time: 60.0, component: right_j3, kind: joint_limp}              # the arm joint's motor gives no torque
      - {time: 5.0, component: gyro, kind: bias_jump, value: [1.0e-4, 0.0, 0.0]}   # rad/s, sensor frame
      - {time: 40.0, component: star_tracker, kind: outage, duration: 60.0}        # s
      - {time: 50.0, component: target_pose, kind: dropout, duration: 3.0}          # s

Times are simulated seconds from the start; a fault is permanent unless it has a `duration` (outages and
dropouts, which must have one). Each entry is checked at load: a known kind, a component of the kind's sort
that the model has (a reaction wheel, an arm joint, a declared sensor), the kind's own fields, a time within the
run. `FaultSchedule.due(after, upto)` gives the faults that happen in (after, upto], for the diagnostics that
report each at the moment it happens; `windows(sensor)` the time windows of a sensor's outages or dropouts;
`actuator_faults()` the drives' faults, which the dynamics node strikes (SIMULATOR_KINDS: as the simulator fails
the drive, space_robot_dynamics/simulation/actuator_faults.py). The sensors node applies the sensors' faults.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_sensing.time_windows import TimeWindows

WHEEL, JOINT, SENSOR = "reaction wheel", "arm joint", "sensor"
# kind -> (the sort of component it strikes, the sensor it needs when that sort is SENSOR, what it does)
KINDS = {
    "wheel_lost": (WHEEL, None, "the wheel gives no torque from then on (its drive failed)"),
    "wheel_torque_halved": (WHEEL, None, "the wheel's torque limit is half the model's from then on"),
    "wheel_stuck": (WHEEL, None, "the wheel seizes: its bearing's friction (`torque` N m) brakes it to the bus's "
                                 "rate and it turns with the bus from then on"),
    "joint_limp": (JOINT, None, "the arm joint's motor gives no torque from then on"),
    "bias_jump": (SENSOR, "gyro", "the gyro's bias jumps by `value` (rad/s, sensor frame)"),
    "outage": (SENSOR, "star_tracker", "no star tracker solution for `duration` s"),
    "dropout": (SENSOR, "target_pose", "no target pose measurement for `duration` s"),
}
_WINDOWED = ("outage", "dropout")
# an actuator fault as the simulator fails the drive (space_robot_dynamics/simulation/actuator_faults.py)
SIMULATOR_KINDS = {"wheel_lost": "lost", "joint_limp": "lost", "wheel_torque_halved": "halved",
                   "wheel_stuck": "stuck"}
ACTUATOR_KINDS = tuple(kind for kind, (sort, _sensor, _what) in KINDS.items() if sort != SENSOR)
SENSOR_KINDS = tuple(kind for kind, (sort, _sensor, _what) in KINDS.items() if sort == SENSOR)


@dataclass(frozen=True)
class Fault:
    time: float                       # s
    component: str
    kind: str
    value: np.ndarray | None = None   # bias_jump: rad/s
    duration: float | None = None     # outage, dropout: s
    field: str = ""                   # where it was declared (faults[i])
    torque: float | None = None       # wheel_stuck: N m, the seized bearing's friction

    @property
    def description(self) -> str:
        return f"{self.kind} of {self.component} at t = {self.time:g} s: {KINDS[self.kind][2]}"


@dataclass(frozen=True)
class FaultSchedule:
    faults: tuple[Fault, ...] = ()

    def due(self, after: float, upto: float) -> list[Fault]:
        """The faults that happen in (after, upto], in time order (a fault at t = 0 is due in (-inf, 0])."""
        return [f for f in self.faults if after < f.time <= upto]

    def windows(self, sensor: str) -> TimeWindows:
        """The [start, end) windows of `sensor`'s outages or dropouts."""
        windows = TimeWindows()
        for f in self.faults:
            if f.component == sensor and f.kind in _WINDOWED:
                windows = windows.added(f.time, f.time + f.duration)
        return windows

    def of_kind(self, *kinds: str) -> list[Fault]:
        return [f for f in self.faults if f.kind in kinds]

    def actuator_faults(self) -> list[Fault]:
        """The faults of the drives (the dynamics node strikes them), in time order."""
        return self.of_kind(*ACTUATOR_KINDS)


def read_faults(reader: ConfigReader, duration: float, wheels: tuple[str, ...], joints: tuple[str, ...],
                sensors: tuple[str, ...]) -> FaultSchedule:
    """The `faults` list of a scenario (absent: none), checked against the run's `duration` (s), the model's
    reaction wheels and arm joints, and the sensors it declares."""
    if not reader.has("faults"):
        return FaultSchedule()
    items = reader.raw("faults")
    if items is None or items == []:
        return FaultSchedule()
    faults = [_read_fault(sub, duration, {WHEEL: wheels, JOINT: joints, SENSOR: sensors})
              for sub in reader.sub_list("faults")]
    return FaultSchedule(tuple(sorted(faults, key=lambda f: f.time)))


def _read_fault(sub: ConfigReader, duration: float, components: dict) -> Fault:
    kind = sub.string("kind", choices=KINDS)
    sort, sensor, _what = KINDS[kind]
    time = sub.number("time", minimum=0.0)
    if time >= duration:
        raise sub.error("time", f"{time:g} s is not within the run (duration {duration:g} s): the fault would never "
                                "happen")
    component = sub.string("component")
    if sort == SENSOR:
        if component != sensor:
            raise sub.error("component", f"a {kind} strikes the {sensor}, got {component!r}")
        if sensor not in components[SENSOR]:
            raise sub.error("component", f"the model declares no {sensor} (its sensors: "
                                         f"{', '.join(components[SENSOR]) or 'none'})")
    elif component not in components[sort]:
        raise sub.error("component", f"a {kind} strikes one of the model's {sort}s "
                                     f"({', '.join(components[sort]) or 'it has none'}), got {component!r}")
    value = sub.vector("value", 3) if kind == "bias_jump" else None
    fault_duration = sub.number("duration", exclusive_minimum=0.0) if kind in _WINDOWED else None
    torque = sub.number("torque", exclusive_minimum=0.0) if kind == "wheel_stuck" else None
    sub.reject_unknown()
    return Fault(time, component, kind, value, fault_duration, sub.path, torque)
