# Two entry points for a fresh machine: `make demo` and `make test`. Both create their own virtual
# environment ($(VENV)) and install the package into it; nothing is installed system-wide. `make test-fast` is the
# contributor's lane on the same environment (the suite without the tests marked slow).
PYTHON ?= python3
VENV ?= .venv
# The Pinocchio release to test against; CI also runs the suite on the oldest supported one:
#   make test VENV=.venv-oldest PIN_SPEC="pin==3.4.0" CONSTRAINTS=.ci/oldest-constraints.txt \
#             NUMPY_OVERRIDE="numpy==1.26.4"
PIN_SPEC ?= pin>=3.4
CONSTRAINTS ?=
# Replace NumPy after the install (no dependency resolution), e.g. NUMPY_OVERRIDE="numpy==1.26.4".
NUMPY_OVERRIDE ?=
OUT ?= out/demo
PIP_FLAGS = -q --disable-pip-version-check $(if $(CONSTRAINTS),-c $(CONSTRAINTS))

STAMP = $(VENV)/.installed

# The real ROS 2 stage: a ROS 2 Humble or Jazzy built by ../shared/ros2/build_humble.sh / build_jazzy.sh at
# ROS2_PREFIX (see the README's ROS 2 section); the colcon workspace goes to build/ros2_ws_<distro>.
ROS2_PREFIX ?= /opt/ros2-humble
ROS2_JAZZY_PREFIX ?= /opt/ros2-jazzy

.PHONY: demo test test-fast test-ros2 test-ros2-jazzy install bench bench-ros2 lint clean rviz-shots

# Pinocchio first: setup.py compiles the flexible step against the headers of the `pin` wheel it finds there, and
# Eigen's from the `cmeel-eigen` wheel (header-only; the `pin` wheels bring none, and a fresh machine has no
# libeigen3-dev).
# Every package's __init__.py too: an editable install maps the top-level packages it saw, so a new package (a new
# __init__.py) needs a reinstall before the console scripts can import it.
$(STAMP): setup.py setup.cfg package.xml space_robot_dynamics/simulation/native/flexible_step.cpp \
          $(wildcard space_robot_*/__init__.py) $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) "$(PIN_SPEC)" "cmeel-eigen>=3.4"
	$(VENV)/bin/pip install $(PIP_FLAGS) "$(PIN_SPEC)" -e ".[test,campaign]"
	$(if $(NUMPY_OVERRIDE),$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps "$(NUMPY_OVERRIDE)")
	$(VENV)/bin/python -c "import pinocchio, numpy; print('pinocchio', pinocchio.__version__, 'numpy', numpy.__version__)"
	$(VENV)/bin/python -c "from space_robot_dynamics.simulation.compiled_flexible_step import load; \
	  print('compiled flexible step:', load()[1] or 'built')"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/space-robot-sim --out $(OUT) --overwrite

# the whole suite (~8 min on a quiet 2-core machine)
test: $(STAMP)
	$(VENV)/bin/python -m pytest

# the contributor's lane: everything but the tests marked slow (setup.cfg: long simulations and studies, a module
# fixture counted in each test that uses it): every module's bad input, loading and short runs, ~1 min 45 s quiet
test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -m "not slow"

# colcon build against the ROS 2 at ROS2_PREFIX (Humble by default), then the tests under test/ros2 with that ROS 2's
# Python (no .venv needed); test-ros2-jazzy: the same under Jazzy
test-ros2:
	ROS2_PREFIX=$(ROS2_PREFIX) bash test/ros2/ros2_workspace.sh

test-ros2-jazzy:
	ROS2_PREFIX=$(ROS2_JAZZY_PREFIX) bash test/ros2/ros2_workspace.sh

bench: $(STAMP)
	$(VENV)/bin/python bench/bench_step.py
	$(VENV)/bin/python bench/bench_controller.py
	$(VENV)/bin/python bench/bench_monitor.py
	$(VENV)/bin/python bench/bench_graph.py
	$(VENV)/bin/python bench/bench_startup.py
	$(VENV)/bin/python bench/bench_contact.py
	$(VENV)/bin/python bench/bench_sensing.py
	$(VENV)/bin/python bench/bench_orbit.py
	$(VENV)/bin/python bench/bench_scenarios.py

# CPU per node of the paced simulation graph under ROS 2 (~45 s)
bench-ros2:
	ROS2_PREFIX=$(ROS2_PREFIX) bash test/ros2/ros2_workspace.sh python bench/bench_ros2_cpu.py

# Screenshots of every shipped launch and scenario in RViz into docs/images/ (builds Humble and RViz once per
# machine from ../shared/ros2; not part of test or CI)
rviz-shots:
	ROS2_PREFIX=$(ROS2_PREFIX) bash tools/rviz_shots.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build install log out .pytest_cache space_robot_dynamics/simulation/_flexible_step*.so
