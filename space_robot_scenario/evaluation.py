"""A scenario's `evaluation:` section: the geometry and the stated requirements the run's summary checks
(space_robot_runtime/run_summary.py). Lengths in m, angles in rad, forces in N, torques in N m, times in s."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader

# below this norm a direction given in the file is taken for a zero vector (a typo), not normalised
ZERO_DIRECTION = 1e-9


@dataclass(frozen=True)
class Requirements:
    """Stated figures the summary checks (rad, rad, m, rad; a capture: true, relative, s, N, N m); None: not
    stated."""

    final_tracking_error: float | None = None
    max_attitude_error: float | None = None
    final_pregrasp_distance: float | None = None
    final_pregrasp_angle: float | None = None
    grasped: bool | None = None
    max_momentum_change_across_grasp: float | None = None
    max_detumble_time: float | None = None
    max_peak_grasp_force: float | None = None
    max_peak_grasp_torque: float | None = None
    settling_time_s: float | None = None        # s: hybrid force/motion (evaluation.force_motion)
    final_force_error_n: float | None = None    # N
    max_lyapunov_increase: float | None = None  # relative to V at the grasp (adaptive force_motion)


# every stated limit is a positive number; `grasped` is the one boolean
_LIMITS = tuple(name for name in Requirements.__dataclass_fields__ if name != "grasped")


@dataclass(frozen=True)
class ForceMotionEvaluation:
    """Hybrid force/motion runs (controller mode force_motion): the settling bands of every error (joints rad or m,
    base attitude rad, contact force N), the thesis's settling time (s) the summary reports beside the run's."""

    joint_band: float
    attitude_band: float
    force_band: float
    thesis_settling_time_s: float | None = None


@dataclass(frozen=True)
class EvaluationConfig:
    """Pre-grasp geometry: the point `standoff` m out of `grapple_frame` along its `grapple_axis`, approached
    with the end effector's `approach_axis` pointing along -grapple_axis (into the fixture)."""

    end_effector_frame: str
    approach_axis: tuple
    grapple_frame: str
    grapple_axis: tuple
    standoff: float
    bus_subtree: str
    requirements: Requirements | None
    detumble_rate: float = 1.0e-3     # rad/s: the rates below which a captured stack counts as detumbled
    force_motion: ForceMotionEvaluation | None = None


def read_evaluation(reader: ConfigReader) -> EvaluationConfig | None:
    """The `evaluation:` section of a scenario (absent or null: None)."""
    if reader.raw("evaluation", None) is None:
        return None
    ev = reader.sub("evaluation")
    evaluation = EvaluationConfig(
        end_effector_frame=ev.string("end_effector_frame"),
        approach_axis=tuple(_unit(ev, "approach_axis")),
        grapple_frame=ev.string("grapple_frame"),
        grapple_axis=tuple(_unit(ev, "grapple_axis")),
        standoff=ev.number("standoff", minimum=0.0),
        bus_subtree=ev.string("bus_subtree", "servicer"),
        requirements=_requirements(ev.sub("requirements")) if ev.has("requirements") else None,
        detumble_rate=ev.number("detumble_rate", 1.0e-3, exclusive_minimum=0.0),
        force_motion=_force_motion(ev.sub("force_motion")) if ev.has("force_motion") else None,
    )
    ev.reject_unknown()
    return evaluation


def _requirements(rq: ConfigReader) -> Requirements:
    def stated(key):
        return rq.number(key, exclusive_minimum=0.0) if rq.raw(key, None) is not None else None

    requirements = Requirements(**{key: stated(key) for key in _LIMITS},
                                grasped=rq.boolean("grasped") if rq.raw("grasped", None) is not None else None)
    rq.reject_unknown()
    return requirements


def _force_motion(reader: ConfigReader) -> ForceMotionEvaluation:
    bands = reader.sub("bands")
    out = ForceMotionEvaluation(bands.number("joint", exclusive_minimum=0.0),
                                bands.number("base_attitude", exclusive_minimum=0.0),
                                bands.number("force", exclusive_minimum=0.0),
                                reader.number("thesis_settling_time_s", exclusive_minimum=0.0)
                                if reader.raw("thesis_settling_time_s", None) is not None else None)
    bands.reject_unknown()
    reader.reject_unknown()
    return out


def _unit(reader: ConfigReader, key: str) -> np.ndarray:
    vector = reader.vector(key, 3)
    norm = float(np.linalg.norm(vector))
    if norm < ZERO_DIRECTION:
        raise reader.error(key, "must be a non-zero vector")
    return vector / norm
