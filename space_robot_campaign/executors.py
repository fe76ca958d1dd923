"""Where the runs execute: on Ray (the engine of every campaign run from the command line, local or on a
cluster), or one after another in this process (`--in-process`: no Ray at all; for debugging with a debugger
or profiler, for machines where Ray cannot start, and for the unit tests).

Both have one interface: `submit(spec)` while `busy < capacity`, `finished(timeout)` -> [(spec, row)] of the
runs that ended, `cancel()` the ones still running, `close()`. Rows come from run_task.run_one, so a run
gives the same row on either.

Ray, local (no --address): `ray.init` starts a private Ray on this machine with `workers` CPUs (default: all
cores), no dashboard and a small object store (rows are a few hundred bytes), and `close()` shuts it down:
Ray's processes end with the campaign. With --address it joins a running cluster (ray start --head ...): each
run is a task asking for one CPU, `workers` (default: the cluster's CPUs) runs are in flight at a time, and
`close()` disconnects, leaving the cluster running. Tasks are not retried: a run whose worker process dies
(a crash, out of memory) is a row with outcome `error`.

Joining a cluster is bounded (`connect_timeout`, --connect-timeout): Ray's own join has no bound (Ray 2.60
retries for ~14 minutes against an address where nothing answers, logging every attempt on stderr from C++),
so the cluster is first asked in a separate process (`probe_cluster`), which is abandoned at the bound.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable

from space_robot_dynamics.errors import one_line

from .run_plan import RunSpec
from .run_task import failed_row, run_one

LOCAL_OBJECT_STORE_BYTES = 96 * 1024 * 1024     # Ray's minimum is ~75 MB; its default (30 % of RAM) is far more
# the logger of Ray's notice that a local cluster uses token authentication (Ray >= 2.5x, every start)
RAY_TOKEN_NOTICE_LOGGER = "ray._private.authentication.authentication_token_setup"
IN_FLIGHT_PER_WORKER = 2                         # queued tasks per worker, so a worker never waits for the driver
# default --connect-timeout (s): a cluster that answers at all answers the join's first request in milliseconds on
# a LAN and within a second or two over a VPN or across sites; 20 s also covers a head node still starting (its GCS
# answers ~2-5 s after `ray start --head`), and a wrong address is said in well under a minute
CONNECT_TIMEOUT_S = 20.0
# the longest --connect-timeout accepted (s): an hour is more than any cluster takes to answer, and far below the
# ~1e9 s at which a wait's timeout overflows (threading.TIMEOUT_MAX, ~292 years in C's signed milliseconds)
CONNECT_TIMEOUT_MAX_S = 3600.0
# s the probe process has, beyond the timeout, to start and import Ray before its own clock starts (~0.5 s on an
# idle machine, several on a loaded one): only a probe stuck before it asks anything is cut by it
PROBE_START_ALLOWANCE_S = 60.0
PROBE_POLL_S = 0.1                               # s between looks at the probe and at the stop request
RAY_CLIENT_PREFIX = "ray://"                     # Ray Client addresses: not a GCS; Ray Client bounds its own retries
# the probe: asks the GCS at argv[1] (as ray.init resolves it) for the cluster's id with Ray's own client, the
# first thing ray.init does, in a thread given argv[2] s; prints one JSON line and leaves with os._exit (a thread
# still blocked in Ray's C++ client cannot be joined). Everything Ray logs goes to the stderr the parent drops.
PROBE = """
import json, os, sys, threading
address, timeout = sys.argv[1], float(sys.argv[2])
def answer(result):
    sys.stdout.write(json.dumps(result) + "\\n")
    sys.stdout.flush()
    os._exit(0)
try:
    from ray._private.services import canonicalize_bootstrap_address
    from ray._raylet import GcsClient
except ImportError as exc:
    answer({"unsupported": str(exc)})
result = {"timeout": True}
def ask():
    global result
    try:
        GcsClient(address=canonicalize_bootstrap_address(address, None))
        result = {"ok": True}
    except (TypeError, AttributeError) as exc:
        result = {"unsupported": str(exc)}
    except Exception as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"}
