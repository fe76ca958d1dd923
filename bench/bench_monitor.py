"""Microseconds per full holonomy-monitor pass (HolonomyMonitor.update) on the servicer (7 arm joints + 3
reaction wheels, nv = 22), robot alone and holding the target (combined momentum + grasp constraints).

Each figure is printed with the ratio to a baseline measured in the same run: the Pinocchio calls the pass
cannot avoid, made back to back with nothing else (centroidal map, centre of mass, joint Jacobians,
end-effector Jacobian, and per joint the centroidal-map time variation, which also gives the joint-Jacobian
time variations the grasp rows need; the pass itself reads the subtree centres of mass and the joint Jacobians
from those same calls, so it makes slightly fewer). The difference is the numpy and Python work that turns them
into the published figures. key_values() (string formatting for diagnostic_msgs) is timed separately.
Floor 1 ms per pass, goal 200 us. The machine's load moves these figures by 10-30 %: compare runs by
the ratio, and take the best of several runs.

    python bench/bench_monitor.py [--passes N] [--repeats R]
"""
from __future__ import annotations

import argparse

import numpy as np
import pinocchio as pin
from call_timing import timed

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_monitoring import HolonomyMonitor, load_monitor_settings

POSE = (0.3, -0.6, 0.2, 1.2, -0.3, 0.8, 0.1)        # rad, a bent Sawyer pose
FLOOR_US, GOAL_US = 1000.0, 200.0


def servicer_state(system: SystemModel) -> tuple[np.ndarray, np.ndarray]:
    """Bent pose, target grapple on the hand, small velocities consistent with nothing in particular."""
    model = system.model
    q = system.neutral()
    for name, angle in zip(system.arm_joints, POSE):
        system.set_joint_angle(q, name, angle)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    grapple = model.frames[model.getFrameId("target/grapple_frame")]
    pose = data.oMf[model.getFrameId("right_hand")] * grapple.placement.inverse()
    idx = model.joints[grapple.parentJoint].idx_q
    q[idx:idx + 7] = pin.SE3ToXYZQUAT(model.jointPlacements[grapple.parentJoint].inverse() * pose)
    return q, np.random.default_rng(0).normal(scale=0.01, size=model.nv)


def baseline(monitor: HolonomyMonitor, q: np.ndarray):
    """The unavoidable Pinocchio calls of one pass, with directions fixed in advance."""
    model = monitor.model
    data = model.createData()
    robot = monitor.robot
    directions = np.zeros((len(robot.joint_v), model.nv))
    directions[np.arange(len(robot.joint_v)), robot.joint_v] = 1.0
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def run():
        pin.computeCentroidalMap(model, data, q)
        pin.centerOfMass(model, data, q)
        pin.computeJointJacobians(model, data, q)
        pin.getFrameJacobian(model, data, monitor.ee_frame, lwa)
        for u in directions:
            pin.computeCentroidalMapTimeVariation(model, data, q, u)
    return run


def monitor_pass(monitor: HolonomyMonitor, q: np.ndarray, v: np.ndarray):
    """One update per call, 1 ms later each time (time must increase)."""
    clock = {"t": 0.0}

    def run():
        clock["t"] += 1e-3
        return monitor.update(clock["t"], q, v)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    system = SystemModel(load_model_config("config/models/servicer_target.yaml"))
    settings = load_monitor_settings("config/monitor.yaml")
    q, v = servicer_state(system)
    print(f"servicer: {len(system.arm_joints)} arm joints + {len(system.wheel_joints)} wheels, nv = {system.nv}; "
          f"Pinocchio {pin.__version__}, numpy {np.__version__}")
    print(f"{'case':<22}{'best us':>9}{'median us':>11}{'baseline us':>13}{'ratio':>7}   floor {FLOOR_US:.0f} us, "
          f"goal {GOAL_US:.0f} us")
    for attached in (False, True):
        monitor = HolonomyMonitor(system, settings)
        monitor.update(0.0, q, v, attached=attached)
        one_pass = monitor_pass(monitor, q, v)
        best, median = timed(one_pass, args.passes, args.repeats)
        base_best, _ = timed(baseline(monitor, q), args.passes, args.repeats)
        name = "with target attached" if attached else "robot alone"
        verdict = "goal met" if best <= GOAL_US else ("within floor" if best <= FLOOR_US else "OVER FLOOR")
        print(f"{name:<22}{best:9.1f}{median:11.1f}{base_best:13.1f}{best / base_best:7.2f}   {verdict}")
        report = one_pass()
        kv_best, _ = timed(report.key_values, args.passes, args.repeats)
        print(f"{'  key_values()':<22}{kv_best:9.1f}")


if __name__ == "__main__":
    main()
