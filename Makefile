# Everything runs from a project-local virtualenv that these targets create on first use.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow bench setup clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

## The main job on the embedded default: sample workspace, index, searches.
demo: $(STAMP)
	$(BIN)/mnemoclaw demo

## The default test suite (what .ci/run runs first).
test: $(STAMP)
	$(BIN)/python -m pytest -q

## Quality and scale suites over ../shared/bench (slow).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

bench: $(STAMP)
	$(BIN)/python benchmarks/speed.py

clean:
	rm -rf $(VENV) build src/*.egg-info
