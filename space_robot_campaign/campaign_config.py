"""Campaign files (config/campaigns/*.yaml): a scenario, the parameters to vary and how, what to collect.

    name: pregrasp_robustness
    scenario: servicer_pregrasp             # a shipped name, or a path (next to this file, then the share)
    set: [duration=8]                       # --set overrides of every run (space-robot-sim's syntax)
    seed: 14                                # random draws: a run's numbers depend on (seed, run index) only
    samples: 10                             # random draws per grid point (and per list case)
    paired_cases: false                     # true: every list case runs with the same draws (run_plan.py)
    parameters:                             # name -> how it varies; the name is the table's column
      tumble_rate: {grid: [0.0, 0.001, 0.002]}                      # every value, crossed with the other grids
      tumble_axis:
        key: initial_state.target.angular_velocity                  # any --set key
        scaled_by: tumble_rate                                      # the key gets tumble_axis * tumble_rate
        random: {distribution: unit_vector}
      inertia_x:
        key: model.subtrees.target.xacro_args.inertia_scale_x
        random: {distribution: lognormal, median: 1.0, sigma: 0.1}
    figures: [pregrasp.distance_m, max_attitude_error_rad]         # summary entries collected per run
    success: requirements                   # or {figure: maximum, ...}
    worst_by: pregrasp.distance_m           # the worst runs are the largest values (after the failed ones)
    report: {worst_runs: 5, confidence: 0.95, percentiles: [5, 50, 95]}

A parameter varies in one of three ways: `grid` (a list of values, or {start, stop, num, spacing: linear|log}:
each value is run, crossed with every other grid parameter), `list` (values taken together, index by index,
with every other list parameter: one case per index), `random` (drawn for every run: uniform {low, high},
normal {mean, std}, lognormal {median, sigma: of the natural log}, unit_vector {dimension}; vectors where the
bounds are lists). Runs: list cases x grid points x samples, in that nesting, numbered from 0.

Everything is validated here with the field named; `campaign_check.check_against_scenario` then loads the
scenario with the overrides of the first run and each grid/list value, so a wrong key is found before any
run starts.
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader, find_file, load_yaml_file, parse_yaml
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.package_share import find_in_share
from space_robot_scenario import find_scenario, parse_overrides

CAMPAIGN_FOLDER = "config/campaigns"
DISTRIBUTIONS = ("uniform", "normal", "lognormal", "unit_vector")
SPACINGS = ("linear", "log")
MAX_RUNS = 10_000_000
# Table columns that are not parameters or figures (result_table.py): a parameter may not take these names.
RESERVED_COLUMNS = ("run", "seed", "outcome", "complete", "requirements_met", "simulated_time_s", "wall_time_s",
                    "error", "overrides", "host")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Distribution:
    """A random draw: `kind` in DISTRIBUTIONS; `arguments` name -> float or tuple of floats (one per entry of a
    vector value); `size` None for a scalar, else the vector's length."""

    kind: str
    arguments: dict
    size: int | None

    def nominal(self):
        """The distribution's centre (the mean, the median; the first axis for a direction): the value the
        load-time checks try."""
        n = 1 if self.size is None else self.size
        a = {k: np.broadcast_to(np.asarray(v, float), (n,)) for k, v in self.arguments.items()}
        values = {"uniform": lambda: (a["low"] + a["high"]) / 2, "normal": lambda: a["mean"],
                  "lognormal": lambda: a["median"], "unit_vector": lambda: np.eye(n)[0]}[self.kind]()
        values = [float(v) for v in values]
        return values[0] if self.size is None else values

    def draw(self, rng: np.random.Generator):
        """One value (float, or list of floats) from `rng`. The raw draws are numpy's (uniform on [0, 1),
        standard normal); the transforms are Python float arithmetic and `math`, so a value does not change with
        NumPy's vectorised exp or norm kernels (they differ in the last bit between NumPy 1.26 and 2.x)."""
        n = 1 if self.size is None else self.size
        a = {k: [float(x) for x in np.broadcast_to(np.asarray(v, float), (n,))] for k, v in self.arguments.items()}
        if self.kind == "uniform":
            values = [lo + (hi - lo) * u for lo, hi, u in zip(a["low"], a["high"], rng.random(n).tolist())]
        elif self.kind == "normal":
            values = [m + s * z for m, s, z in zip(a["mean"], a["std"], rng.standard_normal(n).tolist())]
        elif self.kind == "lognormal":
            values = [m * math.exp(s * z) for m, s, z in zip(a["median"], a["sigma"], rng.standard_normal(n).tolist())]
        else:                                            # unit_vector: isotropic direction
            values = [0.0] * n
            while not any(values):
                values = rng.standard_normal(n).tolist()
            norm = math.sqrt(math.fsum(v * v for v in values))
            values = [v / norm for v in values]
        return values[0] if self.size is None else values


