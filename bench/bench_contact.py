"""The joined-system step (the grasp's rigid 6D loop, docs/contact.md sec. 2) as a ratio to the free step of the same
model in the same run (docs/contact.md; goal: at most 1.5x).

Model config/models/servicer_target.yaml (nv = 22), the fixture at the hand, both spacecraft drifting slowly; the same
arm and wheel torques. Free: the gripper open (pinocchio.aba). Joined: the gripper closed and the grasp holding
(pinocchio.constraintDynamics with Baumgarte: one KKT solve per stage). Both with the scenario integrators RK4 and
semi-implicit Euler.

    python bench/bench_contact.py [--steps N] [--repeats R]
"""
from __future__ import annotations

import argparse

import numpy as np
import pinocchio as pin
from call_timing import timed

from space_robot_dynamics import initial_state_from
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

DT = 1e-3
# the pre-grasp pose of servicer_pregrasp.yaml (rad, right_j0..right_j6)
ARM_POSE = [0.297419, -0.565761, -0.910255, 1.743777, -0.247794, -1.160595, -0.542281]


def fixture_at_hand(system: SystemModel) -> np.ndarray:
    """q with the target's grapple frame at the hand's frame, its x axis against the hand's approach (z) axis."""
    q, _ = initial_state_from(system, {"joint_positions": dict(zip(system.arm_joints, ARM_POSE))})
    model, data = system.model, system.model.createData()
    pin.framesForwardKinematics(model, data, q)
    hand = data.oMf[model.getFrameId(system.grasp.config.end_effector_frame)]
    fixture = model.frames[model.getFrameId(system.grasp.config.target_frame)]
    oMg = pin.SE3(hand.rotation @ pin.rpy.rpyToMatrix(0.0, np.pi / 2, 0.0), hand.translation)
    q[system.q_slice(system.base_joint("target"))] = pin.SE3ToXYZQUAT(oMg * fixture.placement.inverse())
    return q


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    system = SystemModel(load_model_config("config/models/servicer_target.yaml"))
    q = fixture_at_hand(system)
    v = np.zeros(system.nv)
    v[system.v_slice(system.base_joint("target"))] = [0.001, 0.0, 0.0, 0.0, 0.002, 0.001]
    arm = 0.05 * np.ones(len(system.arm_joints))
    wheels = 0.01 * np.ones(len(system.wheel_joints))
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}, model nv={system.nv}; us per step, best of "
          f"{args.repeats} runs of {args.steps} steps")
    print(f"{'integrator':<22}{'free':>9}{'joined':>9}{'joined/free':>13}")
    for integrator in ("rk4", "semi_implicit_euler"):
        t_free, t_joined, drift = measure(system, SimulationSettings(dt=DT, integrator=integrator), q, v, arm, wheels,
                                          args.steps, args.repeats)
        print(f"{integrator:<22}{t_free:>9.1f}{t_joined:>9.1f}{t_joined / t_free:>12.2f}x"
              f"   (loop drift after the run {drift.drift_position:.1e} m, {drift.drift_angle:.1e} rad)")


def measure(system, settings, q, v, arm, wheels, steps, repeats):
    """(us per free step, us per joined step, the joined simulator's ContactState after its last run)."""
    free = Simulator(system, settings, q, v)
    joined = Simulator(system, settings, q, v)

    def grasped():
        """Each run starts from the same state, the grasp just closed."""
        joined.reset(q, v)
        joined.command_gripper(True)
        joined.step(arm, wheels)
        assert joined.contact_state().holding, joined.contact_events[-1].message

    t_free = timed(lambda: free.step(arm, wheels), steps, repeats, lambda: free.reset(q, v))[0]
    t_joined = timed(lambda: joined.step(arm, wheels), steps, repeats, grasped)[0]
    return t_free, t_joined, joined.contact_state()

if __name__ == "__main__":
    main()
