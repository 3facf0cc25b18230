# The two quick-start commands (README): `make play` and `make test`. Each sets itself up.
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: play test test-e2e lint bench

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $(STAMP)

## a match in the terminal against AI players (embedded store: no server, no token)
play: $(STAMP)
	$(VENV)/bin/cinq play $(ARGS)

## the whole test suite, except the slow end-to-end suites on outside software (make test-e2e)
test: $(STAMP)
	$(VENV)/bin/python -m pytest -q -n 2 -m "not e2e" $(PYTEST_ARGS)

# The e2e suites' own needs: matrix-nio for the Matrix bridge, and Synapse in a venv of its own
# (.cache/synapse-venv: its dependencies may clash with the project's).
E2E_STAMP := $(VENV)/.installed-e2e
$(E2E_STAMP): $(STAMP)
	$(VENV)/bin/pip install -q -e '.[dev,matrix]'
	$(VENV)/bin/python -c 'from tools.synapse import python; python()'
	touch $(E2E_STAMP)

## the end-to-end suites (a real Matrix homeserver on loopback)
test-e2e: $(E2E_STAMP)
	$(VENV)/bin/python -m pytest -q -m e2e $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy engine
	$(VENV)/bin/mypy service adapters
	$(VENV)/bin/mypy bridges
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python tools/check_engine_purity.py

bench: $(STAMP)
	$(VENV)/bin/python bench/engine.py
