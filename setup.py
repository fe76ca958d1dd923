"""ament_python build of space_robot; also a plain pip install on a machine without ROS."""
import os

from setuptools import find_packages, setup

package_name = "space_robot"


def share_tree(folder):
    """data_files entries for every file below `folder` (glob does not recurse)."""
    entries = []
    for root, _dirs, files in os.walk(folder):
        files = [os.path.join(root, f) for f in sorted(files) if not f.endswith((".pyc", "~"))]
        if files:
            entries.append((os.path.join("share", package_name, root), files))
    return entries


setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(include=["space_robot_*", "space_robot_*.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        *share_tree("launch"),
        *share_tree("urdf"),
        *share_tree("config"),
        *share_tree("rviz"),
    ],
    python_requires=">=3.10",
    install_requires=[
        "numpy>=1.21",
        "scipy>=1.8",
        "pyyaml>=5.4",
        "matplotlib>=3.5",
        "xacro>=2.0",
        "rosbags>=0.10",
    ],
    extras_require={
        # Pinocchio: `pin` on the package index; ROS distributions ship it as ros-<distro>-pinocchio,
        # so it is not a hard install requirement of the ROS build.
        "pin": ["pin>=3.4"],
        "test": ["pytest>=7", "hypothesis>=6", "ruff>=0.4"],
        # space-robot-campaign (space_robot_campaign/ only imports them): Ray runs the runs, pyarrow writes the
        # Parquet table. The oldest supported releases are pinned in .ci/oldest-constraints.txt (tested there with
        # NumPy 1.26; pyarrow 26 and later need NumPy 2).
        "campaign": ["ray>=2.10", "pyarrow>=16.1"],
    },
    zip_safe=True,
    maintainer="space_robot maintainers",
    maintainer_email="maintainers@space-robot.invalid",
    description="Free-floating space manipulator simulation, control and holonomy monitoring.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "space-robot-sim = space_robot_runtime.cli:sim_main",
            "space-robot-plot = space_robot_runtime.cli:plot_main",
            "space-robot-identify = space_robot_identification.tool.cli:identify_main",
            "space-robot-campaign = space_robot_campaign.cli:main",
            "dynamics_node = space_robot_nodes.ros.dynamics_node:main",
            "controller_node = space_robot_nodes.ros.controller_node:main",
            "holonomy_monitor_node = space_robot_nodes.ros.holonomy_monitor_node:main",
            "sawyer_command_adapter = space_robot_nodes.ros.sawyer_command_adapter:main",
            "scenario_player = space_robot_nodes.ros.scenario_player_node:main",
            "visualization_node = space_robot_nodes.ros.visualization_node:main",
        ],
    },
)