@dataclass(frozen=True)
class Parameter:
    """One varied quantity. `key`: the --set key it sets (None: used only through another's `scaled_by`);
    `mode`: grid, list or random; `values`: the grid or list values; `distribution`: the random draw;
    `scaled_by`: a scalar parameter the value is multiplied by before it is set; `unit`: for plot labels."""

    name: str
    key: str | None
    mode: str
    values: tuple = ()
    distribution: Distribution | None = None
    scaled_by: str | None = None
    unit: str = ""
    description: str = ""

    @property
    def nominal(self):
        """The value the load-time checks try: the first grid or list value, a distribution's centre."""
        return self.values[0] if self.distribution is None else self.distribution.nominal()

    @property
    def kind(self) -> str:
        """'number', 'vector' (fixed length) or 'text' (any other YAML value): the table's column type(s)."""
        if self.distribution is not None:
            return "number" if self.distribution.size is None else "vector"
        return value_kind(self.values)

    @property
    def size(self) -> int | None:
        """Length of a vector parameter."""
        if self.kind != "vector":
            return None
        return self.distribution.size if self.distribution is not None else len(self.values[0])


@dataclass(frozen=True)
class ReportSettings:
    worst_runs: int = 5
    confidence: float = 0.95           # of the success rate's interval (Clopper-Pearson)
    percentiles: tuple = (5.0, 50.0, 95.0)


@dataclass(frozen=True)
class Campaign:
    name: str
    source: str | None
    scenario: Path                     # the scenario file
    scenario_argument: str             # how to name it on a space-robot-sim command line
    overrides: tuple                   # --set KEY=VALUE texts applied to every run
    parameters: tuple                  # Parameter, in file order
    figures: tuple                     # dotted summary entries
    seed: int = 0
    samples: int = 1
    seed_key: str | None = None        # --set key that receives each run's seed (scenarios with random inputs)
    paired_cases: bool = False         # the list cases share their random draws and seeds (run_plan.py)
    success: dict | None = None        # None: the scenario's requirements; else figure -> maximum
    worst_by: str = ""
    report: ReportSettings = field(default_factory=ReportSettings)
    description: str = ""

    def parameter(self, name: str) -> Parameter:
        return next(p for p in self.parameters if p.name == name)

    @property
    def grid_parameters(self) -> tuple:
        return tuple(p for p in self.parameters if p.mode == "grid")

    @property
    def list_parameters(self) -> tuple:
        return tuple(p for p in self.parameters if p.mode == "list")

    @property
    def random_parameters(self) -> tuple:
        return tuple(p for p in self.parameters if p.mode == "random")

    @property
    def cases(self) -> int:
        """Number of list cases (1 without list parameters)."""
        lists = self.list_parameters
        return len(lists[0].values) if lists else 1

    @property
    def grid_points(self) -> int:
        return math.prod(len(p.values) for p in self.grid_parameters)

    @property
    def total_runs(self) -> int:
        return self.cases * self.grid_points * self.samples

    def identity(self) -> dict:
        """What determines the runs and their rows (strict-JSON-able): a campaign resumed in an output directory
        must have the same identity as the one that started there. Reporting settings are not part of it."""
        return {
            "scenario": str(self.scenario),
            "scenario_sha256": hashlib.sha256(self.scenario.read_bytes()).hexdigest(),
            "set": list(self.overrides),
            "seed": self.seed, "samples": self.samples, "seed_key": self.seed_key,
            # only when on: a directory of a campaign without it still resumes (its identity is as it was)
            **({"paired_cases": True} if self.paired_cases else {}),
            "parameters": {p.name: {"key": p.key, "mode": p.mode, "values": list(p.values),
                                    "distribution": None if p.distribution is None else
                                    {"kind": p.distribution.kind, "size": p.distribution.size,
                                     **{k: list(v) if isinstance(v, tuple) else v
                                        for k, v in p.distribution.arguments.items()}},
                                    "scaled_by": p.scaled_by} for p in self.parameters},
            "figures": list(self.figures),
            "run_order": RUN_ORDER,
        }


# how run_plan.py numbers the runs: part of a campaign's identity, so that a directory started under another
# numbering is not resumed with this one (runs would be repeated or left out)
RUN_ORDER = "cells (list case x grid point) fastest, then samples"


