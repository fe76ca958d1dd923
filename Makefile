# Two entry points for a fresh machine: `make demo` and `make test`. Both create their own virtual
# environment ($(VENV)) and install the package into it; nothing is installed system-wide.
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

.PHONY: demo test install bench lint clean

$(STAMP): setup.py setup.cfg package.xml $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install $(PIP_FLAGS) "$(PIN_SPEC)" -e ".[test,campaign]"
	$(if $(NUMPY_OVERRIDE),$(VENV)/bin/pip install $(PIP_FLAGS) --no-deps "$(NUMPY_OVERRIDE)")
	$(VENV)/bin/python -c "import pinocchio, numpy; print('pinocchio', pinocchio.__version__, 'numpy', numpy.__version__)"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/space-robot-sim --out $(OUT) --overwrite

test: $(STAMP)
	$(VENV)/bin/python -m pytest

bench: $(STAMP)
	$(VENV)/bin/python bench/bench_step.py
	$(VENV)/bin/python bench/bench_controller.py
	$(VENV)/bin/python bench/bench_monitor.py
	$(VENV)/bin/python bench/bench_graph.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build install log out .pytest_cache
