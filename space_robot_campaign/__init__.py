"""Campaigns: Monte Carlo and parameter sweeps of scenarios, on Ray (docs/campaigns.md).

The glue level above space_robot_runtime: it imports the runtime and the node cores, nothing imports it.
Ray and pyarrow (the optional extra `campaign`) are imported only here, and only where they are used. The
public names below are importable from the package itself, each imported on first use.
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    "Campaign": ".campaign_config", "load_campaign": ".campaign_config", "read_campaign": ".campaign_config",
    "find_campaign": ".campaign_config",
    "RunSpec": ".run_plan", "plan": ".run_plan", "run_spec": ".run_plan", "run_values": ".run_plan",
    "run_seed": ".run_plan", "reproduce_command": ".run_plan",
    "run_one": ".run_task",
    "ResultTable": ".result_table",
    "run_campaign": ".campaign_run", "CampaignResult": ".campaign_run", "BagSelection": ".campaign_run",
    "RayExecutor": ".executors", "InProcessExecutor": ".executors", "ExecutorError": ".executors",
    "check_against_scenario": ".campaign_check",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
