"""Independent reference for flexible links: the seed 000 planar two-link arm with its last link as N rigid segments
joined by torsional springs and dampers (a Hencky bar chain), built as a plain Pinocchio chain and integrated by
scipy's implicit Radau method.

It shares nothing with the product's assumed-mode formulation (docs/flexibility.md) but Pinocchio's `aba` on an
ordinary tree: no mode shapes, no modal bodies, no constant map T, no manifold integrator. Planar by construction:
the base is a chain of prismatic x, prismatic y and revolute z joints (all coordinates Euclidean, so solve_ivp
integrates [q, v] directly); the seed 000 study is planar (joint axes z, starting at rest), so the product's
free-flying 3-D model must move in that plane too.

Beam (docs/flexibility.md sec. 2): uniform, line density mu, bending stiffness EI, length L, clamped in its link
frame. Segment k (k = 0..N-1) is a uniform rod of length l = L/N (mass mu l, inertia mu l^3/12 about its centre)
hinged at x_k = k l on the previous segment (the link frame for k = 0). The hinge carries the curvature of the
beam around it: stiffness EI / l for the interior hinges (half a segment on each side) and 2 EI / l at the clamp
(half a segment); the bar chain's frequencies then converge to the Euler-Bernoulli ones as 1/N^2 (checked by the
test). Damping: stiffness-proportional, c_k = 2 zeta_1 / omega_1 k_k, which gives each continuum mode n the damping
ratio zeta_1 omega_n / omega_1 (the product's modal model is given the same ratios). Whatever inertia the URDF link
has beyond the uniform rod is a rigid rotary inertia on the link frame, as in the product (eq. 8).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.integrate import solve_ivp

# seed 000 numerical study (urdf/planar_two_link.urdf)
BASE_MASS, BASE_IZZ, MOUNT_X = 4.0, 0.4, 0.5
LINK_MASS, LINK_LENGTH, LINK_IZZ = 1.0, 1.0, 0.1


@dataclass
class SegmentedArm:
    model: pin.Model
    joint_v: dict                 # name -> v index: "x", "y", "yaw", "joint_1", "joint_2", hinges "hinge_k"
    stiffness: np.ndarray         # per hinge, N m/rad
    damping: np.ndarray           # per hinge, N m s/rad
    hinge_v: np.ndarray
    tip_frame: int
    root_frame: int               # link 2's frame (the beam's clamp)


def segmented_arm(segments: int, ei: float, mass_per_length: float, zeta1: float, omega1: float) -> SegmentedArm:
    """The seed 000 arm with link 2 as `segments` rigid segments (0: a rigid link 2)."""
    model = pin.Model()
    jx = model.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "x")
    jy = model.addJoint(jx, pin.JointModelPY(), pin.SE3.Identity(), "y")
    base = model.addJoint(jy, pin.JointModelRZ(), pin.SE3.Identity(), "yaw")
    model.appendBodyToJoint(base, pin.Inertia(BASE_MASS, np.zeros(3), np.diag([BASE_IZZ] * 3)), pin.SE3.Identity())
    j1 = model.addJoint(base, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([MOUNT_X, 0, 0])), "joint_1")
    link = pin.Inertia(LINK_MASS, np.array([LINK_LENGTH / 2, 0, 0]), np.diag([0.01, LINK_IZZ, LINK_IZZ]))
    model.appendBodyToJoint(j1, link, pin.SE3.Identity())
    j2 = model.addJoint(j1, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([LINK_LENGTH, 0, 0])), "joint_2")
    root_frame = model.addFrame(pin.Frame("link_2", j2, 0, pin.SE3.Identity(), pin.FrameType.OP_FRAME))
    hinges, stiffness = [], []
    if segments == 0:
        model.appendBodyToJoint(j2, link, pin.SE3.Identity())
        tip_joint, tip_offset = j2, LINK_LENGTH
    else:
        rod_mass = mass_per_length * LINK_LENGTH
        rest = LINK_IZZ - rod_mass * LINK_LENGTH ** 2 / 12.0          # the URDF's inertia beyond the rod (eq. 8)
        model.appendBodyToJoint(j2, pin.Inertia(0.0, np.zeros(3), np.diag([0.0, 0.0, rest])), pin.SE3.Identity())
        length = LINK_LENGTH / segments
        parent, offset = j2, 0.0
        for k in range(segments):
            hinge = model.addJoint(parent, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([offset, 0, 0])),
                                   f"hinge_{k}")
            mass = mass_per_length * length
            model.appendBodyToJoint(hinge, pin.Inertia(mass, np.array([length / 2, 0, 0]),
                                                       np.diag([0.0, 1.0, 1.0]) * mass * length ** 2 / 12.0),
                                    pin.SE3.Identity())
            hinges.append(hinge)
            stiffness.append((2.0 if k == 0 else 1.0) * ei / length)
            parent, offset = hinge, length
        tip_joint, tip_offset = parent, length
    tip_frame = model.addFrame(pin.Frame("tip", tip_joint, 0, pin.SE3(np.eye(3), np.array([tip_offset, 0, 0])),
                                         pin.FrameType.OP_FRAME))
    names = {model.names[j]: model.joints[j].idx_v for j in range(1, model.njoints)}
    stiffness = np.array(stiffness)
    return SegmentedArm(model, names, stiffness, 2.0 * zeta1 / omega1 * stiffness,
                        np.array([model.joints[h].idx_v for h in hinges], dtype=int), tip_frame, root_frame)


def simulate(arm: SegmentedArm, torque, times: np.ndarray, rtol: float = 1e-9, atol: float = 1e-11) -> dict:
    """Radau from rest (arm stretched along x) with joint torques torque(t) -> (tau_1, tau_2) on joints 1 and 2;
    returns the tip position in link 2's frame and in the world (plane) at `times`, and the joint and base angles."""
    model = arm.model
    data = model.createData()
    nv = model.nv
    j1, j2 = arm.joint_v["joint_1"], arm.joint_v["joint_2"]

    def forces(t, q, v):
        tau = np.zeros(nv)
        tau[j1], tau[j2] = torque(t)
        tau[arm.hinge_v] -= arm.stiffness * q[arm.hinge_v] + arm.damping * v[arm.hinge_v]
        return tau

    def rhs(t, y):
        q, v = y[:nv], y[nv:]
        return np.concatenate((v, pin.aba(model, data, q, v, forces(t, q, v))))

    def jacobian(t, y):
        """d[v, a]/d[q, v] from Pinocchio's analytic ABA derivatives plus the springs' and dampers' -M^-1 K, -M^-1 C
        (the hinge forces depend on q and v too)."""
        q, v = y[:nv], y[nv:]
        da_dq, da_dv, minv = (np.array(m) for m in pin.computeABADerivatives(model, data, q, v, forces(t, q, v)))
        minv = np.triu(minv) + np.triu(minv, 1).T
        da_dq[:, arm.hinge_v] -= minv[:, arm.hinge_v] * arm.stiffness
        da_dv[:, arm.hinge_v] -= minv[:, arm.hinge_v] * arm.damping
        out = np.zeros((2 * nv, 2 * nv))
        out[:nv, nv:] = np.eye(nv)
        out[nv:, :nv], out[nv:, nv:] = da_dq, da_dv
        return out

    result = solve_ivp(rhs, (times[0], times[-1]), np.zeros(2 * nv), method="Radau", t_eval=times, rtol=rtol,
                       atol=atol, jac=jacobian)
    if not result.success:
        raise RuntimeError(result.message)
    out = {"t": result.t, "tip_local": [], "tip_world": [], "joints": [], "base_angle": []}
    for y in result.y.T:
        q = y[:nv]
        pin.framesForwardKinematics(model, data, q)
        out["tip_local"].append(data.oMf[arm.root_frame].actInv(data.oMf[arm.tip_frame].translation))
        out["tip_world"].append(data.oMf[arm.tip_frame].translation.copy())
        out["joints"].append([q[j1], q[j2]])
        out["base_angle"].append(q[arm.joint_v["yaw"]])
    return {k: np.asarray(v) for k, v in out.items()}
