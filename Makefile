# Two commands set everything up from a fresh clone: `make run` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run demo test lint typecheck bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench,local,postgres,server]'
	touch $(STAMP)

# The main job: the bilingual walkthrough on the embedded SQLite default.
run: $(STAMP)
	$(BIN)/memstrata demo

demo: run

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench all

bench-quick: $(STAMP)
	$(BIN)/python -m bench all --quick

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
