"""The supported ROS 2 distributions share the wire format of every message the nodes use
(space_robot_nodes/ros_distributions.py): the node cores serialise with one typestore, Humble's, for Humble and Jazzy.
ROS-free: rosbags ships the message definitions of both distributions. The bags and the nodes themselves are tested
under each real distribution in test/ros2 (.ci/run)."""
import pytest
from rosbags.typesys import Stores, get_typestore

from space_robot_nodes.ros_distributions import BAG_METADATA_VERSION, MESSAGE_DEFINITIONS, SUPPORTED
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario

# one scenario per kind of graph: free servicer, capture (grasp topics), flexible (modes, marker), adaptive
# force_motion (thrusters, estimates), the bench arm (fixed base)
SCENARIOS = ("servicer_pregrasp", "capture", "seed000_flexible_link", "hubble_adaptive_graph", "sawyer_lab")
ACTIONS = ("control_msgs/action/FollowJointTrajectory_Goal", "control_msgs/action/FollowJointTrajectory_Result",
           "control_msgs/action/FollowJointTrajectory_Feedback")     # the controller node's action (rclpy's classes)


def _fields(store, typename: str, seen: set) -> dict:
    """typename and every type nested in it -> its fields (names and types, no constants)."""
    if typename in seen or typename not in store.fielddefs:
        return {}
    seen.add(typename)
    _consts, fields = store.fielddefs[typename]
    out = {typename: fields}
    for _name, desc in fields:
        out.update(_nested(store, desc, seen))
    return out


def _nested(store, desc, seen: set) -> dict:
    kind, detail = desc
    if kind.name == "NAME":
        return _fields(store, detail, seen)
    if kind.name in ("ARRAY", "SEQUENCE"):
        return _nested(store, detail[0], seen)
    return {}


@pytest.fixture(scope="module")
def used_types() -> set:
    """Every message type on a topic of the shipped graphs (what the nodes publish and take)."""
    types = set(ACTIONS)
    for name in SCENARIOS:
        types |= {info.msgtype for info in SimulationRun(load_scenario(name)).graph.topics().values()}
    return types


def test_every_message_the_nodes_use_has_the_same_fields_in_humble_and_jazzy(used_types):
    humble, jazzy = get_typestore(Stores.ROS2_HUMBLE), get_typestore(Stores.ROS2_JAZZY)
    assert Stores(MESSAGE_DEFINITIONS) is Stores.ROS2_HUMBLE and SUPPORTED == ("humble", "jazzy")
    standard = sorted(t for t in used_types if t in humble.fielddefs)
    assert len(standard) >= 15 and "sensor_msgs/msg/JointState" in standard, standard
    for typename in standard:
        in_humble, in_jazzy = _fields(humble, typename, set()), _fields(jazzy, typename, set())
        assert in_humble == in_jazzy, typename
    # the only type of ours not in either store: Intera's JointCommand, registered by the nodes themselves
    assert sorted(set(used_types) - set(standard) - set(ACTIONS)) in ([], ["intera_core_msgs/msg/JointCommand"])


def test_the_check_sees_a_changed_field():
    """The comparison is of fields, nested types included: Marker differs in a constant only (Jazzy's ARROW_STRIP),
    and that is not a difference; a field would be (Humble's Marker has 19 fields, Jazzy's too)."""
    humble, jazzy = get_typestore(Stores.ROS2_HUMBLE), get_typestore(Stores.ROS2_JAZZY)
    marker = "visualization_msgs/msg/Marker"
    assert humble.fielddefs[marker][0] != jazzy.fielddefs[marker][0]            # constants differ
    assert _fields(humble, marker, set()) == _fields(jazzy, marker, set())
    # types whose fields did change (not ones the nodes use): Jazzy's Range gained its variance field
    for changed in ("sensor_msgs/msg/Range", "rmw_dds_common/msg/Gid"):
        assert _fields(humble, changed, set()) != _fields(jazzy, changed, set()), changed


def test_the_bag_metadata_version_is_one_both_distributions_read():
    """rosbag2 reads metadata up to version 8 in Humble and 9 in Jazzy; 9 writes offered_qos_profiles as a YAML list
    that Humble cannot read."""
    assert BAG_METADATA_VERSION == 8


def test_package_xml_declares_every_message_package_the_nodes_use(used_types):
    """A ROS user's rosdep installs what package.xml declares: every message package on the nodes' topics (and the
    action's) is an exec_depend, under both distributions alike. intera_core_msgs is the real Sawyer's, which only
    its launch needs (README, The real Sawyer)."""
    import re
    from pathlib import Path

    declared = set(re.findall(r"<exec_depend>([\w]+)</exec_depend>",
                              (Path(__file__).resolve().parents[1] / "package.xml").read_text()))
    used = {t.split("/")[0] for t in used_types} - {"intera_core_msgs"}
    assert used <= declared, sorted(used - declared)
