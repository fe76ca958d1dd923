"""The result table of a campaign: one row per run, in Parquet (pyarrow), written as runs finish.

Columns, in order:
- run (int64), seed (int64);
- one per parameter, as drawn (before `scaled_by`): a float64 for a number, `NAME[i]` float64 per entry of a
  vector, a string (the --set text) for any other value;
- outcome (string: run_task.OUTCOMES), complete (bool), requirements_met (bool, null: not evaluated);
- one float64 per collected figure, named by its summary entry (null where the run has none);
- simulated_time_s, wall_time_s (float64, s: the wall time includes loading the scenario and building the
  model in the worker), error (string, null when none), overrides (string: the run's --set arguments,
  shell-quoted), host (string: worker host:pid).

Incremental writing: finished rows are buffered and flushed every FLUSH_SECONDS (or FLUSH_ROWS) as a new
Parquet file in `runs.partial/` (written aside, then renamed: a file there is always whole), so a campaign
killed at any point keeps every row flushed before. `consolidate()` merges those files and the previous
`runs.parquet` into a new `runs.parquet` sorted by run (written aside, then renamed) and removes them; the
campaign does that whenever it ends, interrupted or not. `read()` reads both, so a resumed campaign sees
every run ever recorded; a run recorded twice (a crash between the rename and the removal) is kept once.

Damage: a file of the table that is not whole Parquet with exactly this campaign's columns (cut short by a full
disk or a copy, emptied, a stray file in runs.partial/, the table of another campaign) is never read past,
merged, rewritten or removed: `read()` and `consolidate()` raise OutputError naming every such file and what to
do, before anything is written. Reading around it would silently drop its runs (or, for another campaign's
table, give null values), and merging would then remove it.
"""
from __future__ import annotations

import os
import re
import shlex
import time
from pathlib import Path

from space_robot_dynamics.errors import one_line
from space_robot_runtime.output_directory import OutputError

from .campaign_config import Campaign

TABLE_FILE = "runs.parquet"
PARTIAL_FOLDER = "runs.partial"
CSV_FILE = "runs.csv"
FLUSH_SECONDS = 1.0
FLUSH_ROWS = 256
DAMAGED_SHOWN = 5         # damaged files named in the error (a copy gone wrong can damage hundreds): a line to read


def parameter_columns(campaign: Campaign) -> list[tuple[str, str]]:
    """(column, 'float'|'string') per parameter column, in campaign order."""
    columns = []
    for p in campaign.parameters:
        if p.kind == "number":
            columns.append((p.name, "float"))
        elif p.kind == "vector":
            columns += [(f"{p.name}[{i}]", "float") for i in range(p.size)]
        else:
            columns.append((p.name, "string"))
    return columns


def scalar_parameter_columns(campaign: Campaign) -> list[str]:
    """The numeric parameter columns (what the report's scatter plots put on their x axes)."""
    return [name for name, kind in parameter_columns(campaign) if kind == "float"]


def schema(campaign: Campaign):
    import pyarrow as pa

    types = {"float": pa.float64(), "string": pa.string()}
    fields = [pa.field("run", pa.int64(), nullable=False), pa.field("seed", pa.int64(), nullable=False)]
    fields += [pa.field(name, types[kind]) for name, kind in parameter_columns(campaign)]
    fields += [pa.field("outcome", pa.string(), nullable=False), pa.field("complete", pa.bool_()),
               pa.field("requirements_met", pa.bool_())]
    fields += [pa.field(figure, pa.float64()) for figure in campaign.figures]
    fields += [pa.field("simulated_time_s", pa.float64()), pa.field("wall_time_s", pa.float64()),
               pa.field("error", pa.string()), pa.field("overrides", pa.string()), pa.field("host", pa.string())]
    return pa.schema(fields, metadata={"campaign": campaign.name})


def flat_row(campaign: Campaign, row: dict) -> dict:
    """A run_task row as the table's columns."""
    from .campaign_config import yaml_text

    out = {"run": row["run"], "seed": row["seed"]}
    values = row["values"]
    for p in campaign.parameters:
        value = values[p.name]
        if p.kind == "number":
            out[p.name] = float(value)
        elif p.kind == "vector":
            out.update({f"{p.name}[{i}]": float(v) for i, v in enumerate(value)})
        else:
            out[p.name] = yaml_text(value)
    out.update(outcome=row["outcome"], complete=row["complete"], requirements_met=row["requirements_met"])
    out.update({figure: row["figures"].get(figure) for figure in campaign.figures})
    out.update(simulated_time_s=row["simulated_time_s"], wall_time_s=row["wall_time_s"], error=row["error"],
               overrides=shlex.join(row["overrides"]), host=row["host"])
    return out


