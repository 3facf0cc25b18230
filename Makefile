# The two quick-start commands (README): `make play` and `make test`. Each sets itself up.
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: play test test-faults lint bench

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $(STAMP)

## a match in the terminal against AI players (embedded store: no server, no token)
play: $(STAMP)
	$(VENV)/bin/cinq play $(ARGS)

## the whole test suite (but the fault cases of issue 12, which fail until its fixes land)
test: $(STAMP)
	$(VENV)/bin/python -m pytest -q -n 2 -m "not faults" $(PYTEST_ARGS)

## issue 12's fault cases and randomized fault run (tests/faults/): real redis-server, a fault proxy
test-faults: $(STAMP)
	$(VENV)/bin/python -m pytest -q -m faults tests/faults $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy engine
	$(VENV)/bin/mypy service adapters
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python tools/check_engine_purity.py

bench: $(STAMP)
	$(VENV)/bin/python bench/engine.py
