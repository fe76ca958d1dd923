"""Assert the colcon install tree of space_robot is what ROS 2 tools expect.

    python .ci/check_colcon_install.py INSTALL_BASE

Checks: share/space_robot/{package.xml,urdf,config,launch,rviz}; the ament index marker; every console
script declared in the package's entry points installed under lib/space_robot (where `ros2 run` looks);
that the installed Python package finds its data in the install tree, not in the source checkout; and that
it builds the robot descriptions of every installed scenario there (what simulation.launch.py does).
"""
import configparser
import subprocess
import sys
from pathlib import Path


def main() -> int:
    prefix = Path(sys.argv[1]).resolve() / "space_robot"
    share = prefix / "share" / "space_robot"
    problems = []
    for entry in ("package.xml", "urdf", "config", "launch", "rviz"):
        if not (share / entry).exists():
            problems.append(f"missing {share / entry}")
    for folder in ("urdf", "config", "launch", "rviz"):
        if (share / folder).is_dir() and not any((share / folder).rglob("*.*")):
            problems.append(f"{share / folder} is empty")
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / "space_robot"
    if not marker.is_file():
        problems.append(f"missing ament index marker {marker}")
    entry_files = list(prefix.glob("lib/python3*/site-packages/space_robot*.egg-info/entry_points.txt"))
    if len(entry_files) != 1:
        problems.append(f"expected one installed entry_points.txt, found {entry_files}")
        scripts = []
    else:
        parser = configparser.ConfigParser()
        parser.read(entry_files[0])
        scripts = list(parser["console_scripts"]) if parser.has_section("console_scripts") else []
        if not scripts:
            problems.append("no console_scripts declared")
    for script in scripts:
        path = prefix / "lib" / "space_robot" / script
        if not path.is_file():
            problems.append(f"console script {script!r} not installed at {path}")
    site = next(iter(prefix.glob("lib/python3*/site-packages")), None)
    if site is not None:
        probe = subprocess.run(
            [sys.executable, "-c", "from space_robot_dynamics.package_share import share_directory; "
             "print(share_directory())"],
            capture_output=True, text=True, cwd="/", env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
        found = probe.stdout.strip()
        if probe.returncode != 0 or Path(found).resolve() != share.resolve():
            problems.append(f"installed package resolves its share directory to {found!r} "
                            f"(expected {share}); stderr: {probe.stderr.strip()[-300:]}")
        # what simulation.launch.py does at launch: every installed scenario's robot descriptions (xacro
        # expanded from the install tree, includes and all)
        scenarios = sorted(str(p) for p in (share / "config" / "scenarios").glob("*.yaml"))
        probe = subprocess.run(
            [sys.executable, "-c", "import sys; from space_robot_scenario import load_scenario; "
             "from space_robot_scenario.robot_descriptions import robot_descriptions; "
             "print(sum(len(robot_descriptions(load_scenario(p).model)) for p in sys.argv[1:]))", *scenarios],
            capture_output=True, text=True, cwd="/", env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
        if probe.returncode != 0 or not scenarios:
            problems.append(f"robot descriptions of the installed scenarios {scenarios} failed: "
                            f"{probe.stderr.strip()[-300:]}")
    for problem in problems:
        print(f"colcon install check: {problem}")
    print(f"colcon install check: {len(scripts)} console scripts, "
          f"{'OK' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
