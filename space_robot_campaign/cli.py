"""space-robot-campaign: Monte Carlo and parameter sweeps of a scenario, on Ray.

    space-robot-campaign CAMPAIGN [--out DIR] [--address RAY_ADDRESS [--connect-timeout S]] [--workers N]
                         [--resume] [--overwrite] [--runs N] [--progress|--no-progress] [--csv] [--no-plots]
                         [--keep-bags WHICH] [--in-process]

CAMPAIGN is a path or the name of a shipped campaign (config/campaigns/). See docs/campaigns.md.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from space_robot_dynamics.errors import SpaceRobotError
from space_robot_runtime.command_line import EXIT_INTERNAL, CommandLine  # noqa: F401 - this tool's status 4

CAMPAIGN = CommandLine("space-robot-campaign")
EXIT_OK, EXIT_BAD_INPUT, EXIT_NOT_RUN = 0, 2, 3
EXIT_STATUS_HELP = """exit status:
  0    every requested run has its row (whatever the runs' outcomes: the report says how many succeeded)
  2    bad input (campaign file, scenario, --out...): one line names it; nothing was run
  3    the campaign could not run: Ray is missing, did not start, or the cluster did not answer within
       --connect-timeout; nothing was written
  4    internal error (a bug; please report it with the traceback)
  130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: the rows of the finished runs are kept, the table and
       report written; --resume runs the missing ones"""


def runnable(command: str, search_path: str | None = None) -> str:
    """A report's `space-robot-sim ...` command as the user can paste it here: the report keeps the bare name
    (portable), the terminal gets this install's script by its path when the name is not found on PATH (a venv
    not activated, as after `make install`). search_path: PATH to look in (default the environment's)."""
    import shlex
    import shutil

    name = "space-robot-sim"
    script = Path(sys.executable).parent / name
    if not command.startswith(name + " ") or shutil.which(name, path=search_path) or not script.is_file():
        return command
    return shlex.quote(str(script)) + command[len(name):]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _connect_timeout(text: str) -> float:
    """Seconds, above 0 and at most CONNECT_TIMEOUT_MAX_S (argparse type of --connect-timeout)."""
    from .executors import CONNECT_TIMEOUT_MAX_S

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value <= CONNECT_TIMEOUT_MAX_S:          # NaN fails both comparisons
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {CONNECT_TIMEOUT_MAX_S:g} s, got {text!r}")
    return value


def _campaign_list() -> str:
    from space_robot_dynamics.config_reader import parse_yaml
    from space_robot_dynamics.package_share import resolve

    from .campaign_config import CAMPAIGN_FOLDER

    lines = []
    for path in sorted(resolve(CAMPAIGN_FOLDER).glob("*.yaml")):
        try:
            description = parse_yaml(path.read_text()).get("description", "")
        except Exception:  # noqa: BLE001 - a help text must not fail on one unreadable file
            description = ""
        lines.append(f"  {path.stem:<24} {description}")
    return "shipped campaigns (give the name, or a path to your own file):\n" + "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    from .executors import CONNECT_TIMEOUT_S

    parser = argparse.ArgumentParser(
        prog=CAMPAIGN.tool, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a campaign (parameter sweep or Monte Carlo of a scenario) on Ray: one task per run, "
                    "one row per run in a Parquet table written as runs finish, then a report (success rate "
                    "with its confidence interval, percentiles, plots, worst runs with the command that "
                    "reproduces each).",
        epilog=f"{_campaign_list()}\n\n{EXIT_STATUS_HELP}")
    parser.add_argument("campaign", help="campaign name or YAML file")
    parser.add_argument("--out", type=Path, help="output directory (default: out/campaigns/<campaign name>)")
    parser.add_argument("--address", metavar="RAY_ADDRESS",
                        help="join this running Ray cluster (e.g. 10.0.0.5:6379 or auto) instead of starting a "
                             "local Ray on this machine's cores")
    parser.add_argument("--connect-timeout", type=_connect_timeout, metavar="S",
                        help=f"with --address: how long the cluster has to answer before the campaign gives up "
                             f"(exit 3, nothing written; default {CONNECT_TIMEOUT_S:g} s: a cluster answers in "
                             "milliseconds on a LAN, a second or two over a VPN, and a head node still starting "
                             "within ~5 s)")
    parser.add_argument("--workers", type=_positive_int,
                        help="runs at a time (default: every core here, or the cluster's CPUs with --address)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the campaign in --out: run only the runs it has no row for")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier campaign in --out")
    parser.add_argument("--runs", type=_positive_int, metavar="N",
                        help="run only the first N runs of the campaign (a quick look; --resume adds more)")
    progress = parser.add_mutually_exclusive_group()
    progress.add_argument("--progress", dest="progress", action="store_true", default=None,
                          help="progress bar on stderr even when it is not a terminal")
    progress.add_argument("--no-progress", dest="progress", action="store_false")
    parser.add_argument("--csv", action="store_true", help="also write the table as runs.csv")
    parser.add_argument("--no-plots", action="store_true", help="a report without its PNGs")
    parser.add_argument("--keep-bags", metavar="WHICH",
                        help="keep the bag, summary and plots of some runs in DIR/bags/: 'failed' (the runs that "
                             "are not a success, run again with their bag), 'all', run indices and ranges "
                             "('3,17,40-45'), or a mix ('failed,3')")
    parser.add_argument("--in-process", action="store_true",
                        help="run the runs one after another in this process, without Ray (debuggers, "
                             "profilers, machines where Ray cannot start)")
    return parser


def main(argv: list[str] | None = None, interruption=None) -> int:
    """`interruption`: the one the console script holds since its first instruction (console_scripts.py)."""
    args = _parser().parse_args(argv)
    return CAMPAIGN.run(lambda interruption: _campaign(args, interruption), interruption=interruption)


def _campaign(args, interruption) -> int:
    from .campaign_config import load_campaign
    from .campaign_output import default_out
    from .campaign_report import rate_text
    from .campaign_run import BagSelection, run_campaign
    from .executors import CONNECT_TIMEOUT_S, ExecutorError, InProcessExecutor, RayExecutor

    if args.in_process and (args.address or (args.workers or 1) > 1):
        CAMPAIGN.say("error: --in-process runs one run at a time in this process: it takes neither --address nor "
                     "--workers above 1")
        return EXIT_BAD_INPUT
    if args.connect_timeout is not None and not args.address:
        CAMPAIGN.say("error: --connect-timeout bounds joining a cluster: give it with --address (a local Ray is "
                     "started, not joined)")
        return EXIT_BAD_INPUT
    try:
        bags = BagSelection.parse(args.keep_bags)
        campaign = load_campaign(args.campaign)
    except SpaceRobotError as exc:
        CAMPAIGN.say(f"error: {exc}")
        return EXIT_BAD_INPUT

    def executor():
        if args.in_process:
            return InProcessExecutor(stop=interruption)     # Ctrl-C stops the run in progress too
        # rearm: Ray's start and shutdown replace the SIGTERM handler at the C level (RayExecutor says how);
        # without it a SIGTERM on Ray ended the campaign with a stack and exit 1, or killed it after the runs
        return RayExecutor(address=args.address, workers=args.workers, stop=interruption, rearm=interruption.rearm,
                           connect_timeout=args.connect_timeout or CONNECT_TIMEOUT_S)

    try:
        result = run_campaign(campaign, args.out or default_out(campaign), executor, limit=args.runs,
                              resume=args.resume, overwrite=args.overwrite, bags=bags, csv=args.csv,
                              progress=args.progress, plots=not args.no_plots, stop=interruption)
    except SpaceRobotError as exc:
        CAMPAIGN.say(f"error: {exc}")
        return EXIT_BAD_INPUT
    except ExecutorError as exc:
        if interruption.requested:
            CAMPAIGN.say(f"interrupted by {interruption.name} before any run started; nothing was written")
            return interruption.exit_status
        CAMPAIGN.say(f"error: {exc}")
        return EXIT_NOT_RUN
    report = result.report
    print(f"campaign {campaign.name}: {result.recorded} of {result.requested} runs recorded ({result.new_runs} new, "
          f"{result.wall_time:.1f} s on {result.executor})")
    print(f"  success rate {rate_text(report['success_rate'])}, {report['success_rate']['method']}")
    print("  outcomes: " + ", ".join(f"{k} {v}" for k, v in report["outcomes"].items()))
    print(f"  table {result.table}" + (f"\n  csv {result.csv}" if result.csv else ""))
    print(f"  report {result.report_files[1]}")
    for worst in report["worst_runs"][:1]:
        print(f"  worst run {worst['run']} ({worst['outcome']}): {runnable(worst['command'])}")
    if result.interrupted:
        missing = result.requested - result.recorded
        CAMPAIGN.say(f"interrupted by {result.interrupted}: {missing} run(s) missing; the finished runs are in the "
                     f"table and the report; run again with --resume --out {result.out} to run the missing ones")
        return interruption.exit_status
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