def value_kind(values) -> str:
    """'number' when every value is a real number, 'vector' when every value is a list of real numbers of one
    length, 'text' otherwise."""
    if all(_is_number(v) for v in values):
        return "number"
    if all(isinstance(v, list) and v and all(_is_number(x) for x in v) for v in values) and \
            len({len(v) for v in values}) == 1:
        return "vector"
    return "text"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def find_campaign(text: str | Path) -> Path:
    """A campaign file from a path or the name of a shipped one (config/campaigns/NAME.yaml)."""
    return find_in_share(text, CAMPAIGN_FOLDER, "campaign")


def load_campaign(text: str | Path) -> Campaign:
    """Read and validate a campaign given as a path or a shipped name. ConfigError naming the field."""
    return read_campaign(load_yaml_file(find_campaign(text)))


def read_campaign(reader: ConfigReader) -> Campaign:
    """Parse and validate a campaign mapping (see the module docstring)."""
    name = reader.string("name")
    if not _NAME.match(name.replace("-", "_")):
        raise reader.error("name", f"must be letters, digits, '_' or '-' (it names the output folder), got {name!r}")
    scenario, scenario_argument = _scenario(reader)
    overrides = tuple(reader.string_list("set", []))
    _check_overrides(reader, "set", overrides)
    parameters = _parameters(reader)
    samples = reader.integer("samples", 1, minimum=1)
    seed_key = reader.string("seed_key", None) if reader.raw("seed_key", None) is not None else None
    if seed_key is not None:
        _check_overrides(reader, "seed_key", [f"{seed_key}=0"])
    randoms = [p.name for p in parameters if p.mode == "random"]
    if (randoms or seed_key) and not reader.has("seed"):
        raise reader.error("seed", f"is required: {'parameters ' + ', '.join(randoms) if randoms else 'seed_key'} "
                           "draw random numbers, and the seed makes the campaign repeatable")
    seed = reader.integer("seed", 0, minimum=0)
    if samples > 1 and not randoms and seed_key is None:
        raise reader.error("samples", f"is {samples}, but no parameter is random and there is no seed_key: the "
                           "samples of a grid point would be identical runs")
    if not parameters and seed_key is None:
        raise reader.error("parameters", "is required (at least one parameter to vary, or a seed_key)")
    paired = reader.boolean("paired_cases", False)
    if paired and not any(p.mode == "list" for p in parameters):
        raise reader.error("paired_cases", "pairs the list cases' runs: there is no list parameter")
    figures = tuple(reader.string_list("figures"))
    if not figures:
        raise reader.error("figures", "must name at least one summary entry, e.g. pregrasp.distance_m")
    for i, figure in enumerate(figures):
        if not all(figure.split(".")) or figure in RESERVED_COLUMNS or figure in {p.name for p in parameters}:
            raise reader.error(f"figures[{i}]", f"{figure!r} is not a dotted summary entry, or clashes with a "
                               "column of the table")
    success = _success(reader, figures)
    worst_by = reader.string("worst_by", figures[0], choices=figures)
    report = _report_settings(reader)
    campaign = Campaign(name=name, source=reader.source, scenario=scenario, scenario_argument=scenario_argument,
                        overrides=overrides, parameters=parameters, figures=figures, seed=seed, samples=samples,
                        seed_key=seed_key, paired_cases=paired, success=success, worst_by=worst_by, report=report,
                        description=reader.string("description", ""))
    if campaign.total_runs > MAX_RUNS:
        raise reader.error("parameters", f"give {campaign.total_runs} runs, more than {MAX_RUNS}")
    reader.reject_unknown()
    return campaign


def _scenario(reader: ConfigReader) -> tuple[Path, str]:
    """The scenario file (next to the campaign, in the share, or a shipped name) and the argument that names it
    for space-robot-sim (the shipped name when it is one, else the absolute path)."""
    text = reader.string("scenario")
    try:
        path = find_file(text, reader.directory)
    except FileNotFoundError:
        try:
            path = find_scenario(text)
        except ConfigError as exc:
            raise reader.error("scenario", exc.problem) from None
    path = path.resolve()
    try:
        shipped = find_scenario(path.stem).resolve() == path
    except ConfigError:
        shipped = False
    return path, path.stem if shipped else str(path)


def _check_overrides(reader: ConfigReader, key: str, items) -> None:
    try:
        parse_overrides(items, origin=f"{reader.field(key)}:")
    except ConfigError as exc:
        raise reader.error(key, exc.problem) from None


