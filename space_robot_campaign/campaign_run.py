"""Running a campaign: the missing runs through an executor, rows recorded as they finish, then the report.

`run_campaign` is what `space-robot-campaign` does after parsing its arguments, callable from Python:

    from space_robot_campaign import load_campaign, run_campaign, RayExecutor
    campaign = load_campaign("pregrasp_robustness")
    result = run_campaign(campaign, "out/campaigns/mine", lambda: RayExecutor(workers=2))

Order: the output directory is checked (campaign_output.CampaignOutput; on --resume its table read) and the
campaign checked against its scenario (campaign_check) before the executor starts, so bad input costs no Ray
start-up; a fresh campaign's directory is created only once the executor has started, so a campaign that
cannot run (a cluster that does not answer) leaves nothing to --resume or --overwrite. The runs already
recorded in the directory (with --resume) are skipped. `stop` (an object with `requested` and `name`, e.g.
space_robot_runtime.interruption.Interruption) is polled between results: once set, nothing more is
submitted, the runs in flight are cancelled (they are missing, and --resume runs them), and the table and the
report of what finished are written as usual.

Bags (`BagSelection`): `all` and listed runs record theirs as they run; `failed` runs again, after they
finish, each run that is not a success (except bad input, which has nothing to record) with its bag: runs
are deterministic, so the run with the bag is the same run (its figures are compared with the recorded
ones, and a difference is reported). Those reruns are also made, on --resume, for recorded runs without
their bag.
"""
from __future__ import annotations

import re
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from space_robot_dynamics.errors import ConfigError
from space_robot_runtime.output_directory import TOOL as SIM_TOOL
from space_robot_runtime.output_directory import written_by_this_tool

from .campaign_config import Campaign
from .campaign_output import CampaignOutput, bag_dir, report_directory
from .campaign_progress import CampaignProgress
from .campaign_report import build_report, write_report
from .campaign_statistics import is_success
from .result_table import ResultTable
from .run_plan import RunSpec, run_spec
from .run_task import INTERRUPTED

RESULT_WAIT_S = 0.25      # s a wait for results lasts before the stop request and the flush clock are looked at again


@dataclass(frozen=True)
class BagSelection:
    """Which runs keep their outputs (bag, summary, plots) in DIR/bags/run-NNNNNN."""

    failed: bool = False
    all: bool = False
    runs: frozenset = frozenset()

    @classmethod
    def parse(cls, text: str | None) -> BagSelection:
        """'failed', 'all', run indices and ranges ('3,17,40-45'), or a comma-separated mix; None: no bags."""
        if not text:
            return cls()
        failed = every = False
        runs: set[int] = set()
        for token in (t.strip() for t in text.split(",")):
            if token == "failed":
                failed = True
            elif token == "all":
                every = True
            elif re.fullmatch(r"\d+", token):
                runs.add(int(token))
            elif re.fullmatch(r"\d+-\d+", token) and int(token.split("-")[0]) <= int(token.split("-")[1]):
                first, last = (int(t) for t in token.split("-"))
                runs.update(range(first, last + 1))
            else:
                raise ConfigError("--keep-bags", f"{token!r} is not 'failed', 'all', a run index or a range a-b "
                                  "(e.g. --keep-bags failed,3,10-12)")
        return cls(failed, every, frozenset(runs))

    def at_start(self, index: int) -> bool:
        return self.all or index in self.runs


@dataclass
class CampaignResult:
    out: Path
    table: Path
    requested: int                   # runs asked for (the first `requested` of the campaign)
    recorded: int                    # rows in the table among those
    new_runs: int                    # rows recorded by this call
    interrupted: str | None          # the signal name, when stopped early
    report: dict = field(default_factory=dict)
    report_files: list = field(default_factory=list)
    csv: Path | None = None
    bag_mismatches: list = field(default_factory=list)
    executor: str = ""
    wall_time: float = 0.0           # s, this call, executor start-up included

    @property
    def complete(self) -> bool:
        return self.recorded == self.requested and self.interrupted is None


class _NoStop:
    requested, name = False, None


def run_campaign(campaign: Campaign, out: str | Path, executor_factory: Callable[[], object], *,
                 limit: int | None = None, resume: bool = False, overwrite: bool = False,
                 bags: BagSelection | None = None, csv: bool = False, progress: bool | None = None,
                 plots: bool = True, stop=None, stream=None, check: bool = True) -> CampaignResult:
    """Run the missing runs of `campaign` (the first `limit` of them) into `out`, then write the table and the
    report (`plots`: with its PNGs). `executor_factory` is called only when there is something to run (Ray
    starts then). ConfigError or OutputError for bad input, before anything runs (the output directory first:
    its checks take milliseconds, the scenario's seconds); executors.ExecutorError when the executor cannot
    start, and then a fresh campaign's directory has not been created."""
    started = time.perf_counter()
    requested = campaign.total_runs if limit is None else min(limit, campaign.total_runs)
    output = CampaignOutput(Path(out), campaign, resume=resume, overwrite=overwrite)
    try:
        if check:
            from .campaign_check import check_against_scenario

            check_against_scenario(campaign)
        table = ResultTable(output.path, campaign)
        recorded = table.read() if output.existing else table.schema.empty_table()   # a damaged table: refused
        runs = _Runs(campaign, output.path, table, bags or BagSelection(), stop or _NoStop(), stream or sys.stderr)
        runs.run(recorded, requested, executor_factory, output.create, progress)
        return _finish(runs, requested, started, csv=csv, plots=plots)
    finally:
        output.close()


