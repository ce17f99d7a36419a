# Two entry points do all the set-up: `make demo` and `make test`.
# Both create/refresh .venv from pyproject.toml (re-installed when pyproject.toml changes).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kera-hls check examples/fir8.kera
	$(BIN)/kera-hls tree examples/fir8.kera

test: $(STAMP)
	$(BIN)/ruff check kera tests benchmarks
	$(BIN)/python -m pytest -n 2

lint: $(STAMP)
	$(BIN)/ruff check kera tests benchmarks

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
