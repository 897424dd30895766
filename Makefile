# eventjax — every target sets up .venv from the project's own files if needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.eventjax-installed
# numba compiles are the slowest part of the tests; keep them in a per-user cache so
# every checkout (and CI on the same machine) reuses them.
export NUMBA_CACHE_DIR ?= $(HOME)/.cache/eventjax/numba
export PYTHONUNBUFFERED := 1
# Python writes each module's bytecode once, into __pycache__ beside it, where an environment that sets
# PYTHONDONTWRITEBYTECODE (container images often do) would have every process compile jax's, numba's and
# the tests' sources again: 3 s of every fresh process's start, and a third of pytest's collection.
unexport PYTHONDONTWRITEBYTECODE

# The default run's XLA compiles thousands of small programs. Its LLVM backend at -O0, with the CPU
# backend's classic loop emitters instead of its MLIR fusion emitters, compiles a small program in a
# third of the time. What a program computes stays the same up to the last bits of a matrix product
# (its sums run in another order); test-long runs at XLA's defaults. (Compiling each program in one
# piece, --xla_cpu_parallel_codegen_split_count=1, was faster still but changed CUBA's spikes.)
QUICK_XLA := XLA_FLAGS="--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false $$XLA_FLAGS"

STRESS_SECONDS ?= 180
# The differential scenario of `make stress`: problems drawn at most, and its own time bound.
DIFF_EXAMPLES ?= 400
DIFF_SECONDS ?= 900

.PHONY: setup test test-fast test-long test-tpu test-compat stress bench serve-bench docs demo lint clean warm

# $(call install,VENV_BIN,ARGS): uv resolves and installs the same releases from the same index as pip,
# in seconds where pip takes a minute (a fresh venv's setup was most of a minute of `make test`). pip
# stays the fallback where uv itself can't be installed or fails.
install = { $(1)/python -m pip install -q uv && $(1)/python -m uv pip install -q --python $(1)/python $(2); } \
	|| { $(1)/python -m pip install -q --upgrade pip && $(1)/python -m pip install -q $(2); }

DEV_EXTRAS := test,docs,dev,plot,serve,loadtest,units,brainstate,numba-cuda

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call install,$(BIN),-e '.[$(DEV_EXTRAS)]')
	@touch $(STAMP)

setup: $(STAMP)

# The tests, then the two stress scenarios of the contract's heart (threads dispatching while the
# configuration flips, and mixed operators on many threads); test-long runs every scenario.
test: setup
	$(QUICK_XLA) $(BIN)/python -m pytest -n 2 --dist loadfile -q tests benchmarks/tests
	$(BIN)/python -m stress --mode short --seconds 12 --only config_flip mixed

test-fast: setup
	$(QUICK_XLA) $(BIN)/python -m pytest -n 2 --dist loadfile -q -x tests benchmarks/tests

# The minutes-long variants `make test` leaves out (tests marked `long`), the differential
# tests with more draws per operator than the default run's, then every stress scenario
# in short mode.
LONG_DIFF_EXAMPLES ?= 10
LONG_DIFF_JITC_EXAMPLES ?= 4
test-long: setup
	$(MAKE) mpi || echo 'make test-long: the mpi extra did not install; the MPI tests will skip, naming it.'
	$(BIN)/python -m pytest -n 2 --dist loadfile -q -m long tests benchmarks/tests
	EVENTJAX_DIFF_EXAMPLES=$(LONG_DIFF_EXAMPLES) EVENTJAX_DIFF_JITC_EXAMPLES=$(LONG_DIFF_JITC_EXAMPLES) \
		$(BIN)/python -m pytest -n 2 --dist loadfile -q tests/differential
	$(BIN)/python -m stress --mode short

# Every operator's TPU lowering (each pallas TPU kernel, each default) compiled for a TPU v5e through
# libtpu's deviceless compile, which runs Mosaic as on the chip; no TPU needed. libtpu (the tpu-compile
# extra) goes into a folder beside the venv that only the compiling process puts on its path: installed in
# the venv, every process's JAX would try to open a TPU. TPU_SWEEP=full compiles more sizes.
TPU_COMPILE_DIR := $(VENV)/tpu-compile
TPU_SWEEP ?= quick
test-tpu: setup
	@test -d $(TPU_COMPILE_DIR)/libtpu || $(BIN)/python -m pip install -q --no-deps --target $(TPU_COMPILE_DIR) \
		"$$($(BIN)/python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['tpu-compile'])")"
	EVENTJAX_LIBTPU_DIR=$(TPU_COMPILE_DIR) EVENTJAX_TPU_SWEEP=$(TPU_SWEEP) \
		$(BIN)/python -m pytest -q -m tpu_compile tests/kernels/pallas/test_tpu_compile.py

# The brain-simulation stack on Python 3.12 (brainevent 0.3, brainstate 0.6, brainpy 2.9,
# braintools 0.4; stack_tests/requirements.txt) in a venv of its own: brainstate's and brainpy's
# event-layer tests and three models on eventjax, each compared with brainevent 0.3.0, then
# eventjax's compat tests and the name table's. A few minutes once the venv is built.
PYTHON312 ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12; do \
	$$p -c 'import sys' >/dev/null 2>&1 && { echo $$p; break; }; done)
