"""ament_python build of space_robot; also a plain pip install on a machine without ROS.

It also compiles the flexible step (space_robot_dynamics/simulation/native/flexible_step.cpp, ~2 min) when a C++
compiler and Pinocchio's, Boost's and Eigen's headers are found: Pinocchio's own (a `pin` wheel's cmeel prefix, a ROS
or system install) or SPACE_ROBOT_PINOCCHIO_INCLUDE / SPACE_ROBOT_EIGEN_INCLUDE. Without them, or when the compile
fails, the install goes on without it and the simulator runs the Python step (compiled_flexible_step.py says why).
"""
import glob
import os
import sys
import sysconfig

from setuptools import Extension, find_packages, setup

package_name = "space_robot"


def share_tree(folder):
    """data_files entries for every file below `folder` (glob does not recurse)."""
    entries = []
    for root, _dirs, files in os.walk(folder):
        files = [os.path.join(root, f) for f in sorted(files) if not f.endswith((".pyc", "~"))]
        if files:
            entries.append((os.path.join("share", package_name, root), files))
    return entries


def header_folders():
    """Folders holding pinocchio/algorithm/crba.hpp and boost/ (Pinocchio's) and Eigen/Core, or None.

    Searched: the environment variables, the `pin` wheel's cmeel prefix in this interpreter's site-packages (also
    from pip's isolated build: sysconfig still names the target environment's), the interpreter's prefix, ROS and
    the system folders."""
    prefixes = [os.path.join(p, "cmeel.prefix", "include") for p in
                [*sys.path, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]] if p]
    prefixes += [os.path.join(sys.prefix, "include"), *sorted(glob.glob("/opt/ros/*/include")), "/usr/local/include",
                 "/usr/include"]
    pinocchio = os.environ.get("SPACE_ROBOT_PINOCCHIO_INCLUDE") or next(
        (p for p in prefixes if os.path.isfile(os.path.join(p, "pinocchio", "algorithm", "crba.hpp"))), None)
    eigen = os.environ.get("SPACE_ROBOT_EIGEN_INCLUDE") or next(
        (e for p in ([pinocchio] if pinocchio else []) + prefixes for e in (os.path.join(p, "eigen3"), p)
         if os.path.isfile(os.path.join(e, "Eigen", "Core"))), None)
    if pinocchio is None or eigen is None:
        missing = "Pinocchio" if pinocchio is None else "Eigen"
        print(f"space_robot: the compiled flexible step is not built: no {missing} headers found"
              " (set SPACE_ROBOT_PINOCCHIO_INCLUDE / SPACE_ROBOT_EIGEN_INCLUDE)", file=sys.stderr)
        return None
    return [pinocchio, eigen]


def native_extensions():
    """The compiled flexible step: a plain C-interface library loaded with ctypes (no Python API, so one build serves
    any NumPy), optional: a failed compile leaves the Python step."""
    folders = header_folders()
    if folders is None:
        return []
    return [Extension(
        "space_robot_dynamics.simulation._flexible_step",
        sources=["space_robot_dynamics/simulation/native/flexible_step.cpp"],
        include_dirs=folders,
        language="c++",
        # header-only Pinocchio (no link to its library); hidden visibility lets the compiler inline across the
        # templates; -fno-math-errno changes no result (errno only). No -march: the build runs on any x86-64.
        extra_compile_args=["-std=c++17", "-O3", "-DNDEBUG", "-fvisibility=hidden", "-fvisibility-inlines-hidden",
                            "-fno-math-errno", "-g0", "-w"],
        optional=True,
    )]


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
    ext_modules=native_extensions(),
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
    zip_safe=False,                 # the compiled library is loaded from a file
    maintainer="space_robot maintainers",
    maintainer_email="maintainers@space-robot.invalid",
    description="Free-floating space manipulator simulation, control and holonomy monitoring.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "space-robot-sim = space_robot_runtime.console_scripts:space_robot_sim",
            "space-robot-plot = space_robot_runtime.console_scripts:space_robot_plot",
            "space-robot-identify = space_robot_runtime.console_scripts:space_robot_identify",
            "space-robot-campaign = space_robot_runtime.console_scripts:space_robot_campaign",
            "dynamics_node = space_robot_nodes.ros.dynamics_node:main",
            "controller_node = space_robot_nodes.ros.controller_node:main",
            "holonomy_monitor_node = space_robot_nodes.ros.holonomy_monitor_node:main",
            "sawyer_command_adapter = space_robot_nodes.ros.sawyer_command_adapter:main",
            "scenario_player = space_robot_nodes.ros.scenario_player_node:main",
            "visualization_node = space_robot_nodes.ros.visualization_node:main",
            "sensors_node = space_robot_nodes.ros.sensors_node:main",
            "estimators_node = space_robot_nodes.ros.estimators_node:main",
        ],
    },
)
