"""Microseconds per ServicerController.update() on the servicer + target model (nv = 22), default
configuration (joint tracking and attitude hold, with feed-forward), a trajectory being followed.

Each figure is printed with the ratio to a baseline measured in the same run: the Pinocchio and LAPACK
work one update cannot avoid, as bare calls (crba, nonLinearEffects, and one Cholesky solve with the
passive block M_pp and the right-hand sides the algorithm needs, with the same LAPACK routine). The
difference is the Python/numpy work: validation, trajectory sampling, gains, attitude law, limits, output.
The single-mode configurations are timed for information. The graph's budget: the full graph runs physics and
control at 1 kHz with a 10x real-time floor, so the controller's share is a few tens of microseconds.

    python bench/bench_controller.py [--updates N] [--repeats R]
"""
from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np
import pinocchio as pin
from call_timing import timed
from scipy.linalg import lapack

from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel

POSE = (0.3, -0.6, 0.2, 1.2, -0.3, 0.8, 0.1)        # rad, a bent Sawyer pose
GOAL = (0.5, -0.4, 0.3, 1.0, -0.1, 0.6, 0.3)        # rad, reached after the benchmark ends
DT = 1e-3


def moving_state(system: SystemModel) -> tuple[np.ndarray, np.ndarray]:
    """Bent arm, tumbling bus and target, wheels spinning well below their speed limit."""
    q = system.neutral()
    for name, angle in zip(system.arm_joints, POSE):
        system.set_joint_angle(q, name, angle)
    v = np.random.default_rng(0).normal(scale=0.01, size=system.nv)
    v[system.wheel_v] = [40.0, -25.0, 10.0]
    return q, v


def controller_update(system, config, q, v):
    """One update per call, 1 ms later each time; a 60 s trajectory is active throughout."""
    ctl = ServicerController(system, config)
    ctl.update(0.0, q, v)
    if ctl.tracking:
        ctl.set_trajectory(list(system.arm_joints), [(list(GOAL), None, None, 60.0)])
    clock = {"t": 0.0}

    def run():
        clock["t"] += DT
        ctl.update(clock["t"], q, v)
    return run


def baseline(ctl: ServicerController, q, v):
    """crba + nonLinearEffects + one dposv on M_pp with [h_p + M_pc a | wheel columns] (4 right-hand sides)."""
    model = ctl.system.model
    data = model.createData()
    passive = ctl.dynamics.passive
    pp = passive[:, None] * model.nv + passive[None, :]
    rhs = np.asfortranarray(np.ones((len(passive), 1 + len(ctl.wheel_joints))))

    def run():
        M = pin.crba(model, data, q)
        pin.nonLinearEffects(model, data, q, v)
        lapack.dposv(M.take(pp).T, rhs, 1, 1)           # lower, overwrite_a (positional: cheaper, as the controller)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    system = SystemModel(load_model_config("config/models/servicer_target.yaml"))
    config = load_controller_config("config/controller.yaml")
    q, v = moving_state(system)
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}, model nq={system.nq} nv={system.nv}")
    base, base_median = timed(baseline(ServicerController(system, config), q, v), args.updates, args.repeats)
    print(f"raw Pinocchio + LAPACK baseline: {base:.1f} us (median {base_median:.1f})")
    print(f"{'modes':<42}{'us/update':>10}{'median':>9}{'ratio':>8}{'share of 1 ms':>15}")
    for modes in (config.modes, ("joint_tracking",), ("attitude_hold",)):
        best, median = timed(controller_update(system, replace(config, modes=modes), q, v), args.updates,
                             args.repeats)
        label = " + ".join(modes) + (" (default)" if modes == config.modes else "")
        print(f"{label:<42}{best:>10.1f}{median:>9.1f}{best / base:>8.2f}{best / 1000.0:>14.1%}")


if __name__ == "__main__":
    main()
