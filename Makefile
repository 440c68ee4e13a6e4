# The two commands: `make demo` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
JARS := $(VENV)/.jars-resolved
PYTEST_ARGS ?=

.PHONY: help setup demo test test-unit lint clean
.DEFAULT_GOAL := help

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: $(INSTALLED) $(JARS) ## Install: .venv with topo (editable, dev extras) and the Maven jars

$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "topo needs Python 3.11+")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

$(JARS): $(INSTALLED) topology/resources/maven/*.xml
	$(BIN)/python -m topology.maven kafka-broker spark-kafka
	@touch $@

demo: setup ## Start lab clusters east and west and copy a topic between them with Spark
	$(BIN)/topo lab up east west
	$(BIN)/python examples/first_copy.py

test: setup ## Run every test: unit, and integration against real lab Kafka and real Spark
	$(BIN)/pytest $(PYTEST_ARGS)

test-unit: setup ## Only the pure unit tests (no Kafka, no Spark)
	$(BIN)/pytest -m "not kafka and not spark" $(PYTEST_ARGS)

lint: setup ## ruff, ruff-format and mypy, as pre-commit runs them
	$(BIN)/pre-commit run --all-files

clean: ## Stop lab clusters and remove the virtualenv (the jar cache is kept)
	-$(BIN)/topo lab down
	rm -rf $(VENV) build *.egg-info
