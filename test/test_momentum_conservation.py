"""Which momentum components a run checks (space_robot_runtime/momentum_conservation.py), and the planar
air-bearing run checking them: its summary gave the drift as null ("exchanged with the outside world... gravity")
though gravity is along the table normal."""
import json
from types import SimpleNamespace

import numpy as np

from space_robot_runtime.cli import EXIT_OK, sim_main
from space_robot_runtime.momentum_conservation import conserved_momentum


def system(*bases, gravity=(0.0, 0.0, 0.0), thrusters=None):
    subtrees = [SimpleNamespace(config=SimpleNamespace(base_joint=b, mount_frame=f, mount_rpy=rpy))
                for b, f, rpy in bases]
    return SimpleNamespace(subtrees=subtrees, config=SimpleNamespace(gravity=list(gravity)),
                           base_thrusters=thrusters)


FREE, TABLE = ("free_flyer", "", (0, 0, 0)), ("planar", "", (0, 0, 0))


def test_the_conserved_components_follow_the_external_forces():
    assert conserved_momentum(system(FREE))["components"] == "all"
    assert conserved_momentum(system(FREE, thrusters=object())) is None
    assert conserved_momentum(system(("fixed", "", (0, 0, 0)))) is None
    falling = conserved_momentum(system(FREE, gravity=(0, 0, -9.81)))          # p across g, all of L
    assert np.allclose(np.array(falling["linear"]) @ [0, 0, 1], 0) and len(falling["linear"]) == 2
    assert np.allclose(falling["angular"], np.eye(3))
    table = conserved_momentum(system(TABLE, FREE, gravity=(0, 0, -9.81)))     # in-plane p, L along the normal
    assert np.allclose(np.abs(table["angular"]), [[0, 0, 1]]) and len(table["linear"]) == 2
    assert np.allclose(np.array(table["linear"]) @ np.array(table["linear"]).T, np.eye(2))    # orthonormal
    tilted = ("planar", "", (0.1, 0.0, 0.0))                                   # gravity pushes in the plane
    assert conserved_momentum(system(tilted, gravity=(0, 0, -9.81))) is None
    assert np.allclose(conserved_momentum(system(tilted))["angular"], [[0.0, -np.sin(0.1), np.cos(0.1)]])


def test_the_air_bearing_run_checks_its_in_plane_momentum(tmp_path):
    """Tolerance 1e-9 (kg m/s, kg m^2/s): RK4 at 1 ms keeps these to ~1e-13 over 14 s; a lost constraint force
    or a torque leaking to the world shows far above it."""
    out = tmp_path / "table"
    assert sim_main(["airbearing_flexible_joint", "--duration", "2", "--out", str(out), "--no-plots",
                     "--no-progress"]) == EXIT_OK
    summary = json.loads((out / "summary.json").read_text())
    drift = summary["momentum_drift"]
    assert drift is not None and "bearing plane" in drift["components"]
    assert drift["max_linear_kg_m_s"] < 1e-9 and drift["max_angular_kg_m2_s"] < 1e-9
    assert any(n.startswith("momentum drift: of the conserved components only") for n in summary["notes"])
