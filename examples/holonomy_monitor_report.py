"""The holonomy monitor's report on a moving servicer, before and while an external force pushes its bus.

The monitor (docs/holonomy.md) takes the state (t, q, v) at 50 Hz and reports: the momentum residual of the
servicer (sec. 1: p - p0, L - L0 over the momentum capacity, seed 004 eqs. 2.11-2.13), the rank of the momentum
constraint matrix B (sec. 2, eq. 2.32), the thesis's Y_h ranks (sec. 3, eqs. 4.7-4.16: not an integrability
test), the nonholonomy rank from the curvature F of the mechanical connection (sec. 4), the linear
integrability residual (sec. 6), the generalized Jacobian's conditioning (sec. 8) and a level OK/WARN/ERROR
(sec. 9). For 1 s the arm moves under sinusoidal torques: momentum is conserved, level OK. Then a 0.1 N force
(world x, at the bus's origin) acts for 1 s: the monitor, reset when it starts, reads its mean value back from
the momentum residual and raises WARN. SI units, world frame.

    .venv/bin/python examples/holonomy_monitor_report.py
"""
import numpy as np

from space_robot_dynamics import SimulationSettings, Simulator, build_model, initial_state_from
from space_robot_monitoring import HolonomyMonitor, load_monitor_settings

PUSH = np.array([0.1, 0.0, 0.0])                            # N, world axes

system = build_model("servicer_target")
q0, v0 = initial_state_from(system, {"target": {"position": [1.7, 0.0, 0.8]},
                                     "joint_positions": {"right_j1": -0.8, "right_j3": 1.5, "right_j5": 0.6}})
sim = Simulator(system, SimulationSettings(dt=1e-3), q0, v0)
monitor = HolonomyMonitor(system, load_monitor_settings("config/monitor.yaml"))   # robot: the servicer subtree


def run(seconds):
    """Step with sinusoidal arm torques (N m), wheels idle; the monitor every 20 steps. The last report."""
    for k in range(int(round(seconds / 1e-3))):
        tau = np.array([1.0, 2.0, 0.5, 0.5, 0.05, 0.05, 0.01]) * np.sin(2.0 * sim.state.t + np.arange(7))
        sim.step(tau)
        if k % 20 == 19:
            report = monitor.update(sim.state.t, sim.state.q, sim.state.v)
    return report


report = run(1.0)
print(f"level = {report.level}  at t = {report.t:.2f} s: {report.message}")
print(f"constraint_rank = {report.constraint_rank}  (B of eq. 2.32, scaled singular values "
      f"{report.constraint_singular_values.round(4)})")
print(f"thesis_yh_rank_linear = {report.thesis_yh_rank_linear}, angular {report.thesis_yh_rank_angular}  (Table 4.1)")
print(f"nonholonomy_rank = {report.nonholonomy_rank}  (independent bus rotations small joint loops can make)")
print(f"attitude_curvature_singular_values = {report.attitude_curvature_singular_values.round(4)}  (rad per rad^2)")
print(f"linear_integrability_residual = {report.linear_integrability_residual:.2e}  (linear momentum is integrable)")
print(f"linear_residual_fraction = {report.linear_residual_fraction:.2e}  (|p - p0| of the momentum capacity)")
print(f"angular_residual_fraction = {report.angular_residual_fraction:.2e}  (|L - L0| of the momentum capacity)")
print(f"jstar_inverse_condition = {report.jstar_inverse_condition:.4f}  (sigma_min / sigma_max of the scaled J*)")
F = report.curvature_tensor()                              # (7+3 joints, same, 6): F[i, j] = -F[j, i]
print(f"curvature_F01 = {np.linalg.norm(F[0, 1, 3:]):.4e} rad/rad^2  (bus rotation per unit loop area, "
      f"{report.shape_joints[0]} then {report.shape_joints[1]}, bus frame)")

sim.set_external_wrench("base_link", PUSH)                 # world axes, through the bus's origin
monitor.reset()                                            # the momentum reference is retaken at the next update
report = run(1.0)
print(f"pushed_level = {report.level}: {report.message}")
print(f"pushed_linear_residual_fraction = {report.linear_residual_fraction:.3e}")
print(f"mean_external_force = {report.mean_external_force[0]:.6f} N along world x  (applied {PUSH[0]} N; "
      f"all {report.mean_external_force.round(6)})")
print(f"mean_external_force_error = {np.linalg.norm(report.mean_external_force - PUSH):.3e} N")
