"""space_robot_sensing: the sensors a GNC loop reads, as ROS-free models (docs/sensing.md).

Each sensor turns the simulator's true state into what the flight hardware would report: a gyro on the bus
(gyro.py), a star tracker (star_tracker.py), joint encoders and wheel tachometers (joint_encoders.py), a wrist
force/torque sensor (force_torque_sensor.py) and the relative pose sensor of the target, the output of a camera or
lidar pose estimator (relative_pose_sensor.py). Every sensor draws its noise from its own stream, seeded by the
suite's seed and the sensor's name (random_streams.py): the same configuration gives the same numbers bit for
bit, and adding a sensor does not change another's noise. A measurement carries the time it was taken; one with
latency is handed out later (delay_line.py). Declared in YAML, validated at load (sensor_suite.py). Imports point
to space_robot_dynamics only (its config reader and errors).
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    "SensorSuiteConfig": ".sensor_suite", "read_sensor_suite": ".sensor_suite", "SENSOR_NAMES": ".sensor_suite",
    "Gyro": ".gyro", "GyroConfig": ".gyro",
    "StarTracker": ".star_tracker", "AttitudeSolution": ".star_tracker", "covariance_in_world": ".star_tracker",
    "QuantisedChannels": ".joint_encoders",
    "ForceTorqueSensor": ".force_torque_sensor", "wrench_in_sensor_frame": ".force_torque_sensor",
    "RelativePoseSensor": ".relative_pose_sensor", "PoseMeasurement": ".relative_pose_sensor",
    "pose_in_sensor": ".relative_pose_sensor",
    "DelayLine": ".delay_line", "Stamped": ".delay_line", "sensor_stream": ".random_streams",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
