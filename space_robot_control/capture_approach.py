"""Approach of a tumbling target with a joint-space trajectory that follows its grapple fixture (docs/contact.md
sec. 9): what the controller has today, a JointTrajectory, planned from the initial state.

Predictions, at the trajectory's knot times t_k:
- the fixture's pose: the target simulated alone (the Simulator, torque free, the servicer kept at rest: the two
  subtrees move independently before the grasp), from the initial state;
- the bus: its attitude held (the attitude controller's setpoint), its position from the servicer's centre of mass,
  which moves uniformly before the grasp (no external force on the servicer): c(t) = c_0 + v_c t, and
  p_bus = c(t) - R_bus c_b(q_arm), c_b the servicer's centre of mass in the bus frame (seed 004 eq. 2.11, linear
  momentum integrable; docs/holonomy.md sec. 6).
The hand's pose at t_k: the fixture's pose, then s(t_k) out along its axis and turned so that the approach axis
points into it, with the roll about that axis the initial pose suggests (the seed's hand x axis projected):

    H_d(t) = F(t) * (R_rel, s(t) a_fix)                                                               (1)

s = standoff while following, then a quintic (zero rate and acceleration at both ends) down to 0 (contact), then 0.
Each knot's arm angles come from damped least squares on the hand's 6D error (log6), with the servicer-CoM
correction of the bus position in the Jacobian (the arm's subtree CoM Jacobian: moving the arm moves the bus the
other way); knot rates and accelerations from central differences of neighbouring solutions (the knots are
sample_period apart; the trajectory follower's quintics then match them to O(h^4)). Phases (times from the
trajectory's start): reach the pre-grasp pose at `reach_time` (one knot: the follower's quintic from the stowed
pose), follow at the standoff for `follow_time`, approach in `approach_time`, stay at contact for `dwell_time`
(the gripper closes then) and `hold_time` more.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

_IK_ITERATIONS = 300
_IK_DAMPING = 1e-2           # m / rad: damped least squares (Levenberg-Marquardt, lambda^2 = damping^2 |e|)
_IK_STEP = 0.2               # rad: the largest step of the arm angles per iteration (far from the solution)
_IK_TOLERANCE = 1e-10        # m / rad: the 6D error at which a knot is solved


@dataclass(frozen=True)
class CaptureTiming:
    """Durations (s) of the approach's phases and its geometry (m, s); see the module docstring."""

    reach_time: float
    follow_time: float
    approach_time: float
    dwell_time: float
    hold_time: float
    standoff: float
    sample_period: float


@dataclass(frozen=True)
class CapturePlan:
    """The JointTrajectory's points: (time_from_start s, positions rad, velocities rad/s, accelerations rad/s^2)
    for `joint_names`; close_at (s from the trajectory start): when the gripper closes; contact_at: when the hand
    reaches the fixture; ik_error: the largest 6D error left at a knot (m or rad)."""

    joint_names: tuple
    points: tuple
    close_at: float
    contact_at: float
    ik_error: float
    approach_at: float = 0.0                 # s from the trajectory start: the standoff is left
    # the hand's pose at contact in the fixture frame (eq. 1 with s = 0): translation (m), quaternion x, y, z, w
    contact_in_fixture: tuple = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))


ORBIT_PREDICTION_STEP = 0.01     # s, the fixture's predicted motion in orbit (fixture_poses)


def _smooth(x: float) -> float:
    """Quintic from 0 to 1 on [0, 1] with zero first and second derivatives at both ends."""
    x = min(max(x, 0.0), 1.0)
    return x ** 3 * (10.0 - 15.0 * x + 6.0 * x * x)


