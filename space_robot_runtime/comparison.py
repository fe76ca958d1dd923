"""Differences between a scenario's run and its comparison run (scenario `comparison:`), from what both recorded.

Both runs start from the same initial state and are sampled at the same instants (the recorder's decimation of the
same lockstep ticks); each sample's configuration is rebuilt from the recorded joint_states (every joint it
carries, the tip chains of flexible links included) and the bus odometry, and Pinocchio's forward kinematics of
each run's own model gives the end effector's position in the world frame. Reported (SI units):
- max_end_effector_difference_m: max over time of |p_run(t) - p_comparison(t)|;
- max_joint_angle_difference_rad: max over time and arm joints of |q_run - q_comparison| (link side);
- max_base_angle_difference_rad: max over time of the rotation angle between the two bus attitudes;
with the time series behind them for the plots.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_nodes.robot_state import BaseSlot

from .run_trace import RunTrace, rotation_angle


@dataclass
class ComparisonResult:
    name: str
    description: str
    t: np.ndarray                         # s, common sample times
    end_effector_difference: np.ndarray   # m, |p_run - p_comparison|
    joint_angle_difference: np.ndarray    # rad, (n, arm joints), q_run - q_comparison
    base_angle_difference: np.ndarray     # rad
    arm_joints: tuple

    def summary(self) -> dict:
        """The top-level summary keys (max_*_difference, README *Scenarios*) and a `comparison` section."""
        joints = np.abs(self.joint_angle_difference)
        return {
            "max_end_effector_difference_m": _max(self.end_effector_difference),
            "max_joint_angle_difference_rad": _max(joints),
            "max_base_angle_difference_rad": _max(self.base_angle_difference),
            "comparison": {
                "name": self.name, "description": self.description, "samples": len(self.t),
                "max_joint_angle_difference_per_joint_rad": dict(zip(self.arm_joints, joints.max(axis=0).tolist()))
                if len(self.t) else {},
                "max_joint_angle_difference_deg": float(np.degrees(_max(joints))),
                "max_base_angle_difference_deg": float(np.degrees(_max(self.base_angle_difference))),
                "final_end_effector_difference_m": float(self.end_effector_difference[-1]) if len(self.t) else None,
            },
        }


def _max(values: np.ndarray) -> float:
    return float(np.max(values)) if values.size else 0.0


def end_effector_positions(system: SystemModel, trace: RunTrace, bus_subtree: str, frame: str
                           ) -> tuple[np.ndarray, np.ndarray]:
    """(t, positions (n, 3) m, world) of `frame` at the samples that have both a joint state and a bus pose."""
    t_joints, positions = trace.joint_positions.arrays()
    t_bus, poses = trace.bus_pose.arrays()
    times = np.intersect1d(np.round(t_joints, 9), np.round(t_bus, 9))
    model, data = system.model, system.model.createData()
    frame_id = system.frame_id(frame)
    columns = [(k, system.q_slice(name).start) for k, name in enumerate(trace.joint_names)
               if system.model.existJointName(name) and system.model.joints[system.joint_id(name)].nq == 1]
    rows, q_index = np.array([c[0] for c in columns], dtype=int), np.array([c[1] for c in columns], dtype=int)
    subtree = system.subtree(bus_subtree)
    slot = BaseSlot(system, subtree) if subtree.root_joint_id != 0 else None
    joint_at = {round(float(t), 9): k for k, t in enumerate(t_joints)}
    bus_at = {round(float(t), 9): k for k, t in enumerate(t_bus)}
    out = np.zeros((len(times), 3))
    for i, t in enumerate(times):
        q, v = system.neutral(), np.zeros(system.nv)
        q[q_index] = positions[joint_at[float(t)]][rows]
        if slot is not None:
            pose = poses[bus_at[float(t)]]
            slot.write(q, v, pose[:3], pose[3:], np.zeros(3), np.zeros(3))
        pin.framesForwardKinematics(model, data, q)
        out[i] = data.oMf[frame_id].translation
    return times, out


def compare(name: str, description: str, frame: str, bus_subtree: str, run: tuple[SystemModel, RunTrace],
            comparison: tuple[SystemModel, RunTrace]) -> ComparisonResult:
    """The differences run minus comparison (see the module docstring) at their common sample times."""
    (system_a, trace_a), (system_b, trace_b) = run, comparison
    t_a, ee_a = end_effector_positions(system_a, trace_a, bus_subtree, frame)
    t_b, ee_b = end_effector_positions(system_b, trace_b, bus_subtree, frame)
    times = np.intersect1d(t_a, t_b)
    ee = np.linalg.norm(ee_a[np.searchsorted(t_a, times)] - ee_b[np.searchsorted(t_b, times)], axis=1)
    arm_a, arm_b = _at(trace_a.arm_positions, times), _at(trace_b.arm_positions, times)
    quat_a, quat_b = _at(trace_a.bus_orientation, times), _at(trace_b.bus_orientation, times)
    base = np.array([rotation_angle(a, b[None, :])[0] for a, b in zip(quat_a, quat_b)]) if len(times) else \
        np.zeros(0)
    return ComparisonResult(name, description, times, ee, arm_a - arm_b, base, tuple(trace_a.arm_joints))


def _at(series, times: np.ndarray) -> np.ndarray:
    """The series' values at `times` (which it has, to the nanosecond)."""
    t, values = series.arrays()
    index = {round(float(x), 9): k for k, x in enumerate(t)}
    return np.array([values[index[float(x)]] for x in times]) if len(times) else np.zeros((0,) + values.shape[1:])
