"""Identify a captured target's mass, centre of mass and inertia from a recorded run (its rosbag2).

1. Record: the standalone runtime runs the excitation scenario config/identification/target_excitation_full_arm.yaml
   (the servicer holding the 1500 kg, 300 kg m^2 target rigidly on its hand, bus free floating), shortened here
   to 8 s and two waypoints, +-0.05 rad on every joint, and writes its bag as space-robot-sim would.
2. Fit: no external force acts and the run starts at rest, so the momentum about the world origin stays zero:
   h_O(t_k) = h_known(q, v) + X*_OF Y_h(v_F) pi = 0, linear in the target's 10 inertial parameters pi
   (seed 004 eqs. 2.9-2.12; docs/identification.md, "Captured-target inertia"). One method (bounded least
   squares), one window, from a rough prior (1000 kg, 200 kg m^2). The data are noise-free, so the estimate must
   be the model's values to the regression's round-off; docs/identification.md gives the noisy study.
Parameters in the target's base-link frame, inertia about the centre of mass; SI units.

    .venv/bin/python examples/identify_target_inertia.py [OUT_DIR]
"""
import os
import sys
from pathlib import Path

import numpy as np

from space_robot_dynamics import ConfigReader
from space_robot_identification import fit, read_identification_config
from space_robot_identification.tool.recorded_data import read_recording
from space_robot_runtime import SimulationRun
from space_robot_scenario import load_scenario

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SPACE_ROBOT_EXAMPLES_OUT", "out/examples"))
START = [0.297419, -0.565761, -0.910255, 1.743777, -0.247794, -1.160595, -0.542281]   # rad, right_j0..6
SIGNS = ([1, 1, -1, 1, 1, -1, 1], [-1, 1, 1, -1, 1, 1, -1])
WAYPOINTS = [{"time_from_start": 4.0 * (i + 1), "positions": [a + 0.05 * s for a, s in zip(START, signs)]}
             for i, signs in enumerate(SIGNS)]

scenario = load_scenario("config/identification/target_excitation_full_arm.yaml",
                         {"scenario": {"duration": 8.0, "goals.trajectory.points": WAYPOINTS}})
result = SimulationRun(scenario).run(out_dir=OUT / "identification_run", overwrite=True, plots=False, progress=False)
print(f"recorded {result.bag}")

BODY = "target/base_link"
PRIOR = {"mass": (1000.0, 100.0, 5000.0), "com_x": (0.1, -0.5, 0.5), "com_y": (0.05, -0.5, 0.5),
         "com_z": (-0.05, -0.5, 0.5), "ixx": (200.0, 10.0, 2000.0), "ixy": (20.0, -500.0, 500.0),
         "ixz": (-10.0, -500.0, 500.0), "iyy": (200.0, 10.0, 2000.0), "iyz": (15.0, -500.0, 500.0),
         "izz": (200.0, 10.0, 2000.0)}                      # start, lower, upper (kg, m, kg m^2)
config = read_identification_config(ConfigReader({
    "name": "example_target_inertia",
    "problem": {"kind": "body_momentum", "model": "config/models/servicer_target_attached.yaml", "body": BODY,
                "initial_momentum": "zero",
                "state": {"joint_states": "joint_states", "odometry": {"servicer": "base/odom"}},
                "signals": {"momentum.linear": {"weight": 1.0}, "momentum.angular": {"weight": 1.0}}},
    "parameters": {f"{BODY}.{name}": dict(zip(("start", "lower", "upper"), values)) for name, values in PRIOR.items()},
    "window": {"start": 0.0, "end": 8.0},
    "methods": ["least_squares"]}, "<example>"))

signals = read_recording(result.bag)                       # joint_states and base/odom, by signal name
problem = config.problem.bind(signals, config.space, *config.window)
estimate = fit(problem, config.space, "least_squares", config.fit_options)
truth = config.problem.known_parameters()                  # the model that made the data: the truth here
print(f"{'parameter':26s} {'start':>10s} {'estimate':>16s} {'truth':>10s}  unit")
for name, start, value in zip(config.space.names, config.space.start, estimate.theta):
    print(f"{name:26s} {start:10.3f} {value:16.9f} {truth[name].value:10.3f}  {truth[name].unit}")
true = np.array([truth[name].value for name in config.space.names])
print(f"converged = {estimate.success}  ({estimate.evaluations} evaluations, {estimate.residual_count} residuals)")
print(f"cost = {estimate.cost_start:.3e} -> {estimate.cost:.3e}  (sum of squared momentum residuals)")
print(f"mass_relative_error = {abs(estimate.theta[0] - true[0]) / true[0]:.3e}")
print(f"com_error = {np.linalg.norm(estimate.theta[1:4] - true[1:4]):.3e} m")
print(f"inertia_relative_error = {np.linalg.norm(estimate.theta[4:] - true[4:]) / np.linalg.norm(true[4:]):.3e}"
      "  (of the 6 entries ixx..izz)")
print(f"mass_sigma = {estimate.sigma[0]:.3e} kg  (Cramer-Rao, linearised at the estimate)")
