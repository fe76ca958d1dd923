"""Same configuration, same result, bit for bit (two independent simulators, fresh models)."""
import numpy as np

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator


def trajectory_bytes() -> bytes:
    system = SystemModel(load_model_config("config/models/servicer_target.yaml"))
    q0, v0 = system.neutral(), np.zeros(system.nv)
    v0[system.v_slice(system.subtree("target").config.root_joint_name)] = [0.0, 0.01, 0.0, 0.02, 0.01, -0.03]
    sim = Simulator(system, SimulationSettings(dt=1e-3), q0, v0)
    chunks = []
    for k in range(500):
        t = sim.state.t
        sim.step(0.5 * np.sin(np.arange(1, 8) * t), 0.01 * np.cos(np.arange(1, 4) * t))
        if k % 50 == 0:
            chunks += [sim.state.q.tobytes(), sim.state.v.tobytes(), sim.state.z.tobytes()]
    return b"".join(chunks)


def test_two_runs_are_bit_identical():
    first, second = trajectory_bytes(), trajectory_bytes()
    assert len(first) > 0 and first == second