class CaptureApproachPlanner:
    def __init__(self, system: SystemModel, timing: CaptureTiming, dt: float = 1e-3, orbit=None):
        """`orbit`: the scenario's OrbitConfig (docs/orbit.md), which the fixture's predicted motion then feels
        (poses in the LVLH frame); None in free space."""
        if system.grasp is None:
            raise ConfigError("goals.capture", "the model has no grasp section: nothing to approach")
        self.system = system
        self.timing = timing
        self.dt = dt
        self.orbit = orbit
        self.model = system.model
        self.data = self.model.createData()
        grasp = system.grasp
        self.ee_frame, self.fixture_frame = grasp.ee_frame, grasp.target_frame
        self.fixture_axis = grasp.target_axis
        self.approach_axis = grasp.approach_axis
        self.robot = system.subtree_of(self.model.frames[self.ee_frame].name)
        self.target = system.subtree_of(self.model.frames[self.fixture_frame].name)
        if self.robot.base_joint is None or self.target.base_joint is None:
            raise ConfigError("goals.capture", "the capture approach needs a floating servicer and target")
        self._robot_q = system.q_slice(self.robot.base_joint)
        self._arm_q = np.array([system.q_slice(n).start for n in system.arm_joints], dtype=int)
        self._arm_v = system.arm_v

    # ---- predictions --------------------------------------------------------------------------
    def fixture_poses(self, q0: np.ndarray, v0: np.ndarray, times: np.ndarray) -> list:
        """The fixture's world placement at each absolute time in `times` (increasing, >= 0), the target alone."""
        v = np.zeros(self.model.nv)
        target_v = self.system.v_slice(self.target.base_joint)
        v[target_v] = v0[target_v]
        # in orbit each step costs ~10x a free one (the tidal wrenches on every body): the prediction, the target
        # coasting (RK4 error ~(omega dt)^5: 1e-17 at 2.67 deg/s), steps at ORBIT_PREDICTION_STEP; in free space at the
        # scenario's dt, as it always has
        dt = max(self.dt, ORBIT_PREDICTION_STEP) if self.orbit is not None else self.dt
        sim = Simulator(self.system, SimulationSettings(dt=dt), q0, v, orbit=self.orbit)
        poses = []
        for t in times:
            while sim.state.t < t - 0.5 * dt:
                sim.step()
            pin.framesForwardKinematics(self.model, self.data, sim.lvlh_state()[0] if self.orbit else sim.state.q)
            poses.append(self.data.oMf[self.fixture_frame].copy())
        return poses

    def _servicer_centre(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(c_0, v_c): the servicer's centre of mass and its velocity (world)."""
        root = self.robot.root_joint_id
        centre = self._subtree_centre(q)                     # first: the Jacobian below uses data.com as work space
        return centre, pin.jacobianSubtreeCenterOfMass(self.model, self.data, q, root) @ v

    def _subtree_centre(self, q: np.ndarray) -> np.ndarray:
        """The servicer's centre of mass (world): Pinocchio's subtree centre data.com[root] is in the root joint's
        frame."""
        root = self.robot.root_joint_id
        pin.centerOfMass(self.model, self.data, q)
        return self.data.oMi[root].act(self.data.com[root])

    # ---- inverse kinematics -------------------------------------------------------------------
    def solve(self, q: np.ndarray, target: pin.SE3, centre: np.ndarray) -> tuple[np.ndarray, float]:
        """Arm angles putting the hand at `target` (world) with the bus attitude of q held and the servicer's
        centre of mass at `centre` (its position follows): (q with the solution, remaining 6D error)."""
        model, data = self.model, self.data
        q = q.copy()
        root = self.robot.root_joint_id
        error = np.inf
        for _ in range(_IK_ITERATIONS):
            self._place_bus(q, centre)
            pin.computeJointJacobians(model, data, q)
            pin.updateFramePlacements(model, data)
            hand = data.oMf[self.ee_frame]
            twist = pin.log6(hand.actInv(target)).vector            # hand frame
            error = float(np.linalg.norm(twist))
            if error < _IK_TOLERANCE:
                break
            jacobian = pin.getFrameJacobian(model, data, self.ee_frame, pin.ReferenceFrame.LOCAL)[:, self._arm_v]
            com = pin.jacobianSubtreeCenterOfMass(model, data, q, root)[:, self._arm_v]
            jacobian[:3] -= hand.rotation.T @ com                    # the bus moves against the arm's CoM
            damping = _IK_DAMPING ** 2 * min(error, 1.0)
            step = jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + damping * np.eye(6), twist)
            largest = float(np.abs(step).max())
            q[self._arm_q] += step if largest <= _IK_STEP else step * (_IK_STEP / largest)
        self._place_bus(q, centre)
        return q, error

    def _place_bus(self, q: np.ndarray, centre: np.ndarray) -> None:
        """The bus position that puts the servicer's centre of mass at `centre` (its attitude kept), in place."""
        start = self._robot_q.start
        q[start:start + 3] += centre - self._subtree_centre(q)

    # ---- the plan -----------------------------------------------------------------------------
    def plan(self, q0: np.ndarray, v0: np.ndarray, start_time: float, seed=None) -> CapturePlan:
        """The approach from the state (q0, v0) at t = 0 for a trajectory starting at `start_time` (s); `seed`: arm
        angles (arm_joints order) the first knot's inverse kinematics starts from (None: q0's), which picks the
        arm's configuration and the hand's roll about the approach axis."""
        timing = self.timing
        start_pose = q0.copy()
        if seed is not None:
            start_pose[self._arm_q] = seed
        h = timing.sample_period
        follow_start = timing.reach_time
        approach_start = follow_start + timing.follow_time
        contact = approach_start + timing.approach_time
        close = contact + timing.dwell_time
        end = close + timing.hold_time
        knots = np.arange(follow_start, end + 0.5 * h, h)
        samples = np.concatenate(([knots[0] - h], knots, [knots[-1] + h]))    # one more each side for the rates
        poses = self.fixture_poses(q0, v0, start_time + samples)
        centre, centre_rate = self._servicer_centre(q0, v0)
        roll = self._relative_rotation(start_pose, poses[0])
        q = start_pose
        positions, worst = [], 0.0
        for t, fixture in zip(samples, poses):
            if t <= approach_start:
                s = timing.standoff
            else:
                s = timing.standoff * (1.0 - _smooth((t - approach_start) / timing.approach_time))
            target = fixture * pin.SE3(roll, s * self.fixture_axis)
            q, error = self.solve(q, target, centre + centre_rate * (start_time + t))
            worst = max(worst, error)
            positions.append(q[self._arm_q].copy())
        positions = np.array(positions)
        velocities = (positions[2:] - positions[:-2]) / (2.0 * h)
        accelerations = (positions[2:] - 2.0 * positions[1:-1] + positions[:-2]) / (h * h)
        points = tuple((float(t), tuple(p), tuple(v), tuple(a))
                       for t, p, v, a in zip(knots, positions[1:-1], velocities, accelerations))
        contact_pose = (tuple(np.zeros(3)), tuple(float(x) for x in pin.Quaternion(roll).coeffs()))
        return CapturePlan(tuple(self.system.arm_joints), points, float(close), float(contact), worst,
                           float(approach_start), contact_pose)

    def _relative_rotation(self, q0: np.ndarray, fixture: pin.SE3) -> np.ndarray:
        """R_rel of eq. (1): the approach axis into the fixture (along -a_fix), the hand's roll about it that of
        the initial pose (its x axis projected on the plane across the approach)."""
        pin.framesForwardKinematics(self.model, self.data, q0)
        seed = self.data.oMf[self.ee_frame].rotation
        z = -(fixture.rotation @ self.fixture_axis)                  # the approach axis, world
        x = seed[:, 0] - (seed[:, 0] @ z) * z
        if np.linalg.norm(x) < 1e-6:
            x = seed[:, 1] - (seed[:, 1] @ z) * z
        x /= np.linalg.norm(x)
        hand = np.column_stack((x, np.cross(z, x), z))              # world, approach axis as the hand's z
        a = self.approach_axis                                       # hand frame; map the hand's z onto it
        align = pin.Quaternion.FromTwoVectors(np.array([0.0, 0.0, 1.0]), a).matrix()
        return fixture.rotation.T @ hand @ align.T
