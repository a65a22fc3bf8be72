# Every target sets up .venv from pyproject.toml first, so a fresh clone needs only `make demo`
# or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup demo test lint fmt unit integration notebooks bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/estatebot demo

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

fmt: setup
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

test: lint
	$(BIN)/pytest

unit: setup
	$(BIN)/pytest tests/unit

integration: setup
	$(BIN)/pytest tests/integration

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
