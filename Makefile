# matchscope: `make run` opens the explorer on a bundled sample, `make test` runs the whole suite.
# Both create the virtual environment on first use and reinstall only when pyproject.toml changes.

VENV   ?= .venv
PYTHON ?= python3
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.matchscope-installed

# the sample `make run` opens; generated into build/ when the bundled one is missing
SAMPLE   ?= sample_graphs/random-bipartite_200x200_d3.mtx
FALLBACK := build/random-bipartite-200x200.mtx
ALGO     ?= pr-seq
PYTEST_ARGS ?=
# the suite runs in two processes (pytest-xdist), a test file to each at a time: its tests keep their order
PYTEST_JOBS ?= 2
BENCH_ARGS  ?=

# Qt tests need a display: use a virtual X server when there is none. Its screen must be 24-bit:
# xvfb-run's default (8-bit) has no GLX visual for an OpenGL context, so the 3-D view would fail.
XVFB := $(if $(DISPLAY),,$(shell command -v xvfb-run >/dev/null 2>&1 && echo xvfb-run -a -s \"-screen 0 1600x1000x24\"))

.PHONY: run test test-all install bench-gpr bench-wbpr bench-assignment bench-e2e

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'
	touch $@

install: $(STAMP)

run: $(STAMP)
	@if [ -f "$(SAMPLE)" ]; then sample="$(SAMPLE)"; else \
	  sample="$(FALLBACK)"; mkdir -p "$$(dirname "$$sample")"; \
	  echo "$(SAMPLE) is missing; generating $$sample"; \
	  $(BIN)/matchscope gen random-bipartite --rows 200 --cols 200 --degree 3 --seed 1 --out "$$sample" || exit $$?; \
	fi; \
	echo "opening the explorer on $$sample ($(ALGO)); close its window to return"; \
	$(BIN)/matchscope gui "$$sample" --algo $(ALGO)

# the whole suite, with a seeded sample of each exhaustive simulator sweep (what CI runs)
test: $(STAMP)
	$(XVFB) $(BIN)/python -m pytest -q -n $(PYTEST_JOBS) --dist loadfile $(PYTEST_ARGS)

# the same suite with every sweep at full size and the empty-cache warm-up checks (several more minutes on 2 cores)
test-all: $(STAMP)
	MATCHSCOPE_FULL_SWEEPS=1 $(XVFB) $(BIN)/python -m pytest -q -n $(PYTEST_JOBS) --dist loadfile $(PYTEST_ARGS)

bench-gpr: $(STAMP)
	$(BIN)/python benchmarks/bench_gpr.py $(BENCH_ARGS)

bench-wbpr: $(STAMP)
	$(BIN)/python benchmarks/bench_wbpr.py $(BENCH_ARGS)

bench-assignment: $(STAMP)
	$(BIN)/python benchmarks/bench_assignment.py $(BENCH_ARGS)

# the headline benchmark: end to end from numpy, scipy objects and files, peers in the same run
# (lapx and torch-linear-assignment are timed where installed; BENCH_ARGS=--quick for small sizes)
bench-e2e: $(STAMP)
	$(BIN)/python benchmarks/bench_e2e.py $(BENCH_ARGS)
