"""The servicer's controller in the loop by hand, with and without its reaction wheels (a --set override).

docs/python_api.md sec. 4: the same loop the runtime runs, without messages: ServicerController.update at every
1 ms physics step, Simulator.step with its torques. The arm follows the default scenario's 6 s trajectory from the
stowed pose to the pre-grasp pose (config/scenarios/servicer_pregrasp.yaml) by free-floating computed torque; the
wheels hold the bus attitude with the feed-forward of the arm's reaction (docs/controllers.md; seed 004 sec. 5.5).
The second run loads the scenario with the override the CLI takes as
`--set controller.controller.modes=[joint_tracking]` (wheels off): momentum conservation then turns the bus
by what the arm's motion gives it (the scenario says ~6e-3 rad, against its 1e-3 rad requirement). Bus attitude:
the rotation angle of base_link from its initial orientation (world frame). SI units.

    .venv/bin/python examples/controller_by_hand.py [OUT_DIR]
"""
import os
import sys
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from space_robot_control import ServicerController, TrajectoryPoint
from space_robot_dynamics import Simulator, build_model
from space_robot_scenario import load_scenario, parse_overrides

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPACE_ROBOT_EXAMPLES_OUT", "out/examples"))
GOAL = [0.297419, -0.565761, -0.910255, 1.743777, -0.247794, -1.160595, -0.542281]   # rad, arm_joints order


def bus_angle(sim):
    """Rotation angle (rad) of the bus from the identity, its initial orientation: 2 atan2(|xyz|, |w|)."""
    x, y, z, w = sim.observe().bases["servicer"].orientation_xyzw
    return 2.0 * np.arctan2(np.linalg.norm([x, y, z]), abs(w))


runs = {}
for label, overrides in (("wheels on", []), ("wheels off", ["controller.controller.modes=[joint_tracking]"])):
    scenario = load_scenario("servicer_pregrasp", parse_overrides(overrides))
    system = build_model(scenario.model)                   # the scenario's model file, as a SystemModel
    q0, v0 = scenario.initial_state(system)
    sim = Simulator(system, scenario.simulation, q0, v0, orbit=scenario.orbit)
    controller = ServicerController(system, scenario.controller)
    controller.update(0.0, q0, v0)                         # holds the arm and the bus attitude where they are
    controller.set_trajectory(system.arm_joints, [TrajectoryPoint(GOAL, None, None, 6.0)])   # reach it in 6 s
    t, angle = [], []
    for k in range(6500):                                  # 6.5 s
        s = sim.state
        out = controller.update(s.t, s.q, s.v)
        sim.step(out.arm_torque, out.wheel_torque)
        if k % 50 == 49:
            t.append(sim.state.t)
            angle.append(bus_angle(sim))
    runs[label] = (t, angle)
    key = label.replace(" ", "_")
    print(f"{key}_max_bus_attitude_error = {max(angle):.3e} rad  (from the initial attitude, world frame)")
    print(f"{key}_final_tracking_error = {out.tracking_error_max:.3e} rad  (max over the 7 arm joints)")
    print(f"{key}_angular_momentum = {np.linalg.norm(sim.observe().momentum.angular):.3e} kg m^2/s  (|L_G|, "
          "starts at rest)")

fig = Figure(figsize=(8, 4))
ax = fig.subplots()
for label, (t, angle) in runs.items():
    ax.semilogy(t, angle, label=label)
ax.axhline(1e-3, color="k", linestyle=":", label="requirement 1e-3 rad")
ax.set_xlabel("t [s]")
ax.set_ylabel("bus attitude error [rad]")
ax.set_title("Servicer bus attitude while the arm moves to the pre-grasp pose")
ax.legend()
OUT.mkdir(parents=True, exist_ok=True)
fig.savefig(OUT / "controller_by_hand.png", dpi=100)
print(f"saved {OUT / 'controller_by_hand.png'}")