def _parameters(reader: ConfigReader) -> tuple:
    section = reader.raw("parameters", {}) or {}
    if not isinstance(section, dict):
        raise reader.error("parameters", "must be a mapping name -> {key, grid | list | random}")
    params = reader.sub("parameters", {})
    out = []
    for name in section:
        if not isinstance(name, str) or not _NAME.match(name) or name in RESERVED_COLUMNS:
            raise params.error(str(name), f"a parameter name must be an identifier (letters, digits, '_') and none "
                               f"of {', '.join(RESERVED_COLUMNS)}")
        out.append(_parameter(params.sub(name), name))
    keys: dict = {}
    for p in out:
        if p.key is not None and p.key in keys:
            raise params.error(p.name, f"key {p.key!r} is set by more than one parameter ({keys[p.key]} and "
                               f"{p.name})")
        keys[p.key] = p.name
    names = {p.name: p for p in out}
    for p in out:
        if p.scaled_by is None:
            continue
        other = names.get(p.scaled_by)
        if other is None or other.kind != "number" or other.scaled_by is not None:
            raise params.error(f"{p.name}.scaled_by", f"must name another scalar parameter that is not scaled "
                               f"itself (numbers: {[q.name for q in out if q.kind == 'number' and q is not p]})")
        if p.kind == "text":
            raise params.error(f"{p.name}.scaled_by", "only numbers and vectors can be scaled")
    used = {p.scaled_by for p in out}
    for p in out:
        if p.key is None and p.name not in used:
            raise params.error(p.name, "has no key and no parameter is scaled_by it: give the --set key it varies")
    lengths = {p.name: len(p.values) for p in out if p.mode == "list"}
    if len(set(lengths.values())) > 1:
        raise params.error(next(iter(lengths)), f"list parameters go together, index by index, and need one length; "
                           f"got {lengths}")
    return tuple(out)


def _parameter(reader: ConfigReader, name: str) -> Parameter:
    key = reader.string("key", None) if reader.raw("key", None) is not None else None
    modes = [m for m in ("grid", "list", "random") if reader.has(m)]
    if len(modes) != 1:
        raise reader.error(modes[1] if len(modes) > 1 else "grid",
                           "give exactly one of grid (values crossed with the other grids), list (values taken "
                           "with the other lists, index by index) or random (a distribution)")
    mode = modes[0]
    values, distribution = (), None
    if mode == "grid":
        values = _grid(reader)
    elif mode == "list":
        values = reader.raw("list")
        if not isinstance(values, list) or not values:
            raise reader.error("list", "must be a non-empty list of values")
        values = tuple(values)
    else:
        distribution = _distribution(reader.sub("random"))
    for i, value in enumerate(values):
        _check_value(reader, f"{mode}[{i}]", value)
    # a grid runs each value: the same one twice is a mistake; a list's cases repeat values in one column (the
    # other columns tell the cases apart)
    if mode == "grid" and value_kind(values) == "text" and len({yaml_text(v) for v in values}) != len(values):
        raise reader.error(mode, "has duplicate values")
    if key is not None:
        _check_overrides(reader, "key", [f"{key}=0"])
    parameter = Parameter(name=name, key=key, mode=mode, values=values, distribution=distribution,
                          scaled_by=reader.string("scaled_by", None) if reader.raw("scaled_by", None) is not None
                          else None, unit=reader.string("unit", ""), description=reader.string("description", ""))
    reader.reject_unknown()
    return parameter


def _grid(reader: ConfigReader) -> tuple:
    raw = reader.raw("grid")
    if isinstance(raw, list):
        if not raw:
            raise reader.error("grid", "must not be empty")
        return tuple(raw)
    if not isinstance(raw, dict):
        raise reader.error("grid", "must be a list of values or {start, stop, num, spacing}")
    grid = reader.sub("grid")
    start, stop = grid.number("start"), grid.number("stop")
    num = grid.integer("num", minimum=2)
    spacing = grid.string("spacing", "linear", choices=SPACINGS)
    grid.reject_unknown()
    if spacing == "log":
        if start <= 0 or stop <= 0:
            raise grid.error("start" if start <= 0 else "stop", "must be > 0 for a log spacing")
        points = np.geomspace(start, stop, num)
    else:
        points = np.linspace(start, stop, num)
    return tuple(float(v) for v in points)


