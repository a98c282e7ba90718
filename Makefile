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
BENCH_ARGS  ?=

# Qt tests need a display: use a virtual X server when there is none
XVFB := $(if $(DISPLAY),,$(shell command -v xvfb-run >/dev/null 2>&1 && echo xvfb-run -a))

.PHONY: run test install bench-gpr bench-wbpr bench-assignment

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
	$(BIN)/matchscope gui "$$sample" --algo $(ALGO)

test: $(STAMP)
	$(XVFB) $(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench-gpr: $(STAMP)
	$(BIN)/python benchmarks/bench_gpr.py $(BENCH_ARGS)

bench-wbpr: $(STAMP)
	$(BIN)/python benchmarks/bench_wbpr.py $(BENCH_ARGS)

bench-assignment: $(STAMP)
	$(BIN)/python benchmarks/bench_assignment.py $(BENCH_ARGS)
