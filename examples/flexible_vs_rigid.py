"""Seed 000's planar two-link space manipulator, rigid and with a flexible last link, under the same torques.

Seed 000 (Klak & Jarzebowska 2020) sec. 4: a 4 kg free-floating base and two 1 m, 1 kg links, stretched along x
and at rest, driven open loop by tau = 0.5 sin(2 pi t / 1 s) N m on both joints for 5 s. The flexible variant
(config/models/planar_two_link_flexible.yaml) gives link 2 one assumed mode per transverse direction, 5 Hz,
damping ratio 0.03 (seed 000 eqs. 11-17; docs/flexibility.md secs. 3 and 8). The modal coordinate is the tip
deflection in m (mode shapes are 1 at the tip, docs/flexibility.md eq. 2). We step both models side by side
(RK4, 1 ms, each torque taken at the step's middle as the scenario player does) and print the largest tip
deflection and the largest distance between the two end effectors (world frame). docs/flexibility.md sec. 8
gives 1.72 mm and 0.61 mm; the paper says the difference "reaches to over 1.7 mm" (sec. 8 explains why).

    .venv/bin/python examples/flexible_vs_rigid.py [OUT_DIR]
"""
import os
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
from matplotlib.figure import Figure

from space_robot_dynamics import SimulationSettings, Simulator, build_model

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPACE_ROBOT_EXAMPLES_OUT", "out/examples"))
DT = 1e-3                                               # s: the 5 Hz mode at omega dt = 0.03

models = {"rigid": build_model("planar_two_link"), "flexible": build_model("planar_two_link_flexible")}
sims = {name: Simulator(system, SimulationSettings(dt=DT)) for name, system in models.items()}   # stretched, at rest
data = {name: system.model.createData() for name, system in models.items()}
print("flexible coordinates:", models["flexible"].flexibility.names)


def end_effector(name):
    """Position of the frame end_effector (tip of link 2) in the world frame, m."""
    system, q = models[name], sims[name].state.q
    pin.framesForwardKinematics(system.model, data[name], q)
    return data[name].oMf[system.frame_id("end_effector")].translation.copy()


t, tip, difference, joint_difference = [], [], [], []
for k in range(5000):                                   # 5 s
    tau = 0.5 * np.sin(2 * np.pi * (k + 0.5) * DT / 1.0) * np.ones(2)     # N m, arm_joint_1 and arm_joint_2
    for sim in sims.values():
        sim.step(tau)
    modes = sims["flexible"].flexible_state().position  # link_2/bending_y_1, link_2/bending_z_1 (m)
    t.append(sims["rigid"].state.t)
    tip.append(modes.copy())
    difference.append(np.linalg.norm(end_effector("flexible") - end_effector("rigid")))
    joint_difference.append(max(abs(models["flexible"].joint_angle(sims["flexible"].state.q, j)
                                    - models["rigid"].joint_angle(sims["rigid"].state.q, j))
                                for j in ("arm_joint_1", "arm_joint_2")))

print(f"step_backend = {sims['flexible'].step_backend}")
tip = np.array(tip)
print(f"max_tip_deflection = {np.hypot(tip[:, 0], tip[:, 1]).max():.4e} m  (|(w_y(L), w_z(L))|, link 2's beam frame)")
print(f"max_end_effector_difference = {max(difference):.4e} m  (|p_flexible - p_rigid|, world frame)")
print(f"max_joint_angle_difference = {max(joint_difference):.4e} rad")
print(f"final_end_effector_difference = {difference[-1]:.4e} m")

fig = Figure(figsize=(8, 5))
axes = fig.subplots(2, 1, sharex=True)
axes[0].plot(t, 1e3 * tip[:, 0], label="in plane (bending_y)")
axes[0].plot(t, 1e3 * tip[:, 1], label="out of plane (bending_z)")
axes[0].set_ylabel("link 2 tip deflection [mm]")
axes[0].legend(loc="lower right")
axes[0].set_title("Seed 000 two-link arm: flexible link 2 vs rigid, same open-loop torques")
axes[1].plot(t, 1e3 * np.array(difference))
axes[1].set_ylabel("|EE flexible - EE rigid| [mm]")
axes[1].set_xlabel("t [s]")
OUT.mkdir(parents=True, exist_ok=True)
fig.savefig(OUT / "flexible_vs_rigid.png", dpi=100)
print(f"saved {OUT / 'flexible_vs_rigid.png'}")