@dataclass
class _Runs:
    """The loop of run_campaign: the missing runs through an executor, each row recorded as it finishes, and the
    reruns for bags."""

    campaign: Campaign
    out: Path
    table: ResultTable
    bags: BagSelection
    stop: object
    stream: object
    new: int = 0                                 # rows recorded
    mismatches: list = field(default_factory=list)
    interrupted: str | None = None
    executor_name: str = "none (nothing to run)"
    rerun_of: dict = field(default_factory=dict)     # run -> its recorded figures (None: nothing to compare with)

    def run(self, recorded, requested: int, executor_factory: Callable[[], object], create: Callable[[], Path],
            progress: bool | None) -> None:
        """The executor is started before `create` (the output directory of a fresh campaign) is called: a
        campaign that cannot run leaves nothing behind."""
        done = set(recorded.column("run").to_pylist())
        queue = deque(run_spec(self.campaign, i, _bag(self.out, self.bags, i)) for i in range(requested)
                      if i not in done)
        reruns = deque(_missing_bags(self.campaign, self.out, recorded, self.bags, requested))
        self.rerun_of = {spec.index: None for spec in reruns}
        progress_bar = CampaignProgress(requested, already=len(done & set(range(requested))), enabled=progress,
                                        stream=self.stream)
        executor = None
        try:
            if queue or reruns:
                executor = executor_factory()
                self.executor_name = executor.name
            create()
            if executor is not None:
                progress_bar.started()
                self._loop(executor, queue, reruns, progress_bar)
        finally:
            self.table.flush()            # whatever ends the loop (a bug included), finished rows are on disk
            progress_bar.close()
            if executor is not None:
                executor.close()

    def _loop(self, executor, queue: deque, reruns: deque, progress_bar: CampaignProgress) -> None:
        while queue or reruns or executor.busy:
            if self.stop.requested:
                break
            while executor.busy < executor.capacity and (queue or reruns):
                executor.submit(queue.popleft() if queue else reruns.popleft())
            finished = executor.finished(RESULT_WAIT_S)
            self.table.flush_if_due()
            for spec, row in finished:
                self._record(spec, row, reruns, progress_bar)
        if self.stop.requested:
            self.interrupted = self.stop.name

    def _record(self, spec: RunSpec, row: dict, reruns: deque, progress_bar: CampaignProgress) -> None:
        if row["outcome"] == INTERRUPTED:
            return                        # not a result: the run stays missing
        if spec.index in self.rerun_of:   # a run again for its bag
            expected = self.rerun_of.pop(spec.index)
            if expected is not None and not _same_figures(row["figures"], expected):
                self.mismatches.append(spec.index)
                print(f"\nspace-robot-campaign: run {spec.index} gave other figures when run again with its bag (a "
                      "nondeterministic run?)", file=self.stream, flush=True)
            return
        self.table.add(row)
        self.new += 1
        success = is_success(self.campaign, row["outcome"], row["figures"])
        progress_bar.update(success, row["outcome"] in ("error", "diverged", "bad_input"))
        if self.bags.failed and spec.bag_dir is None and not success and row["outcome"] != "bad_input":
            self.rerun_of[spec.index] = row["figures"]
            reruns.append(replace(spec, bag_dir=str(bag_dir(self.out, spec.index))))


def _finish(runs: _Runs, requested: int, started: float, csv: bool, plots: bool) -> CampaignResult:
    """The table merged, the report written from the whole of it."""
    campaign, out = runs.campaign, runs.out
    rows = runs.table.consolidate(csv=csv).to_pydict()
    recorded_count = sum(1 for r in rows["run"] if r < requested)
    wall = time.perf_counter() - started
    execution = {"executor": runs.executor_name, "new_runs": runs.new, "wall_time_s": wall,
                 "runs_per_s": runs.new / wall if wall > 0 else None, "interrupted": runs.interrupted}
    report = build_report(campaign, rows, requested, execution)
    directory = report_directory(out)
    try:
        files = write_report(report, directory.staging, campaign, rows, plots)
        final = directory.commit({"campaign": campaign.name})
    except BaseException:
        directory.discard()
        raise
    return CampaignResult(out=out, table=runs.table.path, requested=requested, recorded=recorded_count,
                          new_runs=runs.new, interrupted=runs.interrupted, report=report,
                          report_files=[final / f.name for f in files], csv=out / "runs.csv" if csv else None,
                          bag_mismatches=runs.mismatches, executor=runs.executor_name, wall_time=wall)


def _same_figures(a: dict, b: dict) -> bool:
    """Equal figure by figure, bit for bit (NaN equal to NaN)."""
    return a.keys() == b.keys() and all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)


def _bag(out: Path, bags: BagSelection, index: int) -> str | None:
    return str(bag_dir(out, index)) if bags.at_start(index) else None


def _missing_bags(campaign: Campaign, out: Path, recorded, bags: BagSelection, requested: int) -> list[RunSpec]:
    """Runs again for recorded runs that should have kept their bag and have none (e.g. the campaign was
    interrupted before those reruns)."""
    rows = recorded.to_pydict()
    out_specs = []
    for i, index in enumerate(rows["run"]):
        if index >= requested or written_by_this_tool(bag_dir(out, index), SIM_TOOL):
            continue
        outcome = rows["outcome"][i]
        failed = not is_success(campaign, outcome, {f: rows[f][i] for f in campaign.figures}) \
            and outcome != "bad_input"
        if bags.at_start(index) or (bags.failed and failed):
            out_specs.append(run_spec(campaign, index, str(bag_dir(out, index))))
    return out_specs
