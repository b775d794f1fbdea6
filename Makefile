# The two commands: `make demo` and `make test`. CI runs `make test` through .ci/run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[postgres]' --group dev
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/tracker demo --out demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy tracker

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	set -e; for script in benchmarks/bench_*.py; do $(BIN)/python $$script; done

clean:
	rm -rf $(VENV) demo build dist .pytest_cache .mypy_cache .ruff_cache
