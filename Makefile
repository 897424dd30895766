# eventjax — every target sets up .venv from the project's own files if needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.eventjax-installed
# numba compiles are the slowest part of the tests; keep them in a per-user cache so
# every checkout (and CI on the same machine) reuses them.
export NUMBA_CACHE_DIR ?= $(HOME)/.cache/eventjax/numba
export PYTHONUNBUFFERED := 1

STRESS_SECONDS ?= 180
# The differential scenario of `make stress`: problems drawn at most, and its own time bound.
DIFF_EXAMPLES ?= 400
DIFF_SECONDS ?= 900

.PHONY: setup test test-fast test-long stress bench serve-bench docs demo lint clean warm

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,docs,dev,plot,serve,loadtest,units,brainstate,numba-cuda]'
	@touch $(STAMP)

setup: $(STAMP)

test: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -q tests
	$(BIN)/python -m stress --mode short

test-fast: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -q -x tests

# The minutes-long variants `make test` leaves out (tests marked `long`), then the differential
# tests with more draws per operator than the default run's.
LONG_DIFF_EXAMPLES ?= 10
LONG_DIFF_JITC_EXAMPLES ?= 4
test-long: setup
	$(BIN)/python -m pytest -n 2 --dist loadfile -q -m long tests
	EVENTJAX_DIFF_EXAMPLES=$(LONG_DIFF_EXAMPLES) EVENTJAX_DIFF_JITC_EXAMPLES=$(LONG_DIFF_JITC_EXAMPLES) \
		$(BIN)/python -m pytest -n 2 --dist loadfile -q tests/differential

stress: setup
	$(BIN)/python -m stress --mode long --seconds $(STRESS_SECONDS) \
		--diff-examples $(DIFF_EXAMPLES) --diff-seconds $(DIFF_SECONDS)

BENCH_ARGS ?=

# The standard numba kernels compiled into NUMBA_CACHE_DIR ahead of time (images, CI caches).
WARM_ARGS ?= --backend numba
warm: setup
	$(BIN)/python -m eventjax warm $(WARM_ARGS)

# brainevent and scipy give eventjax bench its side-by-side columns; only this target installs them.
bench: setup
	$(BIN)/python -m pip install -q -e '.[compare]'
	$(BIN)/python -m eventjax bench $(BENCH_ARGS)
	$(BIN)/python -m bench

# 1 vs 2 processes on localhost at 100,000 neurons, spike exchange timed apart.
.PHONY: bench-distributed
bench-distributed: setup
	$(BIN)/python docs/examples/cuba_distributed.py --processes 1 --neurons 100000 --duration 100 --bench
	$(BIN)/python docs/examples/cuba_distributed.py --processes 2 --neurons 100000 --duration 100 --bench

# The serving example under load (minutes): table and plot in docs/_static/serving/.
serve-bench: setup
	$(BIN)/python docs/examples/serving/bench.py

docs: setup
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

demo: setup
	$(BIN)/python docs/examples/demo.py
	$(BIN)/python docs/examples/cuba.py

lint: setup
	$(BIN)/python -m ruff check src tests stress bench docs/examples
	$(BIN)/python tools/check_layers.py

clean:
	rm -rf $(VENV) .numba_cache docs/_build .pytest_cache
