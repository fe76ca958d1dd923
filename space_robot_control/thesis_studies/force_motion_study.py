"""Seed 004 ch. 6 reproduction (sec. 6.3): the 6-DOF free-flying robot (300 kg base, 1500 kg target) with its hand
held on the target, the hybrid force/motion law of eqs. 6.6-6.7 realized on the inputs the base and arm have
(space_robot_control/hybrid_force_motion.py), K_P 30, K_D 25, K_F 10, K_I 50, desired joints [0.3, 0.2, 0.4, 0.45,
0.5, 0.0], base attitude zero, contact force 10 N along x. ROS-free: runs on the WeldedContactPlant
(welded_contact_plant.py) and returns time series and a summary; the runtime (space-robot-sim thesis_force_motion)
writes them out.

Coordinates: v = [base twist (LOCAL) | joints 1-6 | target twist (LOCAL)] (thesis_6dof.yaml). Errors:
- joints e_q = q_d - q (rad; m for the prismatic joint 6), rate -qdot (constant q_d);
- base attitude e_R = log3(R^T R_d) (rad, base frame) with rate -omega (LOCAL): the small-angle form of the
  thesis's Euler-angle error;
- contact force e_F = f - f_d (N), f = -lambda[:3] the force the hand exerts on the target, c1 (hand frame) axes.
Motion accelerations: eq. 6.6's vdd_d + K_D edot + K_P e on base rotation and joints; force rows: eq. 6.7 solved
implicitly (hybrid_force_motion.implicit_force_command). Base actuation (the thesis's F_bL, F_bA of eq. 5.16):
"thrusters" (a 6-axis wrench on the base: force and torque) or "attitude_only" (a torque on the base, as ideal
reaction wheels would give; no force: the contact force is then not controlled, the force rows drop out).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import build_model

from ..hybrid_force_motion import (
    ContactRows,
    HybridForceMotionLaw,
    HybridGains,
    check_motion_sizes,
    implicit_force_command,
    motion_acceleration,
    read_hybrid_gains,
)
from ..settling import settling_time
from .welded_contact_plant import WeldedContactPlant

BASE_ACTUATION = ("thrusters", "attitude_only")


@dataclass(frozen=True)
class ForceMotionSettings:
    """The study's configuration (config/studies/thesis_force_motion.yaml documents each entry)."""

    model: str
    robot_subtree: str
    target_subtree: str
    hand_frame: str
    target_frame: str
    baumgarte_kp: float
    baumgarte_kd: float
    base_actuation: str
    dt: float
    duration: float
    record_every: int
    initial_linear_velocity: np.ndarray
    joint_positions: np.ndarray
    base_orientation_rpy: np.ndarray
    contact_force: np.ndarray
    gains: HybridGains
    joint_band: float
    attitude_band: float
    force_band: float


def read_force_motion_settings(reader: ConfigReader) -> ForceMotionSettings:
    """Validated reading (ConfigError names the field)."""
    contact, sim, initial = reader.sub("contact"), reader.sub("simulation"), reader.sub("initial_state")
    desired, gains_reader, bands = reader.sub("desired"), reader.sub("gains"), reader.sub("evaluation").sub("bands")
    gains = read_hybrid_gains(gains_reader)
    dt = sim.number("dt", exclusive_minimum=0.0, maximum=0.01)
    settings = ForceMotionSettings(
        model=reader.string("model"),
        robot_subtree=reader.string("robot_subtree", "robot"),
        target_subtree=reader.string("target_subtree", "target"),
        hand_frame=contact.string("hand_frame"),
        target_frame=contact.string("target_frame"),
        baumgarte_kp=contact.number("baumgarte_kp", minimum=0.0),
        baumgarte_kd=contact.number("baumgarte_kd", minimum=0.0),
        base_actuation=reader.string("base_actuation", choices=BASE_ACTUATION),
        dt=dt,
        duration=reader.number("duration", exclusive_minimum=0.0),
        record_every=sim.integer("record_every", 10, minimum=1),
        initial_linear_velocity=initial.vector("linear_velocity", 3),
        joint_positions=desired.vector("joint_positions"),
        base_orientation_rpy=desired.vector("base_orientation_rpy", 3),
        contact_force=desired.vector("contact_force", 3),
        gains=gains,
        joint_band=bands.number("joint", exclusive_minimum=0.0),
        attitude_band=bands.number("base_attitude", exclusive_minimum=0.0),
        force_band=bands.number("force", exclusive_minimum=0.0),
    )
    for part in (contact, sim, initial, desired, gains_reader, bands):
        part.reject_unknown()
    return settings