COMPAT_VENV := .venv-compat
COMPAT_STAMP := $(COMPAT_VENV)/.eventjax-installed

$(COMPAT_STAMP): pyproject.toml stack_tests/requirements.txt
	@test -n "$(PYTHON312)" || { echo 'make test-compat needs python3.12 (set PYTHON312=/path/to/python3.12)'; exit 1; }
	@test -x $(COMPAT_VENV)/bin/python || $(PYTHON312) -m venv $(COMPAT_VENV)
	$(call install,$(COMPAT_VENV)/bin,-r stack_tests/requirements.txt -e .)
	@touch $(COMPAT_STAMP)

test-compat: $(COMPAT_STAMP)
	cd stack_tests && ../$(COMPAT_VENV)/bin/python -m pytest -q .
	$(COMPAT_VENV)/bin/python -m pytest -q tests/compat/test_brainevent_table.py tests/compat/test_brainevent_030.py \
		tests/compat/test_brainevent_rules.py

stress: setup
	$(BIN)/python -m stress --mode long --seconds $(STRESS_SECONDS) \
		--diff-examples $(DIFF_EXAMPLES) --diff-seconds $(DIFF_SECONDS)

BENCH_ARGS ?=

# The standard numba kernels compiled into NUMBA_CACHE_DIR ahead of time (images, CI caches).
WARM_ARGS ?= --backend numba
warm: setup
	$(BIN)/python -m eventjax warm $(WARM_ARGS)

# Everything that times or compares lives in benchmarks/ (not in the wheel): eventjax bench's tables, then
# the machinery timings of benchmarks/micro. brainevent and scipy give the side-by-side columns; only this
# target installs them.
bench: setup
	$(call install,$(BIN),-e '.[compare]')
	$(BIN)/python -m eventjax bench $(BENCH_ARGS)
	$(BIN)/python -m benchmarks.micro

# PD14 and Brette's CUBA / COBA on NEST and on eventjax, one after the other on the same 2 threads (the models
# extra brings NEST and the PD14 reference). Reduced scale by default; full scale needs ~15 GB for NEST:
# make bench-models MODELS_ARGS='--scale 1 --k-scale 1 --t-sim 1000 --threads 4' on a quiet machine.
# With a TPU there (or MODELS_ARGS=--tpu), the models run again on it with pallas and jax.
MODELS_ARGS ?=
.PHONY: bench-models
bench-models: setup
	$(call install,$(BIN),-e '.[models]')
	$(BIN)/python -m examples.bench_models $(MODELS_ARGS)

# eventjax's side of the statistics against NEST's seed spread (the NEST side is stored in examples/*/data):
# PD14 at full scale (~8 GB) over the stored NEST runs' model time with DC, then Poisson drive, then Brette's
# CUBA and COBA over 8 seeds.
STATS_T_SIM ?= 10000
.PHONY: bench-stats
bench-stats: setup
	$(call install,$(BIN),-e '.[plot]')
	$(BIN)/python -m examples.microcircuit.compare_nest --run --quiet --scale 1 --t-sim $(STATS_T_SIM) \
		--plot docs/_static/pd14_statistics.png
	$(BIN)/python -m examples.microcircuit.compare_nest --run --quiet --scale 1 --t-sim $(STATS_T_SIM) \
		--drive poisson --plot docs/_static/pd14_statistics_poisson.png
	$(BIN)/python -m examples.brette2007.seed_stats --simulator eventjax --seeds 1-8

# The mpi extra: MPICH from its wheel first, so that mpi4jax builds against it with its mpicc. mpi4jax also
# builds a CUDA bridge wherever it finds nvcc, which fails on a toolkit without the runtime's headers; the
# CPU exchange needs none, and CUDA_PATH at a folder without include/ leaves it out.
MPI_STAMP := $(VENV)/.eventjax-mpi
$(MPI_STAMP): pyproject.toml $(STAMP)
	$(call install,$(BIN),mpich mpi4py)
	export PATH="$(CURDIR)/$(BIN):$$PATH" CUDA_PATH="$(CURDIR)/$(BIN)" && $(call install,$(BIN),-e '.[mpi]')
	@touch $(MPI_STAMP)

.PHONY: mpi
mpi: $(MPI_STAMP)

# PD14's exchange alone between 2 processes by each transport (examples/microcircuit/bench_exchange.py); PD14 on
# 1, 2 and 4 processes of one numba thread each (under mpirun with the mpi extra), the exchange timed apart, and
# the projection to 2-64 nodes (examples/microcircuit/bench_distributed.py says how); then CUBA on 1 vs 2
# processes at 100,000 neurons. Full scale by default (~3 GB a process): a quiet machine's run.
DIST_ARGS ?= --scale 1 --t-sim 1000
.PHONY: bench-distributed
bench-distributed: setup
	$(MAKE) mpi || echo 'make bench-distributed: the mpi extra did not install; the runs take gloo.'
	$(BIN)/python -m examples.microcircuit.bench_exchange
	$(BIN)/python -m examples.microcircuit.bench_distributed $(DIST_ARGS)
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
	$(BIN)/python -m ruff check src tests stress benchmarks docs/examples stack_tests examples
	$(BIN)/python tools/check_layers.py

clean:
	rm -rf $(VENV) $(COMPAT_VENV) .numba_cache docs/_build .pytest_cache
