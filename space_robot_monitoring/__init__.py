"""space_robot_monitoring: the holonomy monitor (ROS-free core).

Seed 004 (Al-Shibli 2005) momentum constraint matrices and its Y_h criterion, reproduced and explained
(momentum_matrices.py, yh_criterion.py); a sound integrability test from the curvature of the
mechanical connection (mechanical_connection.py) and a general Frobenius check (frobenius.py); the
generalized Jacobian from the connection's fields and its conditioning figures (space_robot_control's
generalized_jacobian.py, re-exported here); and HolonomyMonitor (holonomy_monitor.py), configured by
config/monitor.yaml. Imports point to space_robot_dynamics and space_robot_control only. docs/holonomy.md
explains every figure. The public names below are importable from the package itself, each imported on first use
(space_robot_dynamics.lazy_exports).
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    # the monitor
    "HolonomyMonitor": ".holonomy_monitor", "MonitorReport": ".holonomy_monitor",
    "OK": ".holonomy_monitor", "WARN": ".holonomy_monitor", "ERROR": ".holonomy_monitor",
    "MonitorSettings": ".monitor_settings", "TargetSettings": ".monitor_settings",
    "load_monitor_settings": ".monitor_settings", "read_monitor_settings": ".monitor_settings",
    # its parts
    "SubtreePartition": ".system_partition", "subtree_partition": ".system_partition",
    "CentroidalMomentum": ".momentum_matrices", "ThesisMomentumModel": ".momentum_matrices",
    "ThesisMomentumMatrices": ".momentum_matrices", "momentum_shift": ".momentum_matrices",
    "thesis_criterion": ".yh_criterion", "YhResult": ".yh_criterion",
    "MechanicalConnection": ".mechanical_connection", "ConnectionCurvature": ".mechanical_connection",
    "PairCurvature": ".mechanical_connection", "Fibre": ".mechanical_connection",
    "CurvatureFigures": ".mechanical_connection", "CurvatureFigureMaker": ".mechanical_connection",
    "curvature_figures": ".mechanical_connection",
    "WeldConstraint": ".contact_constraint", "MomentumAndWeld": ".contact_constraint",
    "ConstraintStack": ".constraint_stack",
    "FrobeniusCheck": ".frobenius", "involutivity_check": ".frobenius",
    "generalized_jacobian": "space_robot_control.generalized_jacobian",
    "conditioning": "space_robot_control.generalized_jacobian",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
