"""The console scripts' entry points (setup.py): each holds SIGINT and SIGTERM from its first instruction, then
imports its tool.

A tool's imports (NumPy, Pinocchio, SciPy, Ray) take one to two seconds, and a Ctrl-C that falls into them would
otherwise be a KeyboardInterrupt traceback and a SIGTERM a death by signal. Here the signal only sets the
Interruption (interruption.py), which the tool's CommandLine.run says in one line with 130 or 143 before its
body starts; after that the tool handles it at its own safe points. This module imports nothing but the
Interruption: the package's __init__ loads nothing heavy, and space-robot-identify must set OPENBLAS_NUM_THREADS
before NumPy loads. The window left is Python's own start-up, before this module runs (~20 ms).
"""
from __future__ import annotations

from importlib import import_module

from space_robot_runtime.interruption import Interruption


def _launch(module: str, function: str) -> int:
    interruption = Interruption().hold()          # to the process's end: its exit is the last instruction
    return getattr(import_module(module), function)(interruption=interruption)


def space_robot_sim() -> int:
    return _launch("space_robot_runtime.cli", "sim_main")


def space_robot_plot() -> int:
    return _launch("space_robot_runtime.cli", "plot_main")


def space_robot_identify() -> int:
    return _launch("space_robot_identification.tool.cli", "identify_main")


def space_robot_campaign() -> int:
    return _launch("space_robot_campaign.cli", "main")
