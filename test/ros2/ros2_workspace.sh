#!/usr/bin/env bash
# A colcon workspace of this package against a ROS 2 (Humble or Jazzy), and a command run in it:
#   bash test/ros2/ros2_workspace.sh                       the real ROS 2 tests (`make test-ros2`, .ci/run's stage)
#   bash test/ros2/ros2_workspace.sh python bench/bench_ros2_cpu.py      (`make bench-ros2`)
# It builds space_robot and the test fixture intera_core_msgs (test/ros2/fixtures; the test workspace only, never
# installed by space_robot), sources the install, then runs the command (default: pytest on test/ros2).
#
#   ROS2_PREFIX   the ROS 2 built by ../shared/ros2/build_humble.sh or build_jazzy.sh (default /opt/ros2-humble;
#                 its env.sh, which sets ROS_DISTRO)
#   ROS2_WS       the colcon workspace (build/, install/, log/; default build/ros2_ws_<ROS_DISTRO> in this
#                 repository: one per distribution, a build against one is never reused by the other)
#   SPACE_ROBOT_DOMAIN_ID   ROS_DOMAIN_ID of this run (default: one of 101..199 picked from the process id,
#                 so two runs on one machine do not hear each other; env.sh's own 77 is not used)
#   PYTEST_ARGS   pytest arguments instead of the default "test/ros2" (e.g. "-x test/ros2/test_nodes_alone.py")
# Every launch, node and recorder a test starts is stopped by the test; the ros2 daemon is stopped at the end.
# The interface fixture is generated for the ROS 2 venv's Python (CMake would otherwise find any python3 on
# PATH, e.g. a pyenv shim of another version).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
ROS2_PREFIX=${ROS2_PREFIX:-/opt/ros2-humble}
domain=${SPACE_ROBOT_DOMAIN_ID:-$((101 + $$ % 99))}

if [ ! -f "$ROS2_PREFIX/env.sh" ]; then
  echo "ros2_workspace: no ROS 2 at $ROS2_PREFIX (no env.sh): build it with ../shared/ros2/build_humble.sh or" \
       "build_jazzy.sh (ROS2_PREFIX=$ROS2_PREFIX), or set ROS2_PREFIX" >&2
  exit 2
fi
unset ROS_DISTRO        # the distribution is the prefix's, whatever the calling shell had sourced
# shellcheck disable=SC1091
source "$ROS2_PREFIX/env.sh"
ROS2_WS=${ROS2_WS:-$repo/build/ros2_ws_${ROS_DISTRO:?$ROS2_PREFIX/env.sh did not set ROS_DISTRO}}
export ROS_DOMAIN_ID=$domain
trap 'ros2 daemon stop >/dev/null 2>&1 || true' EXIT

start=$(date +%s)
echo "--- colcon build (space_robot and the intera_core_msgs fixture) in $ROS2_WS"
mkdir -p "$ROS2_WS"
colcon --log-base "$ROS2_WS/log" build --base-paths "$repo" "$repo/test/ros2/fixtures" \
  --build-base "$ROS2_WS/build" --install-base "$ROS2_WS/install" --event-handlers console_cohesion- \
  --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$(command -v python3)" \
  -DPYTHON_EXECUTABLE="$(command -v python3)"
set +u        # colcon's setup scripts read unset variables
# shellcheck disable=SC1091
source "$ROS2_WS/install/setup.bash"
set -u
echo "--- colcon build: $(( $(date +%s) - start )) s"

cd "$repo"
if [ $# -gt 0 ]; then
  echo "--- $* (ROS_DOMAIN_ID=$ROS_DOMAIN_ID)"
  "$@"
else
  echo "--- pytest test/ros2 (ROS 2 $ROS_DISTRO, ROS_DOMAIN_ID=$ROS_DOMAIN_ID, $(python --version))"
  # shellcheck disable=SC2086
  python -m pytest -p no:cacheprovider -rP ${PYTEST_ARGS:-test/ros2}
fi
echo "--- ROS 2 workspace and command: $(( $(date +%s) - start )) s"
