# The two commands of the README: `make app` (set up, then open the explorer) and `make test`; for contributors
# `make test-fast` and `make lint` (docs/CONTRIBUTING.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501
# numba's cache of UMAP's compiled code: inside the venv (writable, and tied to the package versions installed
# there; app/explore/projections.py's numba_cache_dir() picks the same folder when a server starts without this Makefile).
# Filled once by the install step below, read by every server and test started from here.
NUMBA_CACHE_DIR ?= $(abspath $(VENV))/numba-cache
export NUMBA_CACHE_DIR

.PHONY: app test test-fast lint setup setup-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# A stamp per requirements file, so a second `make app` starts at once. Last, UMAP is compiled once into numba's
# on-disk cache (30-60 s on 2 cores): no server started from here compiles it again, and no visitor waits for it
# (a fresh server process then loads UMAP in about 3 s). If UMAP cannot be loaded this only says so.
$(VENV)/.installed: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps -e .   # elmo_core importable anywhere in the venv, plus the console scripts
	$(BIN)/python -c "from app.serving.warm_up import UmapWarmUp; w = UmapWarmUp().run_now(); \
		print('UMAP compiled into $(NUMBA_CACHE_DIR):', w.state, f'{w.seconds:.0f} s', w.error)"
	touch $@

$(VENV)/.installed-test: requirements-test.txt $(VENV)/.installed
	$(BIN)/python -m pip install -q -r requirements-test.txt
	touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

# `make app ATLAS=DIR`: the Corpus page offers the atlas in DIR (or every atlas folder in DIR: ELMO_EXPLORER_ATLAS,
# docs/ATLAS.md). `make app MODEL=original`: a published model is downloaded first when it is not cached (the command returns at
# once when it is; a bundled name, default or lm-only, needs nothing), then the explorer starts on it (app/launch.py:
# headless, and the model and the first map warmed at server start, before the first visitor).
app: setup
ifneq ($(MODEL),)
	@if $(BIN)/python -c "import sys; from elmo_core.paths import BUNDLED_MODELS; sys.exit(sys.argv[1] not in BUNDLED_MODELS)" "$(MODEL)"; \
	then echo "$(MODEL): a bundled model"; else $(BIN)/python -m elmo_core download "$(MODEL)"; fi
endif
	$(if $(MODEL),ELMO_EXPLORER_MODEL="$(MODEL)" )$(if $(ATLAS),ELMO_EXPLORER_ATLAS="$(ATLAS)" )$(BIN)/python -m app.launch --server.port $(PORT)

# pytest's exit code 5 (no tests collected) counts as a failure, like any other non-zero code.
RUN_PYTEST = rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

# The whole suite, after the lint: what CI runs (.ci/run). Browser, replica and download tests included.
test: setup-test lint
	@$(BIN)/python -m pytest $(PYTEST_ARGS); $(RUN_PYTEST)

# What a contributor runs while working (under 2 minutes on 2 cores): everything but the tests that drive a browser,
# start several processes or servers, serve downloads from a local mirror, or are slow for another reason
# (the markers: pyproject.toml; docs/CONTRIBUTING.md). `make test` before a push.
FAST = not browser and not multiprocess and not download_server and not slow
test-fast: setup-test
	@$(BIN)/python -m pytest -m "$(FAST)" $(PYTEST_ARGS); $(RUN_PYTEST)

# ruff (pinned in requirements-test.txt, configured in pyproject.toml): the rules, then the formatting.
lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
