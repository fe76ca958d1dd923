"""space_robot_monitoring: the holonomy monitor of issue 4 (ROS-free core).

Seed 004 (Al-Shibli 2005) momentum constraint matrices and its Y_h criterion, reproduced and explained
(momentum_matrices.py, thesis_criterion.py); a sound integrability test from the curvature of the
mechanical connection (mechanical_connection.py) and a general Frobenius check (frobenius.py); the
generalized Jacobian (generalized_jacobian.py); and HolonomyMonitor (holonomy_monitor.py), configured by
config/monitor.yaml. Imports point to space_robot_dynamics only. docs/holonomy.md explains every figure.
"""
from .holonomy_monitor import ERROR, OK, WARN, HolonomyMonitor, MonitorReport
from .monitor_settings import MonitorSettings, load_monitor_settings, read_monitor_settings

__all__ = ["ERROR", "OK", "WARN", "HolonomyMonitor", "MonitorReport", "MonitorSettings", "load_monitor_settings",
           "read_monitor_settings"]
