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
	@echo "warming the YoWASP cache (first run of each tool compiles its WebAssembly; ~1 min)"
	for t in yosys nextpnr-ice40 nextpnr-ecp5; do $(BIN)/yowasp-$$t --version >/dev/null 2>&1 || exit 1; done
	touch $(STAMP)

DEMO ?= examples/fir8.kera
BOARD ?= icebreaker

demo: $(STAMP)
	$(BIN)/kera-hls check $(DEMO)
	$(BIN)/kera-hls compile $(DEMO) -o out/demo.keg
	$(BIN)/kera-hls synthesize $(DEMO) --board $(BOARD) --bitstream -o out/demo
	$(BIN)/kera-hls sim $(DEMO) --board $(BOARD) --inputs $(DEMO:.kera=.vectors.jsonl) --backpressure > out/demo/sim.jsonl
	$(BIN)/kera-hls parity $(DEMO) --board $(BOARD) --vectors 2000

test: $(STAMP)
	$(BIN)/ruff check kera tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2

lint: $(STAMP)
	$(BIN)/ruff check kera tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
