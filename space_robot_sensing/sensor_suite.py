"""The `sensors:` section of a model file: which sensors the servicer carries, and the seed of their noise.

    sensors:
      seed: 0                 # integer >= 0; each sensor's stream: random_streams.sensor_stream(seed, its name)
      gyro: {...}             # gyro.py
      star_tracker: {...}     # star_tracker.py
      joint_encoders: {...}   # joint_encoders.py
      wheel_tachometers: {...}
      wrist_force_torque: {...}   # force_torque_sensor.py
      target_pose: {...}      # relative_pose_sensor.py

Every sensor is optional; a model without the section has none (the truth is read, as before). Unknown keys are
refused, naming the field.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from space_robot_dynamics.config_reader import ConfigReader

from .random_streams import sensor_stream

# the sensors, in the order they are read and built (their modules are imported when a model declares one: a
# scenario without sensors does not load SciPy's rotations for them)
SENSOR_NAMES = ("gyro", "star_tracker", "joint_encoders", "wheel_tachometers", "wrist_force_torque", "target_pose")


def _kinds() -> dict:
    """name in YAML -> (config reader, sensor class)."""
    from . import force_torque_sensor, gyro, joint_encoders, relative_pose_sensor, star_tracker

    kinds = {
        gyro.NAME: (gyro.read_gyro, gyro.Gyro),
        star_tracker.NAME: (star_tracker.read_star_tracker, star_tracker.StarTracker),
        joint_encoders.ENCODERS: (joint_encoders.read_encoders, joint_encoders.QuantisedChannels),
        joint_encoders.TACHOMETERS: (joint_encoders.read_tachometers, joint_encoders.QuantisedChannels),
        force_torque_sensor.NAME: (force_torque_sensor.read_force_torque, force_torque_sensor.ForceTorqueSensor),
        relative_pose_sensor.NAME: (relative_pose_sensor.read_relative_pose,
                                    relative_pose_sensor.RelativePoseSensor),
    }
    assert tuple(kinds) == SENSOR_NAMES
    return kinds


@dataclass(frozen=True)
class SensorSuiteConfig:
    seed: int = 0
    sensors: dict = field(default_factory=dict)        # name -> its config, in SENSOR_NAMES order

    def build(self) -> dict:
        """name -> a fresh sensor (its stream at its start): two builds give the same numbers."""
        kinds = _kinds()
        return {name: kinds[name][1](config, sensor_stream(self.seed, name)) for name, config in self.sensors.items()}


def read_sensor_suite(reader: ConfigReader) -> SensorSuiteConfig:
    """`reader`: the `sensors` mapping."""
    seed = reader.integer("seed", 0, minimum=0)
    present = [name for name in SENSOR_NAMES if reader.has(name)]
    kinds = _kinds() if present else {}
    sensors = {name: kinds[name][0](reader.sub(name)) for name in present}
    reader.reject_unknown()
    return SensorSuiteConfig(seed, sensors)
