"""A free-floating servicer and target: the system's momentum stays constant while the arm moves.

No external force or torque acts (zero gravity, no thrusters), so the total linear momentum p and the angular
momentum L_G about the system's centre of mass are constant, h = A_G(q) v (seed 004 eqs. 2.11-2.13; seed 000
eqs. 7-8). The arm gets sinusoidal torques (plus a soft PD about its start pose against wind-up), the wheels none;
both spacecraft drift, the target tumbles. 10 s of RK4 at 1 ms: p(t) - p(0) and L_G(t) - L_G(0) stay ~1e-13 of the
largest momentum a single body carries (test/test_conservation.py's scale): round-off and truncation. World frame.

    .venv/bin/python examples/free_floating_momentum.py [OUT_DIR]
"""
import os
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
from matplotlib.figure import Figure

from space_robot_dynamics import SimulationSettings, Simulator, build_model, initial_state_from

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPACE_ROBOT_EXAMPLES_OUT", "out/examples"))
HOME = {"right_j1": -0.8, "right_j3": 1.5, "right_j5": 0.6}                 # rad, the others 0
AMPLITUDE = np.array([2.0, 3.0, 1.0, 1.0, 0.1, 0.1, 0.02])       # N m, right_j0..right_j6
OMEGA = np.array([1.1, 1.7, 2.3, 2.9, 3.7, 4.3, 5.3])           # rad/s, incommensurate
KP, KD = 4.0 * AMPLITUDE, 1.0 * AMPLITUDE                        # N m/rad, N m s/rad

system = build_model("servicer_target")                          # 500 kg bus + 3 wheels + Sawyer, 1500 kg target
q0, v0 = initial_state_from(system, {                            # twists in each base-link frame
    "servicer": {"linear_velocity": [0.02, 0.0, -0.01], "angular_velocity": [0.002, -0.001, 0.003]},
    "target": {"position": [3, 0.2, 0.5], "linear_velocity": [0.01, -0.02, 0], "angular_velocity": [0.05, -0.03, 0.02]},
    "joint_positions": HOME})
sim = Simulator(system, SimulationSettings(dt=1e-3, integrator="rk4"), q0, v0)
arm_q = [system.q_slice(name).start for name in system.arm_joints]
home = q0[arm_q]


def largest_body_momentum(model, data, q, v):
    """max over bodies of |p_i| and of |L_i| about the system's centre of mass (world frame)."""
    pin.forwardKinematics(model, data, q, v)
    com = pin.centerOfMass(model, data, q)
    p_max = l_max = 0.0
    for j in range(1, model.njoints):
        h = data.oMi[j].act(model.inertias[j] * data.v[j])     # body j's momentum about the world origin
        p_max = max(p_max, np.linalg.norm(h.linear))
        l_max = max(l_max, np.linalg.norm(h.angular - np.cross(com, h.linear)))
    return p_max, l_max


start, data = sim.observe().momentum, system.model.createData()
t, dp, dl, p_scale, l_scale = [], [], [], 0.0, 0.0
for k in range(10000):                                           # 10 s
    s = sim.state
    tau = AMPLITUDE * np.sin(OMEGA * s.t) - KP * (s.q[arm_q] - home) - KD * s.v[system.arm_v]
    s = sim.step(tau)                                            # wheel torques: None = zero (idle wheels)
    if k % 10 == 9:
        m = sim.observe().momentum
        t.append(s.t)
        dp.append(m.linear - start.linear)
        dl.append(m.angular - start.angular)
        p_scale, l_scale = np.maximum((p_scale, l_scale), largest_body_momentum(system.model, data, s.q, s.v))

print(f"initial_momentum = {np.linalg.norm(start.linear):.4f} kg m/s, {np.linalg.norm(start.angular):.4f} kg m^2/s"
      "  (|p|, |L_G| about the system CoM, world frame)")
print(f"largest_body_momentum = {p_scale:.4f} kg m/s, {l_scale:.4f} kg m^2/s  (|p_i|, |L_i| about the CoM)")
print(f"max_linear_momentum_drift = {np.abs(dp).max():.3e} kg m/s  (max |p(t) - p(0)| component, world frame)")
print(f"max_angular_momentum_drift = {np.abs(dl).max():.3e} kg m^2/s  (max |L_G(t) - L_G(0)| component)")
print(f"relative_linear_momentum_drift = {np.abs(dp).max() / p_scale:.3e}  (of the largest body momentum)")
print(f"relative_angular_momentum_drift = {np.abs(dl).max() / l_scale:.3e}  (of the largest body momentum)")

fig = Figure(figsize=(8, 5))
axes = fig.subplots(2, 1, sharex=True)
for ax, values, label in ((axes[0], dp, "p - p(0) [kg m/s]"), (axes[1], dl, "L_G - L_G(0) [kg m^2/s]")):
    ax.plot(t, values, label=["x", "y", "z"])
    ax.set_ylabel(label)
    ax.legend(loc="upper right")
axes[0].set_title("Momentum drift of servicer + target, world frame (RK4, 1 ms)")
axes[1].set_xlabel("t [s]")
OUT.mkdir(parents=True, exist_ok=True)
fig.savefig(OUT / "free_floating_momentum.png", dpi=100)
print(f"saved {OUT / 'free_floating_momentum.png'}")
