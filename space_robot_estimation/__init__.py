"""space_robot_estimation: the estimators of a GNC loop, as ROS-free cores (docs/sensing.md).

The bus attitude and gyro bias from a gyro and a star tracker: a multiplicative extended Kalman filter
(attitude_filter.py); the target's relative pose and twist from the relative pose sensor, with the torque-free
rigid body as its model (target_filter.py), the arm's kinematics once the grasp holds it (held_target.py); joint
angles and rates from encoders (joint_rate_tracker.py); the bus position, which nothing measures, from the
conserved momentum (bus_translation.py); the model file's `estimators` section (estimators_config.py). The
two filters take measurements that arrive late (stamped at their sampling
time) by going back to their stamp and propagating again. Consistency figures (NEES, NIS) are the estimators'
own outputs (consistency.py). Imports point to space_robot_dynamics only (its errors and config reader).
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    "AttitudeFilter": ".attitude_filter", "AttitudeFilterConfig": ".attitude_filter",
    "read_attitude_filter": ".attitude_filter", "AttitudeEstimate": ".attitude_filter",
    "TargetFilter": ".target_filter", "TargetFilterConfig": ".target_filter", "TargetEstimate": ".target_filter",
    "read_target_filter": ".target_filter", "pose_measurement_in_world": ".target_filter",
    "AlphaBetaGains": ".joint_rate_tracker", "JointRateTracker": ".joint_rate_tracker",
    "nees": ".consistency", "chi_square_interval": ".consistency",
    "EstimatorsConfig": ".estimators_config", "read_estimators": ".estimators_config",
    "BusTranslation": ".bus_translation", "HeldTarget": ".held_target",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
