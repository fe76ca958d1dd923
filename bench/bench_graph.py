"""Real-time factor of the full standalone graph (physics 1 kHz, control 1 kHz, monitor 50 Hz, bag 100 Hz),
with ratios against baselines measured in the same run on the same scenario:

  bare simulator    Simulator.step alone, the scenario's integrator at its dt (the physics cost);
  cores, no graph   Simulator.step + ServicerController.update every step and HolonomyMonitor.update every
                    20 steps, called directly with (q, v), the controller given the scenario's attitude
                    setpoint and trajectory at their times as the graph's controller gets them (the cost of
                    the science without any messaging);
  full graph        the node cores exchanging ROS messages in the lockstep graph, recording the MCAP bag.

The three are measured in turns, `repeats` rounds, best of each: a machine whose load changes during the
run then slows all three alike and the same-run ratios stay meaningful.

Floor 5x real time (a regression guard), goal 20x. Exit status 1 when the full graph is below
the floor.

    python bench/bench_graph.py [--duration S] [--repeats R] [--integrator rk4|semi_implicit_euler]
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time

import numpy as np
import pinocchio as pin

from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import Simulator
from space_robot_nodes.monitor_core import read_monitor
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import DEFAULT_SCENARIO, load_scenario

FLOOR, GOAL = 5.0, 20.0


def timed(make_loop) -> float:
    """Wall time (s) of one loop; make_loop() builds everything (models, nodes, bag writer) outside the timing
    and returns the loop to time."""
    loop = make_loop()
    start = time.perf_counter()
    loop()
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO)
    parser.add_argument("--duration", type=float, default=3.0, help="simulated seconds per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--integrator", help="override the scenario's integrator")
    args = parser.parse_args(argv)
    scenario = load_scenario(args.scenario)
    if args.integrator:
        import dataclasses

        scenario = dataclasses.replace(scenario, simulation=dataclasses.replace(scenario.simulation,
                                                                                integrator=args.integrator))
    system = SystemModel(scenario.model)
    dt = scenario.simulation.dt
    steps = round(args.duration / dt)
    monitor_every = round(1.0 / (scenario.nodes.monitor.rate * dt))
    q0, v0 = scenario.initial_state(system)
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}; scenario {scenario.name}, "
          f"{scenario.simulation.integrator} at {1 / dt:.0f} Hz, {args.duration} s simulated, best of {args.repeats}")

    def bare():
        sim = Simulator(system, scenario.simulation, q0, v0)
        arm, wheels = np.zeros(len(system.arm_joints)), np.zeros(len(system.wheel_joints))

        def loop():
            for _ in range(steps):
                sim.step(arm, wheels)
        return loop

    goals = scenario_goals(scenario, dt)

    def cores():
        sim = Simulator(system, scenario.simulation, q0, v0)
        controller = ServicerController(system, scenario.controller)
        monitor = read_monitor(scenario.monitor_data, scenario.monitor_source, system)

        def loop():
            for k in range(steps):
                s = sim.state
                for goal in goals.get(k, ()):
                    goal(controller)
                out = controller.update(s.t, s.q, s.v)
                if k % monitor_every == 0:
                    monitor.update(s.t, s.q, s.v)
                sim.step(out.arm_torque, out.wheel_torque)
        return loop

    graph_wall = []

    def graph():
        run = SimulationRun(scenario, system)

        def loop():
            with tempfile.TemporaryDirectory() as out:   # the run times its own loop (bag index writing excluded)
                graph_wall.append(run.run(args.duration, out, plots=False, progress=False).summary["wall_time_s"])
        return loop

    walls = {"bare": [], "cores": []}
    for _ in range(args.repeats):                    # in turns: a change of machine load hits all three
        walls["bare"].append(timed(bare))
        walls["cores"].append(timed(cores))
        timed(graph)
    results = [("bare simulator", args.duration / min(walls["bare"])),
               ("cores, no graph", args.duration / min(walls["cores"])),
               ("full graph + bag", args.duration / min(graph_wall))]
    base = results[0][1]
    print(f"{'':<20}{'real-time factor':>18}{'vs bare simulator':>20}{'us per 1 ms step':>18}")
    for name, rtf in results:
        print(f"{name:<20}{rtf:>17.2f}x{rtf / base:>20.2f}{1000.0 / rtf:>18.0f}")
    full = results[-1][1]
    layer_us = 1e3 * (1.0 / full - 1.0 / results[1][1])
    print(f"messaging, scheduling and recording add {results[1][1] / full - 1.0:.0%} to the cores' time "
          f"({layer_us:.0f} us per step)")
    verdict = "meets the goal" if full >= GOAL else "meets the floor" if full >= FLOOR else "BELOW THE FLOOR"
    print(f"full graph: {full:.2f}x real time: {verdict} (floor {FLOOR:.0f}x, goal {GOAL:.0f}x)")
    return 0 if full >= FLOOR else 1


def scenario_goals(scenario, dt: float) -> dict:
    """step -> what the scenario player and the controller node do to the controller at that step: the
    attitude setpoint at its time, the trajectory at its time (once the controller has a state, as the node
    applies it), in the controller's plain form."""
    goals: dict[int, list] = {}
    attitude, trajectory = scenario.attitude_goal, scenario.trajectory_goal
    if attitude is not None and "attitude_hold" in scenario.controller.modes:
        setpoint = np.asarray(attitude.orientation_xyzw, float)
        goals.setdefault(math.ceil(attitude.publish_at / dt - 1e-9), []).append(
            lambda c: c.set_attitude_setpoint(setpoint))
    if trajectory is not None and "joint_tracking" in scenario.controller.modes:
        points = [(np.asarray(positions, float), None, None, t) for t, positions in trajectory.points]
        goals.setdefault(max(1, math.ceil(trajectory.publish_at / dt - 1e-9)), []).append(
            lambda c: c.set_trajectory(list(trajectory.joint_names), points, None))
    return goals


if __name__ == "__main__":
    sys.exit(main())
