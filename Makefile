# The two quick-start commands (README): `make play` and `make test`. Each sets itself up.
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

NATIVE := $(VENV)/.native
ENGINE_SRC := $(shell find engine -name '*.py')

.PHONY: play test test-e2e test-pure test-faults test-failover lint bench bench-check bench-instructions native clean-native

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $(STAMP)

# The compiled engine (mypyc, in place: engine/**/*.so), rebuilt when a source changes.  Without a
# C compiler the build says so in one line and the pure engine runs; the engine itself ignores a
# build older than its sources (engine/_native.py).  NATIVE_ARGS=--require makes a failure fatal.
$(NATIVE): $(STAMP) $(ENGINE_SRC) tools/build_native.py
	$(VENV)/bin/python tools/build_native.py $(NATIVE_ARGS)
	touch $(NATIVE)

## compile the engine now (tools/build_native.py)
native: $(STAMP)
	$(VENV)/bin/python tools/build_native.py $(NATIVE_ARGS)
	touch $(NATIVE)

## remove the compiled engine: the pure one runs
clean-native: $(STAMP)
	$(VENV)/bin/python tools/build_native.py --clean
	rm -f $(NATIVE)

## a match in the terminal against AI players (embedded store: no server, no token)
play: $(NATIVE)
	$(VENV)/bin/cinq play $(ARGS)

## the whole test suite but the slow end-to-end tests (compiled engine when it could be built)
test: $(NATIVE)
	$(VENV)/bin/python -m pytest -q -n 2 -m "not e2e and not failover" $(PYTEST_ARGS)

# The e2e suites' own needs: the Matrix extra (matrix-nio, also in dev: tests/bridges uses it), and Synapse in a venv of its own
# (.cache/synapse-venv: its dependencies may clash with the project's).
E2E_STAMP := $(VENV)/.installed-e2e
$(E2E_STAMP): $(STAMP)
	$(VENV)/bin/pip install -q -e '.[dev,matrix]'
	$(VENV)/bin/python -c 'from tools.synapse import python; python()'
	touch $(E2E_STAMP)

## the end-to-end suites (a real Matrix homeserver on loopback; the randomized fault run)
test-e2e: $(NATIVE) $(E2E_STAMP)
	$(VENV)/bin/python -m pytest -q -m e2e $(PYTEST_ARGS)

## the fault cases and the randomized fault run (tests/faults/): real redis-server, a fault proxy
test-faults: $(NATIVE)
	$(VENV)/bin/python -m pytest -q -m faults tests/faults $(PYTEST_ARGS)

## the failover runs: a Sentinel deployment (redis-server, redis-sentinel) and a Redis Cluster losing a primary
test-failover: $(NATIVE)
	$(VENV)/bin/python -m pytest -q -m failover tests/faults $(PYTEST_ARGS)

## the engine's rule and property tests against the pure-Python engine (the reference)
test-pure: $(STAMP)
	CINQ_PURE_ENGINE=1 $(VENV)/bin/python -m pytest -q -n 2 -m "not e2e and not failover" tests/engine $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy engine
	$(VENV)/bin/mypy service adapters
	$(VENV)/bin/mypy bridges
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python tools/check_engine_purity.py

bench: $(NATIVE)
	$(VENV)/bin/python bench/engine.py

## the hot path's goal: bench/pipeline.py on a redis-server of its own, failing below BENCH_FLOOR
## times the bare pipeline of the same run in BENCH_ATTEMPTS runs in a row (issue 33; CI: 0.5, ten runs)
BENCH_FLOOR ?= 2.0
BENCH_ATTEMPTS ?= 3
bench-check: $(NATIVE)
	$(VENV)/bin/python bench/pipeline.py --check $(BENCH_FLOOR) --attempts $(BENCH_ATTEMPTS) $(BENCH_ARGS)

## the hot path's guard (CI): the worker's instructions per command under callgrind, failing above
## BENCH_MAX times the bare pipeline's (bench/instructions.py: the same figure on any machine)
BENCH_MAX ?= 1.35
bench-instructions: $(NATIVE)
	$(VENV)/bin/python bench/instructions.py --check $(BENCH_MAX)
