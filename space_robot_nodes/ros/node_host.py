"""Runs a NodeCore inside an rclpy node.

Parameters common to every node: `scenario` (path of a config/scenarios/*.yaml file; relative paths are
looked up in the package share) and `overrides` (string list of FILE.KEY=VALUE entries, the syntax of
`space-robot-sim --set`, e.g. "controller.controller.modes=[joint_tracking]"); both validated like the
files. Publishers of latched topics are transient-local (depth 1), all others reliable/volatile depth 10.

Two ways of running the core's timers:
- `ros_timers` (controller, monitor, adapter, scenario player): one rclpy timer per core timer on the node
  clock, i.e. simulated time when `use_sim_time` is true;
- `paced` (dynamics): the core's timers run in lockstep simulated time (lockstep_graph.Graph), advanced from
  a steady wall-clock timer so that simulated time follows wall time times `real_time_factor`. The dynamics
  node is the source of /clock and never runs on simulated time itself.

A core's `wanted(topic)` (build a message only if somebody takes it) is always true here: the lockstep graph
of a paced core has no subscribers of its own, and the middleware's are not known in advance, so every rate
in config/nodes.yaml is published as configured (the 1 kHz clock included: sim-time timers need it).
"""
from __future__ import annotations

import sys
from collections.abc import Callable

from space_robot_dynamics.errors import SpaceRobotError
from space_robot_nodes.message_types import RosMessageTypes
from space_robot_nodes.node_core import NodeCore
from space_robot_nodes.scenario import DEFAULT_SCENARIO, Scenario, load_scenario, parse_overrides

QUEUE_DEPTH = 10
LATCHED_DEPTH = 1
PACING_PERIOD = 0.005        # s of wall time between catch-up steps of a paced core
MAX_CATCH_UP = 0.1           # s of simulated time run per wall tick at most (no spiral when too slow)


def scenario_from_parameters(node) -> Scenario:
    """Declare `scenario` and `overrides`, then load and validate the scenario they name."""
    from rcl_interfaces.msg import ParameterDescriptor, ParameterType

    path = node.declare_parameter("scenario", DEFAULT_SCENARIO).value
    # An empty-list default would be typed BYTE_ARRAY (rclpy#912): declare the type with dynamic typing.
    descriptor = ParameterDescriptor(type=ParameterType.PARAMETER_STRING_ARRAY, dynamic_typing=True,
                                     description="FILE.KEY=VALUE overrides of the scenario's files")
    overrides = node.declare_parameter("overrides", [], descriptor).value or []
    return load_scenario(path, parse_overrides(list(overrides)))


def qos_profile(transient_local: bool):
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=LATCHED_DEPTH if transient_local else QUEUE_DEPTH,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if transient_local else DurabilityPolicy.VOLATILE)


class RclpyHost:
    """Publishers, subscriptions and timers of one core on one rclpy node."""

    def __init__(self, node, core: NodeCore, mode: str = "ros_timers", tick: float | None = None):
        self.node = node
        self.core = core
        self.publishers = {p.topic: node.create_publisher(core.types.cls(p.msgtype), p.topic,
                                                          qos_profile(p.transient_local))
                           for p in core.publications}
        self.subscriptions = [node.create_subscription(core.types.cls(s.msgtype), s.topic,
                                                       self._guarded(s.callback), QUEUE_DEPTH)
                              for s in core.subscriptions]
        self.timers = []
        if mode == "paced":
            self._setup_paced(tick)
        else:
            core.attach(self._publish, self._ros_now)
            for timer in core.timers:
                self.timers.append(node.create_timer(timer.period, self._timer_callback(timer.callback)))
            core.start()

    # ---- plumbing --------------------------------------------------------------------------------
    def _publish(self, topic: str, msg) -> None:
        self.publishers[topic].publish(msg)

    def _ros_now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def _guarded(self, callback: Callable):
        """A subscription callback that reports bad input instead of killing the node."""
        def run(msg):
            try:
                callback(msg)
            except Exception as exc:  # noqa: BLE001 - the node boundary: no input may stop the node
                self.node.get_logger().error(f"message rejected: {type(exc).__name__}: {exc}")
        return run

    def _timer_callback(self, callback: Callable[[float], None]):
        def run():
            callback(self._ros_now())
        return run

    # ---- paced lockstep (dynamics) -------------------------------------------------------------------
    def _setup_paced(self, tick: float) -> None:
        from rclpy.clock import Clock, ClockType

        from space_robot_nodes.lockstep_graph import Graph

        self.real_time_factor = float(self.node.declare_parameter("real_time_factor", 1.0).value)
        if not self.real_time_factor > 0:
            raise SpaceRobotError(f"real_time_factor: must be > 0, got {self.real_time_factor}")
        self.graph = Graph(tick)
        self.graph.add(self.core)          # attaches the core to the graph's clock; re-point its publisher
        self.core.attach(self._publish, self.core.now, wanted=None)     # None: every message is wanted
        self.wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.wall_start = None
        self.graph.start()
        self.timers.append(self.node.create_timer(PACING_PERIOD, self._pace, clock=self.wall))

    def _pace(self) -> None:
        now = self.wall.now().nanoseconds * 1e-9
        if self.wall_start is None:
            self.wall_start = now
        target = int((now - self.wall_start) * self.real_time_factor / self.graph.tick)
        behind = target - self.graph.ticks
        limit = max(1, int(MAX_CATCH_UP / self.graph.tick))
        if behind > limit:        # slower than asked: drop the backlog rather than fall further behind
            self.node.get_logger().warn(f"simulation {behind * self.graph.tick:.3f} s behind real_time_factor "
                                        f"{self.real_time_factor}; running {limit * self.graph.tick:.3f} s",
                                        throttle_duration_sec=5.0)
            self.wall_start += (behind - limit) * self.graph.tick / self.real_time_factor
            behind = limit
        if behind > 0:
            self.graph.run_ticks(behind)


def run_node(node_name: str, build: Callable, mode: str = "ros_timers", args=None) -> int:
    """rclpy.init, create the node, build its core with build(node, types) -> (core, tick), spin, shut down."""
    try:
        import rclpy
        from rclpy.executors import ExternalShutdownException
    except ImportError as exc:
        print(f"{node_name}: rclpy is not available ({exc}); source a ROS 2 installation first, or use the "
              "standalone runtime: space-robot-sim", file=sys.stderr)
        return 1
    rclpy.init(args=args)
    node = None
    status = 0
    try:
        node = rclpy.create_node(node_name)
        core, tick = build(node, RosMessageTypes())
        RclpyHost(node, core, mode, tick)
        node.get_logger().info(f"{node_name} running")
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (SpaceRobotError, ImportError) as exc:     # bad configuration or a missing message package
        print(f"{node_name}: {exc}", file=sys.stderr)
        status = 2
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return status
