"""Forward dynamics of a model with elastic joints when some joints follow a prescribed motion (seed 003 sec. 4:
"we actuate the motion of the second and third joint of the manipulator with the use of encoder measurements").

The model is the simulator's expanded Pinocchio model (docs/flexibility.md secs. 4-5: a rotor body per elastic
joint), M(q) vdot + h(q, v) = tau. Split v into the free coordinates f (floating bases, the elastic joints' link
angles and rotors, any other joint) and the prescribed ones p, whose q_p(t), v_p(t), a_p(t) are given. The f rows
are the equations of motion of the free coordinates, with the prescribed accelerations as known inputs:

    M_ff a_f = tau_f - [h(q, v) + M_fp a_p]_f = tau_f - rnea(q, v, [0; a_p])_f                                (1)

(the p rows would give the torques that keep the prescribed motion; they are not needed). tau_f is the actuators'
force plus the springs and dampers of eq. 12 (flexibility.md; seed 003 eqs. 7-8, 13-14):
tau_sel += f0 - K x - C xdot on the elastic joints' (q, phi). M from `pinocchio.crba`, the bracket from
`pinocchio.rnea`, one Cholesky solve (LAPACK dposv) of size n_f.

Floating bases: their pose does not enter (1) when gravity does no work on them (a free-flying base in zero
gravity; a planar base on its table, gravity along the table's normal): M and h are those of Pinocchio's LOCAL
velocities, and the generalized gravity is then the same at every base pose, which is checked at start-up
(`check_base_pose_free`). The state is therefore the free one-DOF joints' angles (positions) and every free
velocity: the bases' poses are not integrated (their velocities are; the outputs are joint angles).
Not supported (an error naming the model): flexible links (their tip chains need the reduced dynamics of
flexibility.md eq. 16) and continuous joints (cos, sin) among the free joints.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel

_dposv = lapack.dposv
_GRAVITY_TOLERANCE = 1e-9        # relative: generalized gravity equal at every base pose


def check_base_pose_free(system: SystemModel, field: str) -> None:
    """ConfigError (at `field`) unless the generalized gravity is the same at random floating-base poses as at
    the identity pose, with the joints at random angles (then nothing in eq. 1 depends on the bases' poses)."""
    model = system.model
    floating = [s for s in system.subtrees if s.base_joint is not None]
    if not floating:
        return
    data = model.createData()
    rng = np.random.default_rng(0)
    zero = np.zeros(model.nv)
    for _ in range(3):          # configurations reached from the neutral one along random tangents (any joint kind)
        q = pin.integrate(model, pin.neutral(model), rng.uniform(-1.0, 1.0, model.nv))
        q_identity = q.copy()
        for subtree in floating:
            span = system.q_slice(subtree.base_joint)
            q_identity[span] = pin.neutral(model)[span]
        at_pose = pin.rnea(model, data, q, zero, zero).copy()
        at_identity = pin.rnea(model, data, q_identity, zero, zero)
        scale = max(np.abs(at_identity).max(), float(np.linalg.norm(model.gravity.linear)), 1.0)
        if np.abs(at_pose - at_identity).max() > _GRAVITY_TOLERANCE * scale:
            raise ConfigError(field, "gravity does work on a floating base of this model (its pose enters the "
                                     "dynamics, e.g. a spherical air bearing or a free flyer under gravity): not "
                                     "supported; a planar base on its table or zero gravity are")


class PrescribedMotionDynamics:
    """Eq. (1) for `system` with the one-DOF joints `prescribed` following a prescribed motion.

    positions: the free one-DOF joints' q entries (`position_names`, rad), velocities: every free v entry
    (`free_v` order), actuator forces: generalized forces on v (N m)."""

    def __init__(self, system: SystemModel, prescribed: tuple, field: str):
        model = system.model
        flexibility = system.flexibility
        if flexibility is not None and flexibility.links:
            raise ConfigError(field, "flexible links are not supported (their tip chains need the reduced dynamics); "
                                     "elastic joints are")
        check_base_pose_free(system, field)
        self.system, self.model, self.data = system, model, model.createData()
        self.prescribed = tuple(prescribed)
        self.prescribed_q = np.array([system.q_slice(n).start for n in prescribed], dtype=int)
        self.prescribed_v = np.array([system.v_index(n) for n in prescribed], dtype=int)
        mask = np.ones(model.nv, dtype=bool)
        mask[self.prescribed_v] = False
        self.free_v = np.flatnonzero(mask)
        bases = {s.base_joint for s in system.subtrees if s.base_joint is not None}
        names, position_q, position_v = [], [], []
        for j in range(1, model.njoints):
            name, joint = model.names[j], model.joints[j]
            if name in bases or name in self.prescribed:
                continue
            if joint.nq != 1:
                raise ConfigError(field, f"joint {name!r} is a continuous joint (cos, sin): not supported among the "
                                         "free joints")
            names.append(name)
            position_q.append(joint.idx_q)
            position_v.append(joint.idx_v)
        self.position_names = tuple(names)
        self.position_q = np.array(position_q, dtype=int)
        free_of = {int(v): k for k, v in enumerate(self.free_v)}
        self.position_rows = np.array([free_of[v] for v in position_v], dtype=int)    # their rates in velocities
        n = len(self.free_v)
        self._mass_index = np.array([min(i, j) * model.nv + max(i, j) for i in self.free_v for j in self.free_v])
        self._n_free = n
        self._flexibility = flexibility
        self.q = system.neutral()       # floating bases at the identity pose, rotors relaxed
        self.v = np.zeros(model.nv)
        self._a = np.zeros(model.nv)

    def elastic_matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The springs and dampers of eq. 12 on the free coordinates, at the model's current values: (K_x, C_f,
        f_0) with tau_f = f_0 - K_x positions - C_f velocities (K_x: free velocities x positions)."""
        flexibility, nf = self._flexibility, self._n_free
        stiffness, damping, offset = np.zeros((nf, len(self.position_q))), np.zeros((nf, nf)), np.zeros(nf)
        if flexibility is None:
            return stiffness, damping, offset
        free_of = np.full(self.model.nv, -1)
        free_of[self.free_v] = np.arange(nf)
        position_of = {int(q): k for k, q in enumerate(self.position_q)}
        rows = free_of[flexibility.selected_v]
        columns = np.array([position_of[int(q)] for q in flexibility.selected_q], dtype=int)
        stiffness[np.ix_(rows, columns)] = flexibility.K
        damping[np.ix_(rows, rows)] = flexibility.C
        offset[rows] = flexibility.f0
        return stiffness, damping, offset

    def free_mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M_ff (n_f x n_f) at configuration q."""
        mass = pin.crba(self.model, self.data, q)
        return mass.take(self._mass_index).reshape(self._n_free, self._n_free)

    def acceleration(self, positions: np.ndarray, velocities: np.ndarray, q: np.ndarray, v: np.ndarray,
                     a: np.ndarray, force: np.ndarray, elastic: tuple) -> np.ndarray:
        """a_f of eq. (1). q, v, a: full arrays holding the prescribed coordinates' motion at the instant (their
        free entries are overwritten: q and v change in place); force: the actuators' generalized force on the
        free coordinates (n_f, N m); elastic: elastic_matrices(), the springs and dampers added to it."""
        q.put(self.position_q, positions)
        v.put(self.free_v, velocities)
        mass = pin.crba(self.model, self.data, q)
        bias = pin.rnea(self.model, self.data, q, v, a)
        stiffness, damping, offset = elastic
        force = force + offset - stiffness.dot(positions) - damping.dot(velocities) - bias.take(self.free_v)
        _, acceleration, info = _dposv(mass.take(self._mass_index).reshape(self._n_free, self._n_free), force,
                                       0, 1, 1)
        if info:
            raise np.linalg.LinAlgError(f"free mass matrix not positive definite (LAPACK dposv info {info})")
        return acceleration
