"""Grasp a drifting, tumbling target and read the impulse of the grasp.

The servicer's hand (frame right_hand, approach axis z) is 5 mm from the target's grapple fixture (frame
target/grapple_frame, outward axis x), both spacecraft drifting slowly: inside the capture envelope of
docs/contact.md sec. 1 (2 cm, 0.05 rad, 2 cm/s, 0.02 rad/s). Closing the gripper welds the hand to the target by
a perfectly plastic impulse P (docs/contact.md sec. 4; seed 004 sec. 2.4): M (v+ - v-) = J^T P, J v+ = 0.
P acts between two bodies of the system, so the total momentum does not change, and the kinetic energy falls by
the plastic-impact loss dT = 1/2 u^T (J M^-1 J^T)^-1 u, u = J v- (docs/contact.md eq. 2), computed here from
Pinocchio's CRBA and frame Jacobians and compared with what the simulator reports. SI units; P in the
right_hand frame, momenta in the world frame (L about the system's centre of mass).

    .venv/bin/python examples/grasp_impulse.py
"""
import numpy as np
import pinocchio as pin

from space_robot_dynamics import SimulationSettings, Simulator, build_model, initial_state_from

ARM = dict(zip([f"right_j{i}" for i in range(7)],        # rad: servicer_pregrasp.yaml's pre-grasp pose
               [0.297419, -0.565761, -0.910255, 1.743777, -0.247794, -1.160595, -0.542281]))
OFFSET = np.array([0.004, -0.003, 0.0])                   # m, world: the fixture's origin from the hand's

system = build_model("servicer_target")
model, data = system.model, system.model.createData()
hand_id, fixture_id = system.frame_id("right_hand"), system.frame_id("target/grapple_frame")

# Place the target so that its fixture faces the hand: fixture x axis against the hand's z axis, 5 mm off.
q, _ = initial_state_from(system, {"joint_positions": ARM})
pin.framesForwardKinematics(model, data, q)
fixture_in_base = data.oMf[system.frame_id("target/base_link")].actInv(data.oMf[fixture_id])
oMg = pin.SE3(data.oMf[hand_id].rotation @ pin.rpy.rpyToMatrix(0.0, np.pi / 2, 0.0),
              data.oMf[hand_id].translation + OFFSET)
oMt = oMg * fixture_in_base.inverse()                     # the target's base link in the world
q0, v0 = initial_state_from(system, {                     # twists in each base-link frame
    "joint_positions": ARM, "joint_velocities": {"right_j1": 0.002, "right_j3": -0.002},
    "servicer": {"linear_velocity": [0.003, 0.0, -0.002], "angular_velocity": [0.001, -0.002, 0.0]},
    "target": {"position": oMt.translation.tolist(), "orientation_xyzw": pin.Quaternion(oMt.rotation).coeffs().tolist(),
               "linear_velocity": [-0.002, 0.004, 0.0], "angular_velocity": [0.003, 0.0, -0.004]}})

# The expected loss, eq. 2: J = relative twist of the hand and of the target point at the hand (hand axes).
pin.computeJointJacobians(model, data, q0)
pin.framesForwardKinematics(model, data, q0)
hand = model.frames[hand_id]
target_joint = model.frames[fixture_id].parentJoint
c2 = data.oMi[target_joint].actInv(data.oMf[hand_id])    # where the hand is, as a point fixed on the target
J = (pin.getFrameJacobian(model, data, hand.parentJoint, hand.placement, pin.LOCAL)
     - pin.getFrameJacobian(model, data, target_joint, c2, pin.LOCAL))
M = pin.crba(model, data, q0)
M = np.triu(M) + np.triu(M, 1).T
u = J @ v0
expected_loss = 0.5 * u @ np.linalg.solve(J @ np.linalg.solve(M, J.T), u)

sim = Simulator(system, SimulationSettings(dt=1e-3), q0, v0)
before = sim.observe()
sim.command_gripper(True)                                 # acts at the start of the next step
sim.step()                                                # the impulse, then 1 ms held (no torques)
after = sim.observe()
event = sim.contact_events[-1]
print(event.message)
print(f"relative_speed_before = {np.linalg.norm(u[:3]):.3e} m/s, {np.linalg.norm(u[3:]):.3e} rad/s  (hand frame)")
print(f"impulse_force = {np.linalg.norm(event.impulse[:3]):.4e} N s  {np.round(event.impulse[:3], 6)} (right_hand)")
print(f"impulse_torque = {np.linalg.norm(event.impulse[3:]):.4e} N m s  {np.round(event.impulse[3:], 6)}")
print(f"linear_momentum_change = {np.abs(after.momentum.linear - before.momentum.linear).max():.3e} kg m/s"
      f"  (of |p| = {np.linalg.norm(before.momentum.linear):.3f}, world frame)")
print(f"angular_momentum_change = {np.abs(after.momentum.angular - before.momentum.angular).max():.3e} kg m^2/s"
      f"  (of |L_G| = {np.linalg.norm(before.momentum.angular):.3f})")
print(f"momentum_change_across_grasp = {event.momentum.relative_change:.3e}  (relative, simulator's bookkeeping)")
print(f"energy_loss_reported = {event.energy_loss:.6e} J")
print(f"energy_loss_expected = {expected_loss:.6e} J  (eq. 2, plastic impact)")
print(f"kinetic_energy_drop = {before.momentum.kinetic_energy - after.momentum.kinetic_energy:.6e} J  (T- - T+)")
print(f"energy_loss_relative_error = {abs(event.energy_loss - expected_loss) / expected_loss:.3e}")
print(f"loop_drift = {sim.contact_state().drift_position:.3e} m, {sim.contact_state().drift_angle:.3e} rad")
