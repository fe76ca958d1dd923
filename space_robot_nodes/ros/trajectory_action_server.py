"""rclpy glue: control_msgs/action/FollowJointTrajectory on the controller node (rclpy.action, Humble's API).

What MoveIt 2's moveit_simple_controller_manager sends to a controller of type FollowJointTrajectory: with
controller name arm_controller and action_ns follow_joint_trajectory it drives this node exactly as a
ros2_control joint_trajectory_controller. The semantics (acceptance, preemption, tolerances, feedback, result
codes) are space_robot_nodes.trajectory_execution's, which the controller core runs at every control update.

How the goal's life maps onto rclpy's ActionServer (all callbacks on the node's executor, e.g. rclpy.spin's
SingleThreadedExecutor, so they never run concurrently with the control timer):
- goal_callback accepts every request: the goal is validated against the controller's state when it starts,
  and a rejection is then reported as a result (ABORTED with INVALID_GOAL or INVALID_JOINTS and an error string
  naming the field), which a client such as MoveIt logs; a plain REJECT response carries no reason.
- execute_callback (a coroutine) submits the goal to the core, then awaits an rclpy Future that the core's
  result completes (from the control timer, a cancel or a preemption); the executor resumes the coroutine,
  which sets the goal's terminal state and returns the Result message. Feedback is published from the control
  timer as the core emits it.
- cancel_callback makes the core hold the measured position and end the goal CANCELED, and accepts the request
  (a goal that had not started yet is ended CANCELED when its execute_callback runs).
control_msgs is imported here only: without it the controller node runs with the topic interface alone.
"""
from __future__ import annotations

from space_robot_dynamics.errors import CommandError
from space_robot_nodes import conversions as cv
from space_robot_nodes.trajectory_execution import (
    CANCELED,
    SUCCEEDED,
    SUCCESSFUL,
    JointTolerance,
    TrajectoryActionGoal,
    TrajectoryExecution,
    TrajectoryFeedback,
    TrajectoryResult,
)

JOINT_TRAJECTORY_POINT = "trajectory_msgs/msg/JointTrajectoryPoint"


def goal_from_message(goal) -> TrajectoryActionGoal:
    """A FollowJointTrajectory Goal message in the core's plain form. CommandError for the parts this controller
    cannot take at all (a multi-DOF trajectory or component tolerances: it controls single-DOF joints only)."""
    multi_dof = getattr(goal, "multi_dof_trajectory", None)
    if multi_dof is not None and (len(multi_dof.joint_names) or len(multi_dof.points)):
        raise CommandError("multi_dof_trajectory.joint_names", f"this controller has no multi-DOF joints, got "
                                                                f"{list(multi_dof.joint_names)}")
    for field in ("component_path_tolerance", "component_goal_tolerance"):
        if len(getattr(goal, field, ())):
            raise CommandError(f"{field}[0].joint_name", "component tolerances apply to multi-DOF joints, which "
                                                         "this controller does not have")
    names, points, start = cv.read_joint_trajectory(goal.trajectory)
    return TrajectoryActionGoal(names, points, start, _tolerances(goal.path_tolerance),
                                _tolerances(goal.goal_tolerance), cv.seconds(goal.goal_time_tolerance))


def _tolerances(entries) -> list[JointTolerance]:
    return [JointTolerance(t.name, t.position, t.velocity, t.acceleration, getattr(t, "effort", 0.0))
            for t in entries]


def feedback_message(action_type, types, event: TrajectoryFeedback):
    """The Feedback message of a core feedback event (header stamped with the node time of the update)."""
    def point(positions, velocities):
        return types.new(JOINT_TRAJECTORY_POINT, positions=types.float64_sequence(positions),
                         velocities=types.float64_sequence(velocities))
    return action_type.Feedback(header=cv.header(types, event.stamp), joint_names=list(event.joint_names),
                                desired=point(event.desired_positions, event.desired_velocities),
                                actual=point(event.actual_positions, event.actual_velocities),
                                error=point(event.error_positions, event.error_velocities))


def result_message(action_type, result: TrajectoryResult):
    return action_type.Result(error_code=result.error_code, error_string=result.error_string)


class TrajectoryActionServer:
    """One rclpy ActionServer for FollowJointTrajectory on a TrajectoryExecution."""

    def __init__(self, node, types, execution: TrajectoryExecution, name: str, action_type):
        from rclpy.action import ActionServer, CancelResponse, GoalResponse
        from rclpy.task import Future

        self.node = node
        self.types = types
        self.execution = execution
        self.action_type = action_type
        self._accept, self._accept_cancel = GoalResponse.ACCEPT, CancelResponse.ACCEPT
        self._future = Future
        self._running: dict[bytes, tuple] = {}       # goal id -> (goal handle, Future of its TrajectoryResult)
        execution.connect(self.on_event)
        self.server = ActionServer(node, action_type, name, self.execute, goal_callback=self.on_goal,
                                   cancel_callback=self.on_cancel)

    # ---- rclpy callbacks -----------------------------------------------------------------------------
    def on_goal(self, _goal_request):
        return self._accept          # validated when it starts, so that a rejection carries its reason

    def on_cancel(self, goal_handle):
        self.execution.cancel(_goal_id(goal_handle))
        return self._accept_cancel

    async def execute(self, goal_handle):
        goal_id = _goal_id(goal_handle)
        if goal_handle.is_cancel_requested:            # canceled between acceptance and execution
            goal_handle.canceled()
            return result_message(self.action_type, TrajectoryResult(goal_id, CANCELED, SUCCESSFUL,
                                                                     "canceled before it started"))
        done = self._future()
        self._running[goal_id] = (goal_handle, done)
        try:
            try:
                rejected = self.execution.submit(goal_id, goal_from_message(goal_handle.request))
            except CommandError as exc:
                rejected = self.execution.reject(goal_id, exc)
            if rejected is not None:
                self.node.get_logger().error(f"FollowJointTrajectory goal rejected: {rejected.error_string}")
                goal_handle.abort()
                return result_message(self.action_type, rejected)
            result = await done
        finally:
            del self._running[goal_id]
        if result.status == SUCCEEDED:
            goal_handle.succeed()
        elif result.status == CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:                      # aborted (tolerance, preemption); CANCELED is reachable only from CANCELING
            goal_handle.abort()
            self.node.get_logger().warn(f"FollowJointTrajectory goal aborted: {result.error_string}")
        return result_message(self.action_type, result)

    # ---- core events (from the control timer, a cancel or a new goal) --------------------------------
    def on_event(self, event) -> None:
        entry = self._running.get(event.goal_id)
        if entry is None:
            return
        goal_handle, done = entry
        if isinstance(event, TrajectoryFeedback):
            goal_handle.publish_feedback(feedback_message(self.action_type, self.types, event))
        elif not done.done():
            done.set_result(event)


def _goal_id(goal_handle) -> bytes:
    return bytes(goal_handle.goal_id.uuid)


def serve_trajectory_action(node, types, execution: TrajectoryExecution, name: str):
    """The action server, or None (with a warning) when control_msgs is not installed."""
    try:
        from control_msgs.action import FollowJointTrajectory
    except ImportError as exc:
        node.get_logger().warn(f"control_msgs is not available ({exc}): {name} is not served; the topic interface "
                               "(arm_controller/joint_trajectory) still works")
        return None
    return TrajectoryActionServer(node, types, execution, name, FollowJointTrajectory)
