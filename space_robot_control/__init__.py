"""ROS-free control core of space_robot: trajectory following, computed torque on the free-floating
system, reaction-wheel attitude control, and the servicer controller that combines them; seed 004's generalized
Jacobian and Cartesian approach, hybrid force/motion and adaptive inverse dynamics (docs/controllers.md). The
seed 004 ch. 6 and 7 studies and their welded-contact plant are in thesis_studies/: the oracle of the controller's
force_motion mode, not product code.

Nothing here imports rclpy; the node glue imports from here, never the reverse. This package imports
from space_robot_dynamics (the model), never the reverse. The public names below are importable from the
package itself, each imported on first use (space_robot_dynamics.lazy_exports).
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    "ServicerController": ".servicer_controller", "ControlOutput": ".servicer_controller",
    "ControllerConfig": ".controller_config", "load_controller_config": ".controller_config",
    "read_controller_config": ".controller_config", "MODES": ".controller_config",
    "JointTrajectoryFollower": ".joint_trajectory", "TrajectoryPoint": ".joint_trajectory",
    "JointLimits": ".joint_trajectory", "TrajectoryReport": ".joint_trajectory", "Reference": ".joint_trajectory",
    "FreeFloatingComputedTorque": ".computed_torque", "ReducedDynamics": ".computed_torque",
    "ComputedTorqueStep": ".computed_torque",
    "AttitudeController": ".attitude_control", "AttitudeGains": ".attitude_control",
    "AttitudeCommand": ".attitude_control", "quaternion_error": ".attitude_control",
    "wheel_spin_axes": ".attitude_control",
    # seed 004 ch. 5-7 (docs/controllers.md)
    "GeneralizedJacobian": ".generalized_jacobian", "damped_pseudo_inverse": ".generalized_jacobian",
    "CartesianApproachController": ".cartesian_approach", "CartesianApproachSettings": ".cartesian_approach",
    "HybridForceMotionLaw": ".hybrid_force_motion", "HybridGains": ".hybrid_force_motion",
    "ContactRows": ".hybrid_force_motion", "ForceMotionStudy": ".thesis_studies.force_motion_study",
    "read_force_motion_settings": ".thesis_studies.force_motion_study", "EstimatedModel": ".adaptive_inverse_dynamics",
    "AdaptationLaw": ".adaptive_inverse_dynamics", "AdaptiveStudy": ".thesis_studies.adaptive_study",
    "read_adaptive_settings": ".thesis_studies.adaptive_study",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
