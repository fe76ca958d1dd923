"""The model the controller computes with, and the map to it from the state of the model simulated.

For a rigid model both are the same. For a model with flexible links or elastic joints (docs/flexibility.md) the
controller computes with its rigid counterpart (SystemModel.config.rigid(): the same links and joints, no modes,
stiff joints), as space-arm controllers are designed, with each elastic joint's motor in the stiff-spring limit of
eq. 11: with theta_m = q, 1/2 I_r (w_p . a + N qdot)^2 is exactly the kinetic energy of an inertia N I_r about the
axis on the joint's child body, (1 - N) I_r on its parent body and an armature N (N - 1) I_r (for N = 1 the rotor
simply turns with the link). Without the motors the feedback would be scaled for the links alone: on the wrist
28 times too weak for the motor it moves (the arm then rings at 0.3 Hz for seconds). The parent's share is negative
for N > 1, which crba and the bias forces the controller uses take as they are (the total inertia is the physical
one). Its state is read from the flexible one joint by joint:
- every joint of the rigid model takes the entries of the joint of the same name (bases, wheels, rigid joints);
- an elastic joint takes its motor's angle and rate, theta_m = phi / N (eq. 12): the collocated measurement (the
  encoder sits on the motor side of the spring, as on seed 003's test bed), with which joint-space feedback
  through the spring stays passive;
- modal coordinates and the tip chains are left out (the vibration-suppression term reads them).

`without` names subtrees the control model leaves out: the joined system after a capture is computed with the
servicer alone, the held target's inertia then added to the hand's body (ServicerController.set_grasp,
docs/contact.md sec. 8); their coordinates are left out of the state as the modal ones are.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel


class ControlModel:
    def __init__(self, system: SystemModel, without: tuple = ()):
        self.system = system
        flexibility = system.flexibility
        self.identity = flexibility is None and not without
        if without:
            config = system.config.rigid()
            kept = tuple(s for s in config.subtrees if s.name not in without)
            thrusters = config.base_thrusters if config.base_thrusters is not None and \
                config.base_thrusters.subtree not in without else None
            self.rigid = SystemModel(replace(config, subtrees=kept, grasp=None, contact_surfaces=(),
                                             base_thrusters=thrusters))
        else:
            self.rigid = system if flexibility is None else SystemModel(system.config.rigid())
        if self.identity:
            return
        rigid, model = self.rigid, self.rigid.model
        armature = model.armature.copy()
        for j in (flexibility.joints if flexibility is not None else ()):
            gear, rotor = j.joint.gear_ratio, j.joint.rotor_inertia()       # I_r a a^T, joint frame
            child = rigid.joint_id(j.joint.name)
            parent = model.parents[child]
            model.inertias[child] = model.inertias[child] + pin.Inertia(0.0, np.zeros(3), gear * rotor)
            # (1 - N) I_r on the parent: subtracted (Pinocchio builds no inertia with negative moments)
            on_parent = model.jointPlacements[child].act(pin.Inertia(0.0, np.zeros(3), (gear - 1.0) * rotor))
            model.inertias[parent] = model.inertias[parent] - on_parent
            armature[rigid.v_index(j.joint.name)] += gear * (gear - 1.0) * j.joint.config.motor_inertia
        model.armature = armature
        q_source, q_gain, v_source, v_gain = [], [], [], []
        for j in range(1, model.njoints):
            name, joint = model.names[j], model.joints[j]
            elastic = flexibility.elastic(name) if flexibility is not None else None
            if elastic is not None:
                gear = elastic.joint.gear_ratio
                q_source.append(elastic.rotor_q)
                q_gain.append(1.0 / gear)
                v_source.append(elastic.rotor_v)
                v_gain.append(1.0 / gear)
                continue
            q_slice, v_slice = system.q_slice(name), system.v_slice(name)
            q_source += range(q_slice.start, q_slice.stop)
            v_source += range(v_slice.start, v_slice.stop)
            q_gain += [1.0] * joint.nq
            v_gain += [1.0] * joint.nv
        self._q = (np.array(q_source, dtype=int), np.array(q_gain))
        self._v = (np.array(v_source, dtype=int), np.array(v_gain))
        if len(q_source) != rigid.nq or len(v_source) != rigid.nv:
            raise AssertionError("the control model's joints must be the simulated model's")

    def state(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) of the rigid control model from the simulated model's (new arrays unless rigid)."""
        if self.identity:
            return q, v
        (qs, qg), (vs, vg) = self._q, self._v
        return q[qs] * qg, v[vs] * vg
