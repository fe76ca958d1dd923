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
"""
from __future__ import annotations

import logging
import os
from collections import deque

from .run_plan import RunSpec
from .run_task import failed_row, run_one

LOCAL_OBJECT_STORE_BYTES = 96 * 1024 * 1024     # Ray's minimum is ~75 MB; its default (30 % of RAM) is far more
# the logger of Ray's notice that a local cluster uses token authentication (Ray >= 2.5x, every start)
RAY_TOKEN_NOTICE_LOGGER = "ray._private.authentication.authentication_token_setup"
IN_FLIGHT_PER_WORKER = 2                         # queued tasks per worker, so a worker never waits for the driver


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

    def __init__(self, address: str | None = None, workers: int | None = None):
        try:
            import ray
        except ImportError as exc:
            raise ExecutorError(f"Ray is not installed ({exc}): pip install -e '.[campaign]' (or run with "
                                "--in-process)") from None
        self._ray = ray
        self.local = address is None
        # no usage statistics sent anywhere; the worker processes inherit the variable
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            if self.local:
                # Ray >= 2.5x turns token authentication on by default for a local cluster (a token generated once
                # in ~/.ray/auth_token) and warns on every start that it did: an information, not a problem, so it
                # is not shown (docs/campaigns.md says so). Setting RAY_AUTH_MODE here instead would come too late:
                # Ray reads it at import.
                logging.getLogger(RAY_TOKEN_NOTICE_LOGGER).setLevel(logging.ERROR)
                workers = workers or default_workers()
                ray.init(num_cpus=workers, include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                         log_to_driver=False, logging_level="WARNING")
            else:
                ray.init(address=address, log_to_driver=False, logging_level="WARNING")
        except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError...
            self._shutdown()
            where = "a local Ray" if self.local else f"the Ray cluster at {address}"
            hint = ""
            if "auth" in f"{exc} {exc.__cause__}".lower():
                hint = ("; the cluster uses Ray's token authentication: run with RAY_AUTH_MODE=token and its token "
                        "in ~/.ray/auth_token (or RAY_AUTH_TOKEN_PATH, RAY_AUTH_TOKEN) - see docs/campaigns.md")
            raise ExecutorError(f"could not start or join {where}: {type(exc).__name__}: {exc}{hint}") from None
        self.cluster_cpus = int(ray.cluster_resources().get("CPU", 0))
        self.workers = workers or max(1, self.cluster_cpus)
        self.capacity = IN_FLIGHT_PER_WORKER * self.workers
        self.name = f"Ray ({'local' if self.local else address}, {self.workers} workers)"
        self._task = ray.remote(num_cpus=1, max_retries=0)(run_one)
        self._pending: dict = {}                 # ObjectRef -> RunSpec

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
