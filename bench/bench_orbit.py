"""The physics step in orbit (docs/orbit.md) as a ratio to the same step in free space, measured in one run
(goal: at most 1.1x).

Model config/models/servicer_target.yaml (nv = 22, 12 massive bodies) from capture.yaml's initial state (target
tumbling), the same arm and wheel torques, RK4 at 1 ms. In orbit (770 km, J2 off and on) every right-hand side adds
the tidal force and gravity-gradient couple of every body (orbit/tidal_wrenches.py: one computeJointJacobians, the
bodies' placements read from Pinocchio, two matrix products) and the reference orbit's and impulses' rates
(orbital_environment.py); free space runs Pinocchio's aba alone.

    python bench/bench_orbit.py [--steps N] [--repeats R]
"""
from __future__ import annotations

import argparse

import numpy as np
import pinocchio as pin
from call_timing import timed

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.orbit.orbit_config import EARTH_RADIUS, OrbitConfig
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_scenario.scenario import load_scenario

GOAL = 1.1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    scenario = load_scenario("capture")
    system = SystemModel(scenario.model)
    q, v = scenario.initial_state(system)
    arm = 0.05 * np.ones(len(system.arm_joints))
    wheels = 0.01 * np.ones(len(system.wheel_joints))
    settings = SimulationSettings(dt=1e-3)
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}, model nv={system.nv}; us per step, best of "
          f"{args.repeats} runs of {args.steps} steps")
    free = Simulator(system, settings, q, v)
    t_free = timed(lambda: free.step(arm, wheels), args.steps, args.repeats, lambda: free.reset(q, v))[0]
    print(f"{'free space':<28}{t_free:>9.1f}")
    for name, j2 in (("orbit, point mass", False), ("orbit, point mass + J2", True)):
        orbit = OrbitConfig(semi_major_axis=EARTH_RADIUS + 770e3, inclination=np.radians(98.5), j2=j2)
        sim = Simulator(system, settings, q, v, orbit=orbit)
        t_orbit = timed(lambda sim=sim: sim.step(arm, wheels), args.steps, args.repeats,
                        lambda sim=sim: sim.reset(q, v))[0]
        verdict = "goal met" if t_orbit / t_free <= GOAL else "goal MISSED"
        print(f"{name:<28}{t_orbit:>9.1f}   {t_orbit / t_free:.2f}x the free step (goal {GOAL}x: {verdict})")


if __name__ == "__main__":
    main()
