"""Parameter identification from recorded runs (docs/identification.md): ROS-free core.

Named free parameters with bounds and start values, matched signals with weights, a time window and the
fitting methods (SciPy's Nelder-Mead, as seed 003, and bounded least squares), with Cramer-Rao style and
multi-start uncertainty. Problems: a body's inertial parameters from momentum conservation or joint torques
(body_regressors.py), and output-error matching of a `ParameterizedSimulation`: seed 003's flexible joint on the
simulator's elastic-joint model (elastic_joint_simulation.py).
The `tool` subpackage is the glue of the `space-robot-identify` command (bags, CSV, scenario runs, output
directory, plots); docs/identification.md explains the studies.
"""
from space_robot_dynamics.lazy_exports import lazy_exports

_EXPORTS = {
    "IdentificationConfig": ".identification_config", "load_identification_config": ".identification_config",
    "read_identification_config": ".identification_config",
    "ParameterizedSimulation": ".parameterized_simulation", "ElasticJointSimulation": ".elastic_joint_simulation",
    "BodyRegressors": ".body_regressors", "RecordedSignals": ".recorded_signals",
    "FreeParameter": ".free_parameters", "ParameterSpace": ".free_parameters", "KnownParameter": ".free_parameters",
    "fit": ".fitting", "Fit": ".fitting", "FitOptions": ".fitting",
    "Study": ".identification_study", "Dataset": ".identification_study",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