class ResultTable:
    """The table in `directory` (the campaign's output folder) for `campaign`."""

    def __init__(self, directory: Path, campaign: Campaign):
        self.directory = Path(directory)
        self.campaign = campaign
        self.schema = schema(campaign)
        self.partial = self.directory / TABLE_FILE.replace(".parquet", ".partial")
        self._buffer: list[dict] = []
        self._flushed_at = time.monotonic()
        self._parts = 0

    @property
    def path(self) -> Path:
        return self.directory / TABLE_FILE

    # ---- writing ----------------------------------------------------------------------------
    def add(self, row: dict) -> None:
        """Buffer a finished run's row (run_task format); flushed by time or count."""
        self._buffer.append(flat_row(self.campaign, row))
        if len(self._buffer) >= FLUSH_ROWS or time.monotonic() - self._flushed_at >= FLUSH_SECONDS:
            self.flush()

    def flush_if_due(self) -> None:
        """Flush rows that have waited FLUSH_SECONDS (called between results, so a row never waits longer)."""
        if self._buffer and time.monotonic() - self._flushed_at >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as one new file in runs.partial/ (whole or not at all)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._flushed_at = time.monotonic()
        if not self._buffer:
            return
        self.partial.mkdir(exist_ok=True)
        table = pa.Table.from_pylist(self._buffer, schema=self.schema)
        name = f"part-{time.time_ns()}-{os.getpid()}-{self._parts}.parquet"
        self._parts += 1
        _write_aside(table, self.partial / name, pq.write_table)
        self._buffer.clear()

    def consolidate(self, csv: bool = False):
        """Flush, merge everything into runs.parquet (sorted by run), remove the partial files merged; with `csv`,
        also write runs.csv. Returns the merged table. OutputError, with nothing written or removed, when a file
        of the table is damaged."""
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        self.flush()
        parts = self._partial_files()
        table = self._read(parts)          # raises on damage: nothing below runs, so nothing damaged is removed
        if parts or not self.path.exists():
            _write_aside(table, self.path, pq.write_table)
        for part in parts:
            part.unlink()
        if self.partial.is_dir() and not any(self.partial.iterdir()):
            self.partial.rmdir()
        if csv:
            _write_aside(table, self.directory / CSV_FILE, pcsv.write_csv)
        return table

    # ---- reading ----------------------------------------------------------------------------
    def read(self):
        """Every recorded row (runs.parquet and runs.partial/), one per run, sorted by run; OutputError naming
        the damaged files, if any."""
        return self._read(self._partial_files())

    def recorded_runs(self) -> set[int]:
        return set(self.read().column("run").to_pylist())

    def _partial_files(self) -> list[Path]:
        """The flushed files in runs.partial/ (anything named *.parquet there: a folder so named is damage, which
        the reading names)."""
        return sorted(self.partial.glob("*.parquet")) if self.partial.is_dir() else []

    def _read(self, parts: list[Path]):
        """runs.parquet (if any) and `parts`, merged: one row per run (the first recorded), sorted by run."""
        import pyarrow as pa

        files = ([self.path] if self.path.exists() or self.path.is_symlink() else []) + parts
        tables, damaged = [], []
        if self.partial.exists() and not self.partial.is_dir():
            damaged.append(f"{PARTIAL_FOLDER} (not a folder)")
        for path in files:
            try:
                tables.append(self._read_file(path))
            except _Damaged as exc:
                damaged.append(f"{path.relative_to(self.directory)} ({exc})")
        if damaged:
            if len(damaged) > DAMAGED_SHOWN:
                damaged[DAMAGED_SHOWN:] = [f"and {len(damaged) - DAMAGED_SHOWN} more"]
            raise OutputError(f"--out {self.directory}: cannot read its result table: {'; '.join(damaged)}: move "
                              "the damaged file(s) out of --out (--resume then runs their runs again), or start the "
                              "campaign again with --overwrite (without --resume); nothing was changed")
        if not tables:
            return self.schema.empty_table()
        table = pa.concat_tables(tables)
        runs = table.column("run").to_pylist()
        first: dict = {}
        for i, run in enumerate(runs):
            first.setdefault(run, i)
        return table.take(pa.array(sorted(first.values(), key=runs.__getitem__), type=pa.int64()))

    def _read_file(self, path: Path):
        """One file of the table, as this campaign's schema; _Damaged saying why it is not one."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not path.is_file():
            raise _Damaged("not a file")
        try:
            # no `schema=` here: pyarrow would then fill a missing column with nulls and drop an unknown one,
            # reading another campaign's table as this one's
            table = pq.read_table(path)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise _Damaged(_arrow_reason(exc)) from None
        difference = _schema_difference(table.schema, self.schema)
        if difference:
            raise _Damaged(f"not this campaign's table: {difference}")
        try:
            return table.cast(self.schema)          # this schema's metadata and non-null columns
        except (pa.ArrowException, ValueError) as exc:
            raise _Damaged(_arrow_reason(exc)) from None


class _Damaged(Exception):
    """A file of the table that cannot be read as this campaign's (the text says why)."""


def _arrow_reason(exc: Exception) -> str:
    """pyarrow's text without the path it repeats (the message names the file already), on one line."""
    text = re.sub(r"^Could not open Parquet input source '[^']*': ", "", str(exc))
    return one_line(text).rstrip(".") or type(exc).__name__


def _schema_difference(found, expected) -> str:
    """The first column that differs between two table schemas, in words ('' when none does)."""
    for i, field in enumerate(expected):
        if i >= len(found.names):
            return f"no column {field.name!r}"
        if found.names[i] != field.name:
            return f"column {i + 1} is {found.names[i]!r}, not {field.name!r}"
        if not found.field(i).type.equals(field.type):
            return f"column {field.name!r} holds {found.field(i).type}, not {field.type}"
    if len(found.names) > len(expected.names):
        return f"an extra column {found.names[len(expected.names)]!r}"
    return ""


def _write_aside(table, path: Path, writer) -> None:
    """Write to a hidden file beside `path`, then rename it into place (atomic on one file system)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    writer(table, tmp)
    os.replace(tmp, path)