@dataclass
class StudyResult:
    """Recorded series (time s, then per-sample rows) and the figures that summarize them."""

    series: dict
    summary: dict


class ForceMotionStudy:
    """Set-up and closed loop of the ch. 6 case (module docstring)."""

    # summary figures a study file may set limits on (evaluation.requirements)
    REQUIREMENTS = ("settling_time_s", "final_force_error_n", "max_constraint_error_m", "final_joint_error",
                    "final_attitude_error_rad")

    def __init__(self, settings: ForceMotionSettings):
        self.settings = s = settings
        self.system = system = build_model(s.model)
        model = system.model
        if len(s.joint_positions) != len(system.arm_joints):
            raise ConfigError("desired.joint_positions", f"{len(system.arm_joints)} values expected (arm_joints "
                                                         f"{list(system.arm_joints)}), got {len(s.joint_positions)}")
        for field, name in (("robot_subtree", s.robot_subtree), ("target_subtree", s.target_subtree)):
            if name not in system.subtree_names() or system.subtree(name).base_joint_type != "free_flyer":
                raise ConfigError(field, f"{name!r} is not a free-floating subtree of {s.model} "
                                         f"(subtrees: {system.subtree_names()})")
        robot = model.joints[system.subtree(s.robot_subtree).root_joint_id]
        target = model.joints[system.subtree(s.target_subtree).root_joint_id]
        self.base_v = np.arange(robot.idx_v, robot.idx_v + 6)
        self.base_q = slice(robot.idx_q, robot.idx_q + 7)
        self.target_v = np.arange(target.idx_v, target.idx_v + 6)
        self.target_q = slice(target.idx_q, target.idx_q + 7)
        self.arm_v = system.arm_v
        self.arm_q = np.array([system.q_slice(n).start for n in system.arm_joints])
        q0 = system.neutral()
        v0 = np.zeros(model.nv)
        data = model.createData()
        pin.forwardKinematics(model, data, q0)
        # every body translates at the given world velocity (thesis: 20 m/s); the joints are at rest
        for joint_id, v_index in ((system.subtree(s.robot_subtree).root_joint_id, self.base_v),
                                  (system.subtree(s.target_subtree).root_joint_id, self.target_v)):
            rotation = data.oMi[joint_id].rotation
            v0[v_index[:3]] = rotation.T.dot(s.initial_linear_velocity)
        self.plant = WeldedContactPlant(system, s.hand_frame, s.target_frame, q0, v0, s.dt, s.baumgarte_kp,
                                        s.baumgarte_kd)
        contact = ContactRows(model, self.plant.joint1, self.plant.placement1, self.plant.joint2,
                              self.plant.placement2)
        motion = np.concatenate((self.base_v[3:], self.arm_v))
        check_motion_sizes(s.gains, system.arm_joints)
        if s.base_actuation == "thrusters":
            actuated, force_rows = np.concatenate((self.base_v, self.arm_v)), np.arange(3)
        else:
            actuated, force_rows = motion, np.zeros(0, dtype=int)
        self.law = HybridForceMotionLaw(model, contact, actuated, motion, force_rows)
        self.force_rows = force_rows
        self.desired_rotation = pin.rpy.rpyToMatrix(*s.base_orientation_rpy)
        self.q0, self.v0 = q0, v0

    def errors(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(joint error, joint error rate, base attitude error e_R, its rate) at (q, v)."""
        quat = q[self.base_q][3:]
        rotation = pin.Quaternion(quat[3], *quat[:3]).toRotationMatrix()
        attitude = pin.log3(rotation.T.dot(self.desired_rotation))
        return (self.settings.joint_positions - q[self.arm_q], -v[self.arm_v], attitude, -v[self.base_v[3:]])

    # ---- hooks the adaptive study (adaptive_study.py) replaces ------------------------------------------
    def control_law(self) -> HybridForceMotionLaw:
        """The law the controller solves (R) with: the exact model here."""
        return self.law

    def force_command(self, force: np.ndarray, integral: np.ndarray) -> np.ndarray:
        """lambda_f (hand side) for the force rows: eq. 6.7 solved implicitly."""
        return -implicit_force_command(self.settings.contact_force, integral[:3], self.settings.gains)[self.force_rows]

    def adapt(self, q, v, tau, error, error_rate) -> None:
        """Called once per control step after the inputs are chosen (no adaptation here)."""

    def extra_record(self) -> dict:
        return {}

    def run(self, duration: float | None = None, progress=None) -> StudyResult:
        s, plant, gains = self.settings, self.plant, self.settings.gains
        steps = int(round((s.duration if duration is None else duration) / s.dt))
        integral = np.zeros(6)                   # int e_F dt on all six rows (force rows used by the law)
        desired6 = np.concatenate((s.contact_force, np.zeros(3)))     # on the target, c1
        force = np.zeros(6)                      # f = -lambda, on the target (the sensor's reading)
        times, inside, rec = [], [], {}
        for k in range(steps + 1):
            q, v = plant.q, plant.v
            e_q, de_q, e_r, de_r = self.errors(q, v)
            error, error_rate = np.concatenate((e_r, e_q)), np.concatenate((de_r, de_q))
            e_f = force[:3] - s.contact_force
            times.append(plant.t)
            inside.append(bool(np.abs(e_q).max() <= s.joint_band and np.abs(e_r).max() <= s.attitude_band
                               and np.abs(e_f).max() <= s.force_band))
            law = self.control_law()
            realized = law.solve(q, v, motion_acceleration(error, error_rate, np.zeros(len(error)), gains),
                                 self.force_command(force, integral))
            tau = np.zeros(self.system.nv)
            tau[law.actuated] = realized.inputs
            self.adapt(q, v, tau, error, error_rate)
            if k % s.record_every == 0:
                lambda_c = -(desired6 - gains.kf * (force - desired6) - gains.ki * integral)   # eq. 6.7, hand side
                thesis = law.thesis_generalized_force(q, v, realized.acceleration, lambda_c)
                world = pin.Quaternion(q[self.base_q][6], *q[self.base_q][3:6]).toRotationMatrix()
                target_quat = q[self.target_q][3:]
                target_rotation = pin.Quaternion(target_quat[3], *target_quat[:3]).toRotationMatrix()
                sample = {"t": plant.t, "joint_error": e_q, "attitude_error": e_r, "force_error": e_f,
                          "contact_torque": force[3:], "base_force": tau[self.base_v[:3]],
                          "base_torque": tau[self.base_v[3:]], "joint_torque": tau[self.arm_v],
                          "base_velocity": world.dot(v[self.base_v[:3]]),
                          "base_angular_velocity": world.dot(v[self.base_v[3:]]),
                          "target_velocity": target_rotation.dot(v[self.target_v[:3]]),
                          "target_angular_velocity": target_rotation.dot(v[self.target_v[3:]]),
                          "thesis_target_force": thesis[self.target_v],
                          "constraint_error": plant.constraint_error(), **self.extra_record()}
                for key, value in sample.items():
                    rec.setdefault(key, []).append(np.array(value, dtype=float))
                if progress is not None:
                    progress(plant.t)
            if k == steps:
                break
            plant.step(tau)
            force = -plant.contact_force(tau)
            integral += s.dt * (force - desired6)
        series = {key: np.array(value) for key, value in rec.items()}
        return StudyResult(series, self._summary(np.array(times), np.array(inside), series))

    def _summary(self, t: np.ndarray, inside: np.ndarray, series: dict) -> dict:
        s = self.settings
        thesis = series["thesis_target_force"]
        return {
            "settling_time_s": settling_time(t, inside),
            "settling_bands": {"joint_rad_or_m": s.joint_band, "base_attitude_rad": s.attitude_band,
                               "contact_force_n": s.force_band},
            "final_force_error_n": float(np.abs(series["force_error"][-1]).max()),
            "final_joint_error": float(np.abs(series["joint_error"][-1]).max()),
            "final_attitude_error_rad": float(np.abs(series["attitude_error"][-1]).max()),
            "final_contact_torque_nm": float(np.linalg.norm(series["contact_torque"][-1])),
            "max_joint_torque": float(np.abs(series["joint_torque"]).max()),
            "max_base_force_n": float(np.linalg.norm(series["base_force"], axis=1).max()),
            "max_base_torque_nm": float(np.linalg.norm(series["base_torque"], axis=1).max()),
            "max_constraint_error_m": float(series["constraint_error"][:, 0].max()),
            "thesis_law_target_force_max_n": float(np.linalg.norm(thesis[:, :3], axis=1).max()),
            "thesis_law_target_torque_max_nm": float(np.linalg.norm(thesis[:, 3:], axis=1).max()),
            "base_actuation": s.base_actuation,
        }
