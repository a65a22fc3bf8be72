# Every target sets up .venv from pyproject.toml first, so a fresh clone needs only `make demo`
# or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup demo test lint docs fmt unit integration notebooks bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,emulator]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/estatebot demo

# Style, types, and the rules of the rooms (import-linter contracts in pyproject.toml).
lint: setup
	$(BIN)/ruff check src tests bench docs/hooks
	$(BIN)/ruff format --check src tests bench docs/hooks
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

fmt: setup
	$(BIN)/ruff check --fix src tests bench docs/hooks
	$(BIN)/ruff format src tests bench docs/hooks

# The documentation site (mkdocs.yml), built with --strict: a broken link, an unresolved
# reference or a docstring griffe cannot read fails it. NO_MKDOCS_2_WARNING quiets a banner
# about the theme's future that says nothing of this site.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The suite (every example of the README and docs included), then every notebook executed by
# nbval (each against a fresh emulator, see notebooks/conftest.py). The suite runs on every core
# (pytest-xdist): most of its time is spent waiting on loopback HTTP, JupyterLab and LibreOffice.
# Each worker takes a whole test file at a time, so a file's module fixtures (an emulator, a
# JupyterLab) start once.
test: lint docs
	$(BIN)/pytest -n auto --dist loadfile
	$(BIN)/pytest --nbval-lax --nbval-current-env notebooks/

unit: setup
	$(BIN)/pytest tests/unit

integration: setup
	$(BIN)/pytest tests/integration

notebooks: setup
	$(BIN)/pytest --nbval-lax --nbval-current-env notebooks/

# Benchmarks run in their own venv: the datacompy baseline (datacompy 1.1, its latest release)
# requires pandas < 3.1, older than the pandas the project installs, so it cannot share .venv.
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed-stamp

$(BENCH_STAMP): pyproject.toml
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -e '.[dev,emulator,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BENCH_VENV)/bin/python -m bench

clean:
	rm -rf $(VENV) $(BENCH_VENV) .pytest_cache .mypy_cache .ruff_cache build dist site
