# minidl book: the two commands are `make book` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help
.PHONY: help setup book test chromium serve lab clean distclean lint

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.minidl-setup.stamp
PORT ?= 8000
JB_FLAGS := -W -n --keep-going

# Compiled numba kernels stay inside the project (the library defaults to the same place);
# the venv comes first on PATH so jupyter starts the project's kernel.
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# This checkout's minidl wins over whatever the venv's editable install points at (a second
# checkout or git worktree sharing one .venv runs its own code, kernels included).
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

help:
	@echo "make book    build the site into _build/html (executes every chapter)"
	@echo "make test    run the whole test suite (library, chapters, site in headless Chromium)"
	@echo "make serve   serve _build/html on http://127.0.0.1:$(PORT)/ with live code (a local Jupyter kernel)"
	@echo "make lab     open the chapters in JupyterLab (MyST rendered, solutions folded)"
	@echo "make clean   remove build output and caches (make distclean also removes .venv)"

# Create the venv, install the pinned dependencies and the package (editable). The stamp
# makes a second run instant until requirements.lock or pyproject.toml changes.
setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -r requirements.lock
	$(PY) -m pip install --no-deps -e .
	@touch $@

book: setup
	$(VENV)/bin/jupyter-book build . $(JB_FLAGS)
	@echo
	@echo "The book: file://$(CURDIR)/_build/html/index.html   (or: make serve)"

# pytest exits 5 when it collected nothing: that is a failure, not a pass. Two workers
# (pytest-xdist; --dist loadfile keeps a file's tests on one worker): one builds the book and
# runs tests/test_site.py, collected first, while the other runs the library's tests
# (tests/conftest.py). TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
test: setup chromium
	@$(PY) -m pytest $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; fi; \
	exit $$rc

# The site test drives the Debian chromium; install it where it is missing (CI runs as root).
# npm fetches thebe for the pages' Live code when the site is built (tests/test_live.py).
# mesa-vulkan-drivers gives Device.wgpu() an adapter (lavapipe) on a machine without a GPU.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "chromium is missing: installing the Debian package"; \
	  SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }
	@command -v npm >/dev/null 2>&1 || { \
	  echo "npm is missing: installing the Debian package"; \
	  SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q npm; }
	@test -n "$$(ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null)" || { \
	  echo "mesa-vulkan-drivers is missing: installing the Debian package (lavapipe, the software Vulkan driver Device.wgpu() runs on without a GPU)"; \
	  SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q mesa-vulkan-drivers; }

# The site and, beside it, a Jupyter server for the pages' "Live code" control (both on
# 127.0.0.1; random token; CORS only from the site). Builds first when the site is missing
# or predates Live code. SITE=... serves another build (the tests use PORT=0: a free port).
SITE ?= _build/html
serve:
	@test -f $(SITE)/index.html -a -f $(SITE)/_live/thebe/index.js || $(MAKE) book
	@$(PY) book_ext/serve.py --html $(SITE) --port $(PORT)

# JupyterLab (pinned in the lock) with the chapters as notebooks: jupytext opens the .md files,
# jupyterlab-myst renders MyST, book_ext/jupyter_lab_config.py folds what the site folds and
# never rewrites a chapter that was only read; --allow-root is set there when run as root.
# overrides.json: a double-click on a chapter opens it as a notebook; no news from the web.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: setup
	@mkdir -p $(dir $(LAB_OVERRIDES)) && cp book_ext/lab_overrides.json $(LAB_OVERRIDES)
	$(VENV)/bin/jupyter lab --config=$(CURDIR)/book_ext/jupyter_lab_config.py $(LAB_ARGS)

lint: setup
	$(VENV)/bin/ruff check .

clean:
	rm -rf _build .pytest_cache .numba_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -path ./$(VENV) -prune -o -name .ipynb_checkpoints -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
