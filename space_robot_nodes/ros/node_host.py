"""Runs a NodeCore inside an rclpy node (Humble or newer).

Parameters common to every node: `scenario` (path of a config/scenarios/*.yaml file; relative paths are
looked up in the package share) and `overrides` (string list of FILE.KEY=VALUE entries, the syntax of
`space-robot-sim --set`, e.g. "controller.controller.modes=[joint_tracking]"); both validated like the
files. Publishers of latched topics are transient-local (depth 1), all others reliable/volatile depth 10;
subscriptions are reliable, depth 10, or depth 1 where the core only needs the newest message (state).

Messages. The cores build and read the same rosbags typestore messages as in the standalone runtime; the host
publishes their CDR bytes and takes raw CDR bytes from its subscriptions (rclpy's raw publish/take), so no
message is converted to or from rclpy's Python classes on the way (only the FollowJointTrajectory action
server, ros/trajectory_action_server.py, works on rclpy's classes). A message type must therefore exist both
in ROS 2 (for the topic's type) and in the typestore (ROS 2 Humble's definitions, plus Intera's JointCommand).

Scheduling. The host runs the core itself, in one thread: its subscriptions are taken by the host (a callback
group that rclpy's executor never runs) and its timers run on a TimerSchedule; everything else of the node
(parameter services, the /clock subscription of use_sim_time, the FollowJointTrajectory action server) goes
through rclpy's SingleThreadedExecutor, one pass every COLD_PERIOD. A pass of Humble's executor costs a few
hundred microseconds, so a core whose 1 kHz messages each woke it would spend most of a core on the executor
alone; here a wake costs a wait and a take. Three ways of timing the core's timers:
- simulated time (`use_sim_time` true): the node's time is the latest of /clock (100 Hz, config/nodes.yaml)
  and the stamps of the core's time-source subscription (node_core: the controller's joint_states), and the
  host wakes on either. The controller's 1 kHz update thus runs on every 1 kHz state sample at its stamp, as
  in the lockstep runtime, while the other nodes' timers need only the 100 Hz clock.
- the wall clock (`use_sim_time` false, e.g. on the real Sawyer): the host sleeps until the next timer is due
  on the node's clock and takes the subscriptions' messages then.
- `paced` (dynamics): simulated time follows the steady wall clock times `real_time_factor` (WallPacing).
  Each physics step is split as the lockstep graph orders a tick: at step k's wall time the host takes the
  commands, runs the ACTUATE timers (the step from t_k), then the sensor and monitor timers of t_k+1 (its state
  out); the controller's answer to that state has until the next step's wall time to arrive, so the loop over
  ROS 2 closes as in the standalone runtime whenever the controller answers within one step. Parameter
  `wait_for_commands` (s, default 0): before simulated time starts, wait that long at most for a publisher on
  every command topic (then SETTLE s for discovery to finish both ways), so that a launched graph starts at
  t = 0 with its controller connected instead of simulating its first seconds without one. Parameter
  `start_delay` (s, default 0): then hold t = 0 that long with the initial state published, so a viewer
  that takes a while to start (RViz) shows the whole run.
A core's `wanted(topic)` is answered from the publisher's matched subscription count (refreshed each cold pass):
a message nobody subscribes to is not built.

Shutdown: SIGINT and SIGTERM only note a request (stop_signals.py); the loop ends within one wait, the core's
last state and a final "<node>: node" diagnostic status go out, and the node exits with status 0.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from functools import partial

from space_robot_dynamics.errors import SpaceRobotError
from space_robot_nodes import conversions as cv
from space_robot_nodes.cdr_encoders import encoder_for
from space_robot_nodes.message_types import RosbagsMessageTypes, RosMessageTypes
from space_robot_nodes.node_core import ACTUATE, NodeCore
from space_robot_nodes.timer_schedule import TimerSchedule
from space_robot_nodes.wall_pacing import WallPacing
from space_robot_scenario import DEFAULT_SCENARIO, Scenario, load_scenario, parse_overrides

from .stop_signals import StopSignals

QUEUE_DEPTH = 10
LATCHED_DEPTH = 1
# s of wall time between passes of rclpy's executor (parameter services, the action server, rclpy's own /clock
# subscription): a pass costs ~0.5 ms whatever is ready, so at 10 Hz it takes ~0.5 % of a core per node
COLD_PERIOD = 0.1
DUE_SLACK = 1e-9             # s (as TimerSchedule)
MAX_CATCH_UP = 0.1           # s of simulated time run back to back at most (no spiral when too slow)
SETTLE = 0.5                 # s after the command publishers appear (wait_for_commands)
# s of wall time between copies of the initial state while simulated time is held (start_delay): a viewer or a
# robot_state_publisher that subscribes during the hold gets it (the state topics are volatile)
HOLD_REPUBLISH = 0.5
CLOCK_TOPIC = "/clock"
SENSING = frozenset(range(ACTUATE))     # phases before the physics step
ACTUATING = frozenset((ACTUATE,))


def _rosbags_bytes(serialize, msg, typename: str) -> bytes:
    return bytes(serialize(msg, typename))


def scenario_from_parameters(node) -> Scenario:
    """Declare `scenario` and `overrides`, then load and validate the scenario they name."""
    from rcl_interfaces.msg import ParameterDescriptor, ParameterType

    path = node.declare_parameter("scenario", DEFAULT_SCENARIO).value
    # An empty-list default would be typed BYTE_ARRAY (rclpy#912): declare the type with dynamic typing.
    descriptor = ParameterDescriptor(type=ParameterType.PARAMETER_STRING_ARRAY, dynamic_typing=True,
                                     description="FILE.KEY=VALUE overrides of the scenario's files")
    overrides = node.declare_parameter("overrides", [], descriptor).value or []
    return load_scenario(path, parse_overrides(list(overrides)))


def qos_profile(transient_local: bool, depth: int | None = None, best_effort: bool = False):
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    if depth is None:
        depth = LATCHED_DEPTH if transient_local else QUEUE_DEPTH
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if transient_local else DurabilityPolicy.VOLATILE)


def polled_group():
    """A callback group whose entities rclpy's executor never runs, nor waits on: the host takes them."""
    from rclpy.callback_groups import CallbackGroup

    class PolledGroup(CallbackGroup):
        def can_execute(self, entity) -> bool:
            return False

        def beginning_execution(self, entity) -> bool:
            return False

        def ending_execution(self, entity) -> None:
            pass

    return PolledGroup()


