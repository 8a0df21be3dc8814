# Two commands set everything up from a fresh clone: `make run` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run demo test test-browser lint typecheck bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench,local,postgres,server,ingest]'
	touch $(STAMP)

# The main job: the memory service (REST /v1, MCP /mcp) on the embedded SQLite default, 127.0.0.1:8765.
# Requests need an API key (`memstrata keys create --tenant NAME`); for keyless local use:
#   make run SERVE_ARGS=--allow-anonymous-loopback
# One OpenBLAS thread: the server embeds in many request threads at once, and a BLAS pool per call
# oversubscribes the cores (p99 latency ~10x worse under load; see bench/service_load.py).
SERVE_ARGS ?=
run: $(STAMP)
	OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} $(BIN)/memstrata serve $(SERVE_ARGS)

# The bilingual walkthrough (add, cross-lingual search, update, delete, history) on a temporary store.
demo: $(STAMP)
	$(BIN)/memstrata demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# The web console in real Chromium (Debian's `chromium` package; Playwright drives it and never downloads a browser).
# Skipped, with the reason, when Chromium is missing: `apt-get install -y chromium` (CI installs it in .ci/run).
BROWSER_STAMP := $(VENV)/.browser-installed
$(BROWSER_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[browser]'
	touch $(BROWSER_STAMP)

test-browser: $(BROWSER_STAMP)
	OPENBLAS_NUM_THREADS=1 MEMSTRATA_CONSOLE_SCREENSHOTS=$(CURDIR)/build/console-screens \
		$(BIN)/python -m pytest -q -n 0 -m browser tests/browser

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