thread = threading.Thread(target=ask, daemon=True)
thread.start()
thread.join(timeout)
answer(result)
"""


class ExecutorError(RuntimeError):
    """The executor cannot run anything (Ray missing, not starting, cluster unreachable)."""


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:           # not on Linux
        return os.cpu_count() or 1


class InProcessExecutor:
    """Runs each submitted run in this process, one at a time, when `finished` is called."""

    name = "in-process"

    def __init__(self, stop=None):
        """`stop`: the campaign's stop request, polled by the run in progress (it then ends early and is
        not recorded)."""
        self.workers = 1
        self.capacity = 1
        self.stop = stop
        self._queue: deque[RunSpec] = deque()

    @property
    def busy(self) -> int:
        return len(self._queue)

    def submit(self, spec: RunSpec) -> None:
        self._queue.append(spec)

    def finished(self, timeout: float | None = None) -> list:
        if not self._queue:
            return []
        spec = self._queue.popleft()
        return [(spec, run_one(spec, self.stop))]

    def cancel(self) -> None:
        self._queue.clear()

    def close(self) -> None:
        self.cancel()


class RayExecutor:
    """Runs each run as one Ray task (num_cpus=1, no retries)."""

    def __init__(self, address: str | None = None, workers: int | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT_S, stop=None, rearm: Callable[[], None] | None = None):
        """`connect_timeout` (s, with `address`): how long the cluster has to answer (ExecutorError after).
        `stop` (an object with `requested`, e.g. the campaign's Interruption): polled while waiting for the
        cluster; once set, the wait is abandoned (ExecutorError).
        `rearm` (e.g. Interruption.rearm): called once Ray has started and once it has shut down, each of which
        replaces the process's signal handlers at the C level, behind Python's back: at start Ray's core worker
        installs glog's failure handler for SIGTERM (a stack printed, exit status 1, no table), and at shutdown
        it leaves SIGTERM at the default (death by signal, e.g. while the report is written)."""
        self._rearm = rearm or (lambda: None)
        try:
            import ray
        except ImportError as exc:
            raise ExecutorError(f"Ray is not installed ({exc}): pip install -e '.[campaign]' (or run with "
                                "--in-process)") from None
        self._ray = ray
        self.local = address is None
        # no usage statistics sent anywhere; the worker processes inherit the variable
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if not self.local and not address.startswith(RAY_CLIENT_PREFIX):
            probe_cluster(address, connect_timeout, stop)
        try:
            self._start(address, workers)
            self._rearm()
        except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError...
            self._shutdown()
            where = "a local Ray" if self.local else f"the Ray cluster at {address}"
            raise ExecutorError(f"could not start or join {where}: {_first_line(exc)}{_auth_hint(exc)}") from None
        self.cluster_cpus = int(ray.cluster_resources().get("CPU", 0))
        self.workers = workers or max(1, self.cluster_cpus)
        self.capacity = IN_FLIGHT_PER_WORKER * self.workers
        self.name = f"Ray ({'local' if self.local else address}, {self.workers} workers)"
        self._task = ray.remote(num_cpus=1, max_retries=0)(run_one)
        self._pending: dict = {}                 # ObjectRef -> RunSpec

    def _start(self, address: str | None, workers: int | None) -> None:
        ray = self._ray
        if self.local:
            # Ray >= 2.5x turns token authentication on by default for a local cluster (a token generated once
            # in ~/.ray/auth_token) and warns on every start that it did: an information, not a problem, so it
            # is not shown (docs/campaigns.md says so). Setting RAY_AUTH_MODE here instead would come too late:
            # Ray reads it at import.
            logging.getLogger(RAY_TOKEN_NOTICE_LOGGER).setLevel(logging.ERROR)
            ray.init(num_cpus=workers or default_workers(), include_dashboard=False,
                     object_store_memory=LOCAL_OBJECT_STORE_BYTES, log_to_driver=False, logging_level="WARNING")
        else:
            ray.init(address=address, log_to_driver=False, logging_level="WARNING")

    @property
    def busy(self) -> int:
        return len(self._pending)

    def submit(self, spec: RunSpec) -> None:
        self._pending[self._task.remote(spec)] = spec

    def finished(self, timeout: float | None = 0.25) -> list:
        ray = self._ray
        refs = list(self._pending)
        if not refs:
            return []
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        out = []
        for ref in ready:
            spec = self._pending.pop(ref)
            try:
                row = ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - a dead worker, a cancelled task: that run's row
                row = failed_row(spec, "error", f"the Ray task failed: {type(exc).__name__}: {exc}")
            out.append((spec, row))
        return out

    def cancel(self) -> None:
        for ref in list(self._pending):
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - already finished or gone: nothing to cancel
                pass
        self._pending.clear()

    def close(self) -> None:
        self.cancel()
        self._shutdown()

    def _shutdown(self) -> None:
        try:
            self._ray.shutdown()      # local: ends Ray's processes; cluster: disconnects, the cluster stays
        except Exception:  # noqa: BLE001 - nothing more can be done about a failing shutdown
            pass
        self._rearm()


def probe_cluster(address: str, timeout: float, stop=None) -> None:
    """Return once the Ray cluster at `address` answers; ExecutorError (one line) when it does not within
    `timeout` s, refuses, or `stop` is requested meanwhile.

    Why a process: ray.init(address=...) has no bound a caller can set (Ray 2.60: 20 attempts of ~41 s, each
    logged on stderr from C++), and once blocked in Ray's C++ client it cannot be abandoned. A process can be:
    it is given the timeout, killed if it overruns it, and its output (Ray's retry lines) is dropped. It asks
    with Ray's own client (the first step of ray.init), so an answer means the join's first step succeeds
    (the cluster vanishing between the two is left to Ray). A Ray whose client the probe cannot find is not
    probed (ray.init then joins unbounded, as before). Costs one import of Ray (~0.5 s)."""
    where = f"the Ray cluster at {address}"
    result = _run_probe(address, timeout, stop)
    if stop is not None and stop.requested:
        raise ExecutorError(f"interrupted while waiting for {where}")
    if "timeout" in result:
        raise ExecutorError(f"could not join {where}: no answer within {timeout:g} s (--connect-timeout); is a Ray "
                            "head node running there (ray start --head), and is this its address and GCS port "
                            "(6379 by default)?")
    if "error" in result:
        raise ExecutorError(f"could not join {where}: {_first_line(result['error'])}{_auth_hint(result['error'])}")


def _run_probe(address: str, timeout: float, stop) -> dict:
    """The probe's answer ({"ok"}, {"timeout"}, {"error": text}, {"unsupported": text}); {"timeout"} when it
    overran its allowance or was abandoned for `stop`."""
    try:
        probe = subprocess.Popen([sys.executable, "-c", PROBE, address, repr(float(timeout))], text=True,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError as exc:
        raise ExecutorError(f"could not start a process to reach the Ray cluster at {address}: {exc}") from None
    deadline = time.monotonic() + timeout + PROBE_START_ALLOWANCE_S
    while True:
        try:
            output, _ = probe.communicate(timeout=PROBE_POLL_S)
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() > deadline or (stop is not None and stop.requested):
                probe.kill()
                probe.communicate()
                return {"timeout": True}
    lines = output.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"error": f"the process that asks the cluster ended with status {probe.returncode} and no answer"}


def _first_line(error) -> str:
    """The first line of a third-party error (Ray's can carry a whole traceback on the lines after it)."""
    text = str(error).strip()
    if isinstance(error, BaseException):
        text = f"{type(error).__name__}: {text}"
    return one_line(text.splitlines()[0] if text else text)


def _auth_hint(error) -> str:
    text = f"{error} {getattr(error, '__cause__', '')}".lower()
    if "auth" not in text:
        return ""
    return ("; the cluster uses Ray's token authentication: run with RAY_AUTH_MODE=token and its token in "
            "~/.ray/auth_token (or RAY_AUTH_TOKEN_PATH, RAY_AUTH_TOKEN) - see docs/campaigns.md")
