# Two commands a new user needs: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# torch is pinned to the CPU build available on this machine; a bare `torch` pulls a multi-GB CUDA build.
TORCH  ?= torch==2.13.0

.PHONY: demo test test-all lint bench clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "$(TORCH)" -e ".[dev,ray]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rulebreaker demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m "not slow"

test-all: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

lint: $(STAMP)
	$(BIN)/ruff check envs agents training results tests
	$(BIN)/ruff format --check envs agents training results tests
	$(BIN)/mypy envs agents training results

bench: $(STAMP)
	$(BIN)/rulebreaker bench

clean:
	rm -rf $(VENV) runs .pytest_cache
