#!/usr/bin/env bash
# `make rviz-shots`: what a user sees in RViz, as PNG files in docs/images/ (for the README; not part of make
# test or CI). Builds ROS 2 Humble and RViz from ../shared/ros2 once per machine (skipped when built), builds
# this package in the ROS 2 test workspace, then for every shipped launch and scenario starts it with RViz under
# a virtual screen (../shared/ros2/rviz_screenshot.sh) and keeps the screenshots:
#   simulation.launch.py scenario:=NAME          -> docs/images/NAME-*.png, for every config/scenarios/NAME.yaml
#   sawyer.launch.py rviz:=true (Intera faked)   -> docs/images/sawyer_real_arm-*.png
# Look at them before committing them.
#
#   ROS2_PREFIX   ROS 2 Humble (default /opt/ros2-humble)      RVIZ_PREFIX  RViz overlay (default /opt/rviz-humble)
#   SHOTS_AT      seconds after start of the screenshots (default 18,27: with RViz the simulation holds t = 0
#                 for 10 s after its controller connects (~5 s), then the default arm motion takes 6 s;
#                 software-rendered RViz needs ~15 s to draw: mid-motion, then at rest)
#   CAPTURE_SHOTS_AT  the same for the capture scenarios (default 30,60: the grasp is at 11.55 s of simulated time,
#                 ~27 s after start; the first shot shows the hand on the fixture and the grasp wrench, the second
#                 the detumbling stack)
#   ONLY          space-separated names to take (scenario names, sawyer_real_arm); default: all
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$repo/../shared/ros2
export ROS2_PREFIX=${ROS2_PREFIX:-/opt/ros2-humble}
export RVIZ_PREFIX=${RVIZ_PREFIX:-/opt/rviz-humble}
at=${SHOTS_AT:-18,27}
[ -d "$shared" ] || { echo "rviz_shots: no $shared (the ROS 2 and RViz build recipes)" >&2; exit 2; }
[ -f "$ROS2_PREFIX/env.sh" ] || bash "$shared/build_humble.sh"
[ -f "$RVIZ_PREFIX/env.sh" ] || bash "$shared/build_rviz.sh"
ws=${ROS2_WS:-$repo/build/ros2_ws}
ROS2_WS=$ws bash "$repo/test/ros2/ros2_workspace.sh" true        # colcon build of this package (and fixture)
shots=$(mktemp -d)
trap 'rm -rf "$shots"' EXIT
share=$ws/install/space_robot/share/space_robot
wanted() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
take() {  # name, command...
  local name=$1; shift
  wanted "$name" || return 0
  local when=$at
  case $name in capture|capture_sensed) when=${CAPTURE_SHOTS_AT:-30,60} ;; esac
  "$shared/rviz_screenshot.sh" --out "$shots" --name "$name" --at "$when" --source "$RVIZ_PREFIX/env.sh" \
    --source "$ws/install/local_setup.bash" --domain-id $((150 + RANDOM % 40)) -- "$@"
}
for scenario in "$repo"/config/scenarios/*.yaml; do        # every shipped scenario, in its own RViz config
  name=$(basename "$scenario" .yaml)
  take "$name" ros2 launch space_robot simulation.launch.py "scenario:=$share/config/scenarios/$name.yaml"
done
# the real arm: Intera's joint states and a planner's goal, faked (tools/fake_intera_arm.py)
take sawyer_real_arm bash -c "python '$repo/tools/fake_intera_arm.py' & exec ros2 launch space_robot sawyer.launch.py rviz:=true"
mkdir -p "$repo/docs/images"
for png in "$shots"/*.png; do
  [ -e "$png" ] || continue
  cp "$png" "$repo/docs/images/$(basename "$png")"
  echo "docs/images/$(basename "$png")"
done
