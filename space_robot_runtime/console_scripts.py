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

import os
from importlib import import_module

from space_robot_runtime.interruption import Interruption

# OpenBLAS threads per process (docs/performance.md): one. Every matrix of a run is at most nv x nv (41 x 41), where
# BLAS threads never pay and a threaded OpenBLAS (NumPy 1.26's) keeps its threads spinning after each call, on the
# core a second campaign worker needs. Set before NumPy loads; a user's own setting wins. Ray's and the process
# pool's workers inherit it from the campaign's process.
BLAS_THREADS = "1"


def _launch(module: str, function: str, single_blas_thread: bool = False) -> int:
    interruption = Interruption().hold()          # to the process's end: its exit is the last instruction
    if single_blas_thread:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", BLAS_THREADS)
    return getattr(import_module(module), function)(interruption=interruption)


def space_robot_sim() -> int:
    return _launch("space_robot_runtime.cli", "sim_main", single_blas_thread=True)


def space_robot_plot() -> int:
    return _launch("space_robot_runtime.cli", "plot_main")


def space_robot_identify() -> int:
    return _launch("space_robot_identification.tool.cli", "identify_main")


def space_robot_campaign() -> int:
    return _launch("space_robot_campaign.cli", "main", single_blas_thread=True)