def _distribution(reader: ConfigReader) -> Distribution:
    kind = reader.string("distribution", choices=DISTRIBUTIONS)
    if kind == "unit_vector":
        size = reader.integer("dimension", 3, minimum=2)
        reader.reject_unknown()
        return Distribution(kind, {}, size)
    names = {"uniform": ("low", "high"), "normal": ("mean", "std"), "lognormal": ("median", "sigma")}[kind]
    arguments, sizes = {}, set()
    for name in names:
        raw = reader.raw(name)
        if isinstance(raw, list):
            arguments[name] = tuple(float(v) for v in reader.vector(name))
            sizes.add(len(raw))
        else:
            arguments[name] = reader.number(name)
    if len(sizes) > 1:
        raise reader.error(names[1], f"the lists of {' and '.join(names)} must have one length, got {sorted(sizes)}")
    size = sizes.pop() if sizes else None
    if size == 0:
        raise reader.error(names[0], "must not be an empty list")
    first, second = (np.broadcast_to(np.asarray(arguments[n], float), (size or 1,)) for n in names)
    if kind == "uniform" and np.any(second <= first):
        raise reader.error("high", f"must be > low, got low {arguments['low']} and high {arguments['high']}")
    if kind == "normal" and np.any(second <= 0):
        raise reader.error("std", f"must be > 0, got {arguments['std']}")
    if kind == "lognormal" and (np.any(first <= 0) or np.any(second <= 0)):
        raise reader.error("median" if np.any(first <= 0) else "sigma", "must be > 0")
    reader.reject_unknown()
    return Distribution(kind, arguments, size)


def _check_value(reader: ConfigReader, field_name: str, value) -> None:
    """A value must survive being written as --set text and read back (yaml_text)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise reader.error(field_name, f"must be finite, got {value}")
    if parse_yaml(yaml_text(value)) != value:
        raise reader.error(field_name, f"{value!r} cannot be written as a --set value")


def _success(reader: ConfigReader, figures: tuple) -> dict | None:
    raw = reader.raw("success", "requirements")
    if raw == "requirements":
        return None
    if not isinstance(raw, dict) or not raw:
        raise reader.error("success", "must be 'requirements' (the scenario's) or a mapping figure -> maximum")
    limits = reader.number_map("success")
    for figure in limits:
        if figure not in figures:
            raise reader.error(f"success.{figure}", f"is not one of the collected figures {list(figures)}")
    return limits


def _report_settings(reader: ConfigReader) -> ReportSettings:
    rep = reader.sub("report", {})
    settings = ReportSettings(
        worst_runs=rep.integer("worst_runs", 5, minimum=0),
        confidence=rep.number("confidence", 0.95, exclusive_minimum=0.0, maximum=0.9999),
        percentiles=tuple(rep.vector("percentiles", None, [5.0, 50.0, 95.0], minimum=0.0, maximum=100.0)))
    rep.reject_unknown()
    return settings


def yaml_text(value, place: str = "top") -> str:
    """`value` as the VALUE of a --set KEY=VALUE (YAML flow style) that parses back to exactly `value`:
    floats by repr (shortest round-trip form), lists and mappings in flow style, strings quoted when needed.
    `place` is where the text goes (top, item of a sequence, key or value of a mapping): a string is left plain
    only if it reads back as itself there (inside a flow sequence ':0' would not)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, int) else _float_text(value)
    if isinstance(value, str):
        return value if value and _plain_round_trips(value, place) else _double_quoted(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_text(v, "item") for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_text(str(k), 'key')}: {yaml_text(v, 'value')}" for k, v in value.items()) + "}"
    if value is None:
        return "null"
    raise TypeError(f"cannot write {value!r} as YAML")


# place -> (the YAML text with the string in it, what that text must read back as)
_PLACES = {"top": (lambda t: t, lambda t: t), "item": (lambda t: f"[{t}]", lambda t: [t]),
           "key": (lambda t: f"{{{t}: 0}}", lambda t: {t: 0}), "value": (lambda t: f"{{k: {t}}}", lambda t: {"k": t})}


def _plain_round_trips(text: str, place: str) -> bool:
    """Whether `text`, written plain at `place`, reads back as the string itself."""
    if text.strip() != text or any(c in text for c in ",[]{}#"):
        return False
    write, expected = _PLACES[place]
    try:
        return parse_yaml(write(text)) == expected(text)
    except Exception:  # noqa: BLE001 - any YAML error means: quote it
        return False


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar in ASCII: printable characters as they are, the rest as \\u/\\U escapes."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            out.append(char)
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _float_text(value: float) -> str:
    text = repr(float(value))
    return text if math.isfinite(value) else {"inf": ".inf", "-inf": "-.inf", "nan": ".nan"}[text]
