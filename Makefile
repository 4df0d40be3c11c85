# pysim: classic systems papers replicated by simulation. `make help` lists the targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# the venv's meson and ninja first: the build finds them, and the editable install pins them
export PATH := $(abspath $(BIN)):$(PATH)
STAMP := $(VENV)/.pysim-installed
PAPER ?= all
JOBS ?= 2
PORT ?= 8888
IMAGE ?= pysim-lab
CC ?= cc
CFLAGS_C := -std=c99 -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes -Werror
NATIVE_SRC := $(wildcard native/src/*.c)
NATIVE_TESTS := $(patsubst native/tests/%.c,%,$(wildcard native/tests/test_*.c))

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-13s %s\n", $$1, $$2}'

setup: $(STAMP) ## Create .venv, install pysim editable with its dev extras, build the extension
$(STAMP): pyproject.toml meson.build
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q meson-python meson ninja numpy "setuptools>=70.1" wheel
	$(BIN)/pip install -q --no-build-isolation -e '.[dev]'
	@touch $@

native-test: ## C core tests, plain and under AddressSanitizer + UndefinedBehaviorSanitizer
	@mkdir -p build/native
	@for t in $(NATIVE_TESTS); do \
	  $(CC) $(CFLAGS_C) -O2 -Inative/include $(NATIVE_SRC) native/tests/$$t.c -lm -o build/native/$$t || exit 1; \
	  $(CC) $(CFLAGS_C) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
	    -Inative/include $(NATIVE_SRC) native/tests/$$t.c -lm -o build/native/$$t-san || exit 1; \
	  build/native/$$t | tail -n 1 || exit 1; \
	  build/native/$$t-san | sed 's/^\(test_[a-z]*\)/\1 (sanitizers)/' | tail -n 1 || exit 1; \
	done

test: setup native-test ## C tests, pytest (units, notebooks in quick mode, browser, Docker)
	$(BIN)/python -m pytest -q --durations=25

test-fast: setup native-test ## Everything but the browser and Docker tests
	$(BIN)/python -m pytest -q -m "not browser and not docker"

test-browser: setup ## JupyterLab in headless Chromium runs a notebook through the UI
	$(BIN)/python -m pytest -q -m browser

test-docker: setup ## Build the image (making a local base if needed), run it, check JupyterLab and pysim
	$(BIN)/python -m pytest -q -m docker

reproduce: setup ## Run notebooks in full (PAPER=<id>, QUICK=1, SCHEDULER=tcp://host:8786 for dask); write results/
	$(BIN)/pysim reproduce $(if $(filter-out all,$(PAPER)),$(PAPER)) --jobs $(JOBS) $(if $(QUICK),--quick) \
	  $(if $(SCHEDULER),--scheduler $(SCHEDULER))

check: setup ## Score ledgers and claims against the models, without notebooks
	$(BIN)/pysim check $(if $(filter-out all,$(PAPER)),$(PAPER))

lab: setup ## Start JupyterLab on 127.0.0.1 with a token (TOKEN=... to choose it)
	@token="$${TOKEN:-$$($(BIN)/python -c 'import secrets; print(secrets.token_hex(24))')}"; \
	echo "JupyterLab: http://127.0.0.1:$(PORT)/lab?token=$$token"; \
	$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(PORT) --ServerApp.root_dir=notebooks \
	  --IdentityProvider.token="$$token"

student: setup ## Write the course edition of every notebook (solutions removed) under build/student/
	$(BIN)/pysim student --out build/student

contract: setup ## Check every paper against the lab's contract (PAPER=<id> for one)
	$(BIN)/pysim contract $(if $(filter-out all,$(PAPER)),$(PAPER))

jvm-corpus: setup ## The JVM toolkit against javap and javac on every JDK class (a few minutes)
	PYSIM_JVM_CORPUS=full $(BIN)/python -m pytest -q -s tests/jvm

bench: setup ## Speed of the core as ratios; writes results/bench.json
	$(BIN)/pysim bench

docker-build: ## Build the Docker image (site CA certificates from the host are passed in)
	@mkdir -p docker/ca-certificates
	@cp /usr/local/share/ca-certificates/*.crt docker/ca-certificates/ 2>/dev/null || true
	docker build -t $(IMAGE) .

docker-run: ## Run JupyterLab in the image on 127.0.0.1:$(PORT) (TOKEN=... to choose the token)
	@token="$${TOKEN:-$$(python3 -c 'import secrets; print(secrets.token_hex(24))')}"; \
	echo "JupyterLab: http://127.0.0.1:$(PORT)/lab?token=$$token"; \
	docker run --rm -p 127.0.0.1:$(PORT):8888 -e JUPYTER_TOKEN="$$token" $(IMAGE)

clean: ## Remove build products, results and the virtual environment
	rm -rf build results .venv .pytest_cache .hypothesis docker/ca-certificates/*.crt
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

.PHONY: help setup native-test test test-fast test-browser test-docker reproduce check student contract lab jvm-corpus bench docker-build docker-run clean