def _stamp_seconds(msg) -> float:
    stamp = msg.header.stamp
    return stamp.sec + stamp.nanosec * 1e-9


class PolledInput:
    """One subscription taken by the host as raw CDR and read with the typestore."""

    def __init__(self, node, ros_types: RosMessageTypes, typestore, topic: str, msgtype: str,
                 callback: Callable | None, group, depth: int, best_effort: bool = False, time_source: bool = False):
        self.msgtype = msgtype
        self.callback = callback
        self.time_source = time_source
        self._deserialize = typestore.deserialize_cdr
        self.subscription = node.create_subscription(ros_types.cls(msgtype), topic, _never_called,
                                                     qos_profile(False, depth, best_effort), callback_group=group,
                                                     raw=True)
        self.handle = self.subscription.handle
        self._msg_type = self.subscription.msg_type

    def take(self) -> list:
        """Every message waiting, oldest first."""
        taken = []
        while True:
            info = self.handle.take_message(self._msg_type, True)
            if info is None:
                return taken
            taken.append(self._deserialize(info[0], self.msgtype))


def _never_called(_msg) -> None:    # the executor never runs a polled subscription
    raise AssertionError("a polled subscription was executed")


class RclpyHost:
    """Publishers, subscriptions and timers of one core on one rclpy node, and the loop that runs them."""

    def __init__(self, node, core: NodeCore, mode: str = "ros_timers", tick: float | None = None,
                 stop: StopSignals | None = None):
        from rclpy.executors import SingleThreadedExecutor

        if not isinstance(core.types, RosbagsMessageTypes):
            raise TypeError("RclpyHost runs cores built with RosbagsMessageTypes (CDR through rclpy's raw API)")
        self.node = node
        self.core = core
        self.mode = mode
        self.stop = stop if stop is not None else StopSignals()
        self.typestore = core.types.typestore
        ros_types = RosMessageTypes()
        group = polled_group()
        # Subscriptions first: a node that discovers our publishers finds our subscriptions already there.
        self.inputs = [PolledInput(node, ros_types, self.typestore, s.topic, s.msgtype, s.callback, group,
                                   1 if s.latest_only else QUEUE_DEPTH, time_source=s.time_source)
                       for s in core.subscriptions]
        self.publishers = {p.topic: node.create_publisher(ros_types.cls(p.msgtype), p.topic,
                                                          qos_profile(p.transient_local))
                           for p in core.publications}
        self._msgtypes = {p.topic: p.msgtype for p in core.publications}
        self._always_wanted = {p.topic for p in core.publications if p.transient_local}
        self._subscribers: dict[str, int] = {}
        self.executor = SingleThreadedExecutor(context=node.context)
        self.executor.add_node(node)
        self.time: float | None = None          # the core's time (s) where the host keeps it
        self.sim_time = False
        self.steps = 0
        if mode == "paced":
            self.tick = float(tick)
            rtf = float(node.declare_parameter("real_time_factor", 1.0).value)
            if not rtf > 0:     # (nan included) checked here too: the message names the parameter
                raise SpaceRobotError(f"real_time_factor: must be > 0, got {rtf}")
            self.pacing = WallPacing(self.tick, rtf, MAX_CATCH_UP)
            self.wait_for_commands = float(node.declare_parameter("wait_for_commands", 0.0).value)
            self.start_delay = float(node.declare_parameter("start_delay", 0.0).value)
            if not self.start_delay >= 0:
                raise SpaceRobotError(f"start_delay: must be >= 0 s, got {self.start_delay}")
            self.schedule = TimerSchedule(core.timers, 0.0)
        else:
            self.sim_time = bool(node.get_parameter("use_sim_time").value)
            if self.sim_time:
                self.inputs.append(PolledInput(node, ros_types, self.typestore, CLOCK_TOPIC, cv.CLOCK, None, group,
                                               1, best_effort=True))
            else:
                self.time = self._ros_now()
            self.schedule = TimerSchedule(core.timers, 0.0 if self.sim_time else self.time)
        # what moves simulated time: waited on, and taken at every wake
        self._timed = [i for i in self.inputs if i.callback is None or i.time_source] if self.sim_time else []
        self._untimed = [i for i in self.inputs if i not in self._timed]
        # CDR bytes: the fast encoders of the high-rate types (byte-identical to rosbags, tested), rosbags for the rest
        self._encoders = {topic: encoder_for(msgtype) or partial(_rosbags_bytes, self.typestore.serialize_cdr,
                                                                 typename=msgtype)
                          for topic, msgtype in self._msgtypes.items()}
        core.types.prepare_codecs([i.msgtype for i in self.inputs] + list(self._msgtypes.values()))
        core.attach(self._publish, self.now, self.wanted)

    # ---- plumbing --------------------------------------------------------------------------------
    def _publish(self, topic: str, msg) -> None:
        self.publishers[topic].publish(self._encoders[topic](msg))

    def wanted(self, topic: str) -> bool:
        return topic in self._always_wanted or self._subscribers.get(topic, 1) > 0

    def now(self) -> float:
        return self.time if self.time is not None else self._ros_now()

    def _ros_now(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def _deliver(self, messages: list) -> None:
        for callback, msg in messages:
            try:
                callback(msg)
            except Exception as exc:  # noqa: BLE001 - the node boundary: no input may stop the node
                self.node.get_logger().error(f"message rejected: {type(exc).__name__}: {exc}")

    def _take(self, timed_only: bool = False) -> list:
        """(callback, message) of the inputs' waiting messages (with timed_only, of the /clock and time-source
        inputs alone); moves simulated time to the newest /clock and time-source stamps."""
        messages = []
        newest = self.time
        for source in self._timed if timed_only else self.inputs:
            taken = source.take()
            if not taken:
                continue
            if source.callback is None:                      # the host's /clock
                newest = max(newest if newest is not None else -1.0, cv.seconds(taken[-1].clock))
                continue
            if source.time_source and self.sim_time:
                newest = max(newest if newest is not None else -1.0, max(map(_stamp_seconds, taken)))
            messages.extend((source.callback, msg) for msg in taken)
        if self.sim_time:
            self.time = newest
        return messages

    def _take_untimed(self) -> list:
        return [(source.callback, msg) for source in self._untimed for msg in source.take()]

    def _wait(self, timeout: float) -> None:
        """Until a waited input has data (simulated time: /clock, time sources) or `timeout` s pass."""
        if timeout <= 0:
            return
        if not self._timed:
            time.sleep(timeout)
            return
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

        # as rclpy.wait_for_message does: a wait set of our own, so that rclpy's executor is not run per message
        wait_set = self._wait_set
        if wait_set is None:
            wait_set = self._wait_set = _rclpy.WaitSet(len(self._timed), 0, 0, 0, 0, 0, self.node.context.handle)
        wait_set.clear_entities()
        for source in self._timed:
            wait_set.add_subscription(source.handle)
        wait_set.wait(int(timeout * 1e9))

    _wait_set = None

    def _cold_pass(self) -> None:
        """One pass of rclpy's executor over the rest of the node (work found ready now), and the subscriber
        counts behind wanted()."""
        from rclpy.executors import ShutdownException, TimeoutException

        for topic, publisher in self.publishers.items():
            self._subscribers[topic] = publisher.get_subscription_count()
        while True:
            try:
                handler, _entity, _node = self.executor.wait_for_ready_callbacks(timeout_sec=0.0)
            except (TimeoutException, ShutdownException):
                return
            handler()
            if handler.exception() is not None:
                error = handler.exception()
                self.node.get_logger().error(f"callback failed: {type(error).__name__}: {error}")

    def _running(self) -> bool:
        return not self.stop.stop_requested and self.node.context.ok()

    # ---- the loop --------------------------------------------------------------------------------
    def run(self) -> None:
        """Run the core until a stop signal (or the context's shutdown)."""
        self._cold_pass()
        self.core.start()
        if self.mode == "paced":
            self._run_paced()
        else:
            self._run_clocked()

    def _run_clocked(self) -> None:
        next_cold = time.monotonic() + COLD_PERIOD
        while self._running():
            wall = time.monotonic()
            if wall >= next_cold:
                self._cold_pass()
                next_cold = wall + COLD_PERIOD
            timeout = next_cold - wall
            if not self.sim_time:
                timeout = min(timeout, self.schedule.next_due() - self._ros_now())
            self._wait(timeout)
            # the other inputs are taken only when a timer is due: until then they would only be held
            messages = self._take(timed_only=True)
            if not self.sim_time:
                self.time = self._ros_now()
            if self.time is not None and self.time >= self.schedule.next_due() - DUE_SLACK:
                messages += self._take_untimed()
                self._deliver(messages)
                self.schedule.run(self.time)
            else:
                self._deliver(messages)

    def _run_paced(self) -> None:
        if self.wait_for_commands > 0:
            self._await_commands(self.wait_for_commands)
        if not self._running():
            return
        self.schedule.run(0.0, SENSING)
        self._hold(self.start_delay)        # the initial state is out: viewers show it while they start
        self.pacing.start(time.monotonic())
        next_cold = time.monotonic() + COLD_PERIOD
        dropped = 0.0
        while self._running():
            wall = time.monotonic()
            if wall >= next_cold:
                self._cold_pass()
                next_cold = wall + COLD_PERIOD
            due = self.pacing.steps_due(wall, self.steps)
            if self.pacing.dropped > dropped:
                self.node.get_logger().warn(
                    f"simulation behind real_time_factor {self.pacing.real_time_factor}: "
                    f"{self.pacing.dropped:.3f} s of simulated time dropped so far", throttle_duration_sec=5.0)
                dropped = self.pacing.dropped
            if due == 0:
                time.sleep(max(0.0, min(self.pacing.wall_time_of(self.steps), next_cold) - time.monotonic()))
                continue
            for _ in range(due):
                self._deliver(self._take())             # the commands answering the last state
                self.schedule.run(self.steps * self.tick, ACTUATING)
                self.steps += 1
                self.schedule.run(self.steps * self.tick, SENSING)

    def _hold(self, seconds: float) -> None:
        """Keep simulated time at its start for `seconds` of wall time (parameter start_delay), serving the node;
        every HOLD_REPUBLISH s the sensing timers run again at t = 0 (they only publish the state: it goes out again,
        to whoever subscribes by then)."""
        end = time.monotonic() + seconds
        next_copy = time.monotonic() + HOLD_REPUBLISH
        sensing = [timer for timer in self.schedule.timers if timer.phase in SENSING]
        while self._running() and time.monotonic() < end:
            self._cold_pass()
            if time.monotonic() >= next_copy:
                for timer in sensing:
                    timer.callback(0.0)
                next_copy += HOLD_REPUBLISH
            time.sleep(min(COLD_PERIOD, max(0.0, end - time.monotonic())))

    def _await_commands(self, limit: float) -> None:
        """Until every input topic has a publisher (then SETTLE s more) or `limit` s of wall time pass."""
        deadline = time.monotonic() + limit
        settled_at = None
        while self._running() and time.monotonic() < deadline:
            self._cold_pass()
            if settled_at is None and all(self.node.count_publishers(source.subscription.topic_name) > 0
                                              for source in self.inputs):
                settled_at = time.monotonic() + SETTLE
            if settled_at is not None and time.monotonic() >= settled_at:
                return
            time.sleep(COLD_PERIOD)
        if self._running():
            self.node.get_logger().warn(f"no publisher on every command topic after wait_for_commands = {limit} s: "
                                        "starting simulated time anyway")

    # ---- the end ---------------------------------------------------------------------------------
    def finish(self) -> None:
        """The core's last report (node_core.finish) and this node's own: why and when it stopped."""
        now = self.core.now()
        self.core.finish(now)
        topic = next((p.topic for p in self.core.publications if p.msgtype == cv.DIAGNOSTIC_ARRAY), None)
        if topic is None:
            return
        reason = f"stopped on {self.stop.received}" if self.stop.received else "stopped"
        status = cv.diagnostic_status(self.core.types, cv.OK, f"{self.core.name}: node", reason, self.core.name,
                                      [("time_s", now), ("signals_received", self.stop.count), ("pid", os.getpid())])
        self._publish(topic, cv.diagnostic_array(self.core.types, now, [status]))


def run_node(node_name: str, build: Callable, mode: str = "ros_timers", args=None,
             stop: StopSignals | None = None) -> int:
    """rclpy.init, create the node, build its core with build(node, types) -> (core, tick), run, shut down.
    Exit status 0 (also after SIGINT/SIGTERM), 1 without rclpy, 2 for a bad configuration. `stop`: the handlers
    the node's main installed before importing this module (a signal during start-up is a request too)."""
    stop = stop or StopSignals().install()
    try:
        import rclpy
        from rclpy.signals import SignalHandlerOptions
    except ImportError as exc:
        stop.restore()
        print(f"{node_name}: rclpy is not available ({exc}); source a ROS 2 installation first, or use the "
              "standalone runtime: space-robot-sim", file=sys.stderr)
        return 1
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node = host = None
    status = 0
    try:
        node = rclpy.create_node(node_name)
        core, tick = build(node, RosbagsMessageTypes())
        host = RclpyHost(node, core, mode, tick, stop)
        node.get_logger().info(f"{node_name} running")
        host.run()
        host.finish()
        if stop.received:
            node.get_logger().info(f"{node_name} stopped on {stop.received}")
    except (SpaceRobotError, ImportError) as exc:     # bad configuration or a missing message package
        print(f"{node_name}: {exc}", file=sys.stderr)
        status = 2
    finally:
        if host is not None:      # its guard conditions go now: garbage-collected after shutdown, Humble's executor
            host.executor.shutdown(timeout_sec=0.0)    # prints "InvalidHandle" from its __del__
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return status
