"""Bad input is rejected with an error that names the offending field; state is left untouched."""
import textwrap

import numpy as np
import pytest

from space_robot_dynamics.config_reader import ConfigReader, load_yaml_file
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator, read_simulation_settings

GOOD_LINK = ('<link name="{name}"><inertial><mass value="{mass}"/>'
             '<inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def model_files(tmp_path, urdf_body: str, extra_yaml: str = ""):
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(f'<robot name="r">{urdf_body}</robot>')
    config = tmp_path / "model.yaml"
    config.write_text(textwrap.dedent(f"""\
        name: bad
        subtrees:
          - {{name: robot, urdf: {urdf}, base_joint: free_flyer, base_link: base_link}}
        """) + extra_yaml)
    return config


def load(config):
    return SystemModel(load_model_config(config))


# ---- commands ---------------------------------------------------------------------------------
@pytest.fixture
def sim(servicer_target):
    return Simulator(servicer_target, SimulationSettings())


@pytest.mark.parametrize("arm, message", [
    (np.zeros(6), "arm_torque: expected 7 values"),
    ([0, 0, np.nan, 0, 0, 0, 0], "arm_torque: non-finite values at indices [2]"),
    ([0, 0, 0, 0, 0, 0, np.inf], "arm_torque: non-finite values at indices [6]"),
    (["a"] * 7, "arm_torque: not a numeric vector"),
])
def test_bad_arm_command_is_rejected_and_state_kept(sim, arm, message):
    before = sim.state.copy()
    with pytest.raises(CommandError, match=message.replace("[", r"\[").replace("]", r"\]")):
        sim.step(arm, None)
    assert sim.state.t == before.t and np.array_equal(sim.state.q, before.q)


def test_bad_wheel_command_names_the_field(sim):
    with pytest.raises(CommandError, match="wheel_torque: expected 3 values"):
        sim.step(None, [0.1, 0.2])


def test_unknown_joint_lookup(servicer_target):
    with pytest.raises(CommandError, match="unknown joint 'right_j9'"):
        servicer_target.v_index("right_j9")


def test_arm_torque_is_clipped_to_effort_limit(sim):
    sim.step([500.0, 0, 0, 0, 0, 0, -500.0], None)
    obs = sim.observe()
    assert obs.arm_torque[0] == 80.0 and obs.arm_torque[6] == -9.0     # URDF effort limits
    assert obs.saturated[0] and obs.saturated[6] and not obs.saturated[1]


def test_bad_initial_state_is_rejected(servicer_target):
    with pytest.raises(CommandError, match="q: expected 27 values"):
        Simulator(servicer_target, SimulationSettings(), q0=np.zeros(5))


# ---- YAML -------------------------------------------------------------------------------------
def test_malformed_yaml_names_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml: <yaml>: not valid YAML"):
        load_yaml_file(path)


@pytest.mark.parametrize("section, message", [
    ({"dt": -0.001}, "simulation.dt: must be > 0.0"),
    ({"dt": "fast"}, "simulation.dt: must be a number"),
    ({"dt": float("nan")}, "simulation.dt: must be finite"),
    ({"integrator": "rk45"}, "simulation.integrator: must be one of"),
    ({"dtt": 0.001}, "simulation.dtt: unknown key"),
])
def test_simulation_settings_are_validated(section, message):
    reader = ConfigReader({"simulation": section}, source="scenario.yaml").sub("simulation")
    with pytest.raises(ConfigError, match=message):
        read_simulation_settings(reader)


def test_unknown_arm_joint_in_config(tmp_path):
    body = GOOD_LINK.format(name="base_link", mass=10, i=1)
    config = model_files(tmp_path, body, "arm_joints: [elbow]\n")
    with pytest.raises(ConfigError, match="arm_joints: unknown joint 'elbow'"):
        load(config)


def test_unknown_base_joint_type(tmp_path):
    config = model_files(tmp_path, GOOD_LINK.format(name="base_link", mass=10, i=1))
    config.write_text(config.read_text().replace("free_flyer", "floating"))
    with pytest.raises(ConfigError, match=r"subtrees\[0\].base_joint: must be one of"):
        load(config)


# ---- URDF -------------------------------------------------------------------------------------
@pytest.mark.parametrize("body, message", [
    ("<link name='base_link'>", "not well-formed XML"),
    (GOOD_LINK.format(name="base_link", mass=-1, i=1), r"link\[base_link\].inertial.mass: must be > 0"),
    (GOOD_LINK.format(name="base_link", mass=1, i=-1), r"link\[base_link\].inertial.inertia: is not a physical"),
    (GOOD_LINK.format(name="base_link", mass="heavy", i=1), r"link\[base_link\].inertial.mass: not a number"),
    (GOOD_LINK.format(name="base_link", mass=1, i=1)
     + '<joint name="j" type="revolute"><parent link="base_link"/><child link="ghost"/>'
       '<limit effort="1" velocity="1" lower="-1" upper="1"/></joint>', r"joint\[j\].child: names an unknown link"),
    (GOOD_LINK.format(name="base_link", mass=1, i=1) + GOOD_LINK.format(name="l1", mass=1, i=1)
     + '<joint name="j" type="revolute"><parent link="base_link"/><child link="l1"/></joint>',
     r"joint\[j\].limit: a revolute/prismatic joint needs <limit>"),
])
def test_malformed_urdf_is_rejected(tmp_path, body, message):
    with pytest.raises(ConfigError, match=message):
        load(model_files(tmp_path, body))


def test_non_physical_inertia_triangle_inequality(tmp_path):
    body = ('<link name="base_link"><inertial><mass value="1"/>'
            '<inertia ixx="1" iyy="1" izz="5" ixy="0" ixz="0" iyz="0"/></inertial></link>')
    with pytest.raises(ConfigError, match="is not a physical inertia tensor"):
        load(model_files(tmp_path, body))


def test_missing_urdf_file(tmp_path):
    config = model_files(tmp_path, GOOD_LINK.format(name="base_link", mass=1, i=1))
    (tmp_path / "robot.urdf").unlink()
    with pytest.raises(ConfigError, match=r"subtrees\[0\].urdf: no such file"):
        load(config)


def test_wrong_base_link_name(tmp_path):
    config = model_files(tmp_path, GOOD_LINK.format(name="bus", mass=1, i=1))
    with pytest.raises(ConfigError, match=r"subtrees\[robot\].base_link: no link 'base_link'"):
        load(config)


def test_stiff_joint_damping_is_rejected_at_start(servicer_target):
    """Sawyer's upstream damping (5 N m s/rad) on its 0.3 kg wrist link is far too stiff for 1 ms RK4."""
    with pytest.raises(ConfigError, match=r"simulation.joint_damping/joint_friction: joint 'right_j\d'.*use dt <="):
        Simulator(servicer_target, SimulationSettings(dt=1e-3, joint_damping=True))


def test_divergence_raises_and_keeps_last_finite_state(servicer_target):
    from space_robot_dynamics.errors import SimulationDivergedError

    sim = Simulator(servicer_target, SimulationSettings(dt=0.1))
    sim.reset(v=np.full(servicer_target.nv, 1e200))
    before = sim.state.copy()
    with pytest.raises(SimulationDivergedError, match="state kept at t=0.000000"):
        sim.step()
    assert np.array_equal(sim.state.v, before.v) and sim.state.t == before.t
