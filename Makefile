# The two commands: `make demo` and `make test`. CI runs `make test` and then
# `make check-oracle` through .ci/run.
# `make demo` installs the tracker's runtime only; `make test`, `lint` and `bench` add the
# development tools (the `dev` dependency group: pytest, mypy, ruff, Playwright, ...).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUNTIME_STAMP := $(VENV)/.installed-runtime
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: demo test fuzz lint bench check-oracle install install-dev clean screenshots

$(BIN)/python:
	@echo "==> Creating the virtual environment $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> Upgrading pip in $(VENV) (dependency groups need pip 25.1 or newer)"
	$(BIN)/python -m pip install --upgrade pip

$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	@echo "==> Installing the tracker and its runtime dependencies into $(VENV) (editable, with the postgres extra)"
	$(BIN)/python -m pip install -e '.[postgres]'
	touch $(RUNTIME_STAMP)

$(DEV_STAMP): pyproject.toml $(RUNTIME_STAMP)
	@echo "==> Installing the development tools (dependency group dev) into $(VENV)"
	$(BIN)/python -m pip install -e '.[postgres]' --group dev
	touch $(DEV_STAMP)

install: $(RUNTIME_STAMP)

install-dev: $(DEV_STAMP)

demo: $(RUNTIME_STAMP)
	@echo "==> Running the demo: example data, ingest, analysis, report in demo/site/, a gate"
	$(BIN)/tracker demo --out demo

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy tracker

# Two pytest workers (pytest-xdist), each test file whole on one of them (module
# fixtures built once); the 15 slowest tests are printed. PYTEST_WORKERS=0 runs in one process.
# Bytecode is cached in $(PYTEST_PYCACHE) (inside the virtual environment, never beside the
# sources), even where PYTHONDONTWRITEBYTECODE is set: without it each worker rewrites the
# tests' asserts again and each of the many `python -m tracker` processes the tests
# start compiles the tracker again (several seconds of CPU a run).
PYTEST_WORKERS ?= 2
PYTEST_PYCACHE ?= $(abspath $(VENV))/pycache
test: lint
	env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(PYTEST_PYCACHE) \
		$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=15

# The property and fuzz tests with 2,000 fresh random examples each (tests/conftest.py).
fuzz: $(DEV_STAMP)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests/formats/test_fuzz.py tests/formats/microbench/test_parse.py tests/test_versions.py tests/sources/test_tar_headers.py tests/sources/test_hostile_tar_headers.py

bench: $(DEV_STAMP)
	$(BIN)/python benchmarks/run.py
	set -e; for script in benchmarks/bench_*.py; do $(BIN)/python $$script; done

# The Training oracle: MLCommons' mlperf-logging (from PyPI, in a virtual environment of
# its own, never in $(VENV)) scores every result folder of ORACLE_ROUNDS and the tracker's
# figures must agree with its own, field by field (tests/oracle/check.py); exit 1 if not.
ORACLE_VENV ?= .venv-oracle
ORACLE_STAMP := $(ORACLE_VENV)/.installed-mlperf-logging
MLPERF_LOGGING ?= mlperf-logging>=4.1.68
SHARED_TRAINING ?= ../shared/data/mlperf-training
ORACLE_ROUNDS ?= $(SHARED_TRAINING)/v5.0 $(SHARED_TRAINING)/v5.1 tests/data/mlperf-training/v5.0 tests/data/mlperf-training/v5.1

$(ORACLE_STAMP):
	@echo "==> Installing $(MLPERF_LOGGING) into its own virtual environment $(ORACLE_VENV)"
	$(PYTHON) -m venv $(ORACLE_VENV)
	$(ORACLE_VENV)/bin/python -m pip install '$(MLPERF_LOGGING)'
	touch $(ORACLE_STAMP)

check-oracle: $(RUNTIME_STAMP) $(ORACLE_STAMP)
	$(BIN)/python -m tests.oracle.check --oracle-python $(ORACLE_VENV)/bin/python $(ORACLE_ROUNDS)

clean:
	rm -rf $(VENV) $(ORACLE_VENV) demo screenshots build dist .pytest_cache .mypy_cache .ruff_cache

# A screenshot of every kind of report page at 1400 and 390 px (demo and shared rounds) in
# screenshots/, for review; not part of `make test` or CI.
screenshots: $(DEV_STAMP)
	$(BIN)/python scripts/screenshots.py --out screenshots
