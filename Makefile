# The two commands: `make demo` and `make test`. Both install what they need first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
JARS := $(VENV)/.jars-resolved
KERBEROS_CLIENT := $(VENV)/.kerberos-client
PYTEST_ARGS ?=

.PHONY: help setup demo test test-unit test-java test-tools lint clean prometheus kerberos-client
.DEFAULT_GOAL := help

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: $(INSTALLED) $(JARS) ## Install: .venv with topo (editable, dev extras) and the Maven jars

$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "topo needs Python 3.11+")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[spark,dev,aws]'
	@touch $@

$(JARS): $(INSTALLED) topology/resources/maven/*.xml
	$(BIN)/python -m topology.host.maven kafka-broker spark-kafka mirror-maker
	@touch $@

QUICKSTART := examples/quickstart.yaml
STEP = @printf '\n== %s\n'

demo: setup ## Plan, apply and watch the quickstart: east's orders replicated live to west
	$(STEP) "1/7 Start two lab Kafka clusters, east and west (each port is fixed per name)"
	$(BIN)/topo lab up east west
	$(STEP) "2/7 Create the topic 'orders' on east (3 partitions)"
	$(BIN)/python examples/demo_traffic.py --create-only
	$(STEP) "3/7 topo plan: what apply would change, read from the live clusters (changes nothing)"
	$(BIN)/topo plan $(QUICKSTART)
	$(STEP) "4/7 topo apply: make those changes, then start replication in the background"
	$(BIN)/topo apply $(QUICKSTART) --auto-approve
	$(STEP) "5/7 Produce 100 orders/s to east for 30 s; topo status twice, while they replicate"
	@$(BIN)/python examples/demo_traffic.py --rate 100 --seconds 30 & traffic=$$!; \
	for pause in 10 12; do \
	  sleep $$pause; echo; echo "$$ topo status $(QUICKSTART)"; \
	  $(BIN)/topo status $(QUICKSTART) || { kill $$traffic; $(BIN)/topo stop $(QUICKSTART); exit 1; }; \
	done; wait $$traffic || { $(BIN)/topo stop $(QUICKSTART); exit 1; }
	$(STEP) "6/7 Read the copies on west: key, value, headers (+ topo's stamps), source timestamp"
	$(BIN)/python examples/demo_show.py || { $(BIN)/topo stop $(QUICKSTART); exit 1; }
	$(STEP) "7/7 topo stop: stop replication (its positions are kept: topo apply resumes it)"
	$(BIN)/topo stop $(QUICKSTART)
	@echo
	@echo "Done. The lab clusters east and west are still running: run the topo commands above"
	@echo "yourself, or stop them with: $(BIN)/topo lab down east west"

test: setup kerberos-client test-java test-tools ## Run every test: JUnit, unit, and integration against real lab Kafka and real Spark
	$(BIN)/pytest $(PYTEST_ARGS)

# confluent-kafka rebuilt on a librdkafka with Kerberos (GSSAPI), for Kerberized clusters and
# tests/integration/test_kerberos.py (docs/secured-clusters.md). Needs Debian's SASL and Kerberos
# packages, which it installs as root (CI); elsewhere it names them, and `make test` goes on:
# the Kerberos tests are skipped, unless TOPO_TESTS_NEED_KERBEROS=1 (set by .ci/run).
kerberos-client: $(KERBEROS_CLIENT) ## Rebuild .venv's confluent-kafka with Kerberos (GSSAPI) support (~1 min)

$(KERBEROS_CLIENT): $(INSTALLED) deploy/kerberos-client.sh
	@deploy/kerberos-client.sh $(VENV) && touch $@ || \
	  echo "note: no Kerberos client here; tests/integration/test_kerberos.py will be skipped"

# Debian's Prometheus for tests/integration/test_prometheus.py, installed where apt-get may run
# (as root: CI); elsewhere the test is skipped unless a `prometheus` is found (`make prometheus`).
test-tools:
	@command -v prometheus >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }; } && \
	  echo "installed Debian's prometheus for the tests"; } || \
	  echo "note: no prometheus here; tests/integration/test_prometheus.py will be skipped"

PROMETHEUS_VERSION := v0.316.0
prometheus: ## Build Prometheus 3.16 from its Go module (needs go, ~15 min) for tests/integration/test_prometheus.py
	go install github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS_VERSION)

test-unit: setup test-java ## Only the pure unit tests (JUnit and pytest; no Kafka, no Spark)
	$(BIN)/pytest -m "not kafka and not spark" $(PYTEST_ARGS)

# pom.xml: topo's Java (topology/resources/java) compiled and tested with JUnit (tests/java);
# mvn fetches kafka-clients, JUnit and its plugins on first use. Spark's aggregate is left out.
test-java: ## Only the JUnit tests of topo's Java (the copy loop's rules, positions, figures, config)
	mvn -B -ntp test

lint: setup ## ruff, ruff-format, mypy and google-java-format (Spotless), as pre-commit runs them
	$(BIN)/pre-commit run --all-files

clean: ## Stop lab clusters and remove the virtualenv (the jar cache is kept)
	-$(BIN)/topo lab down
	rm -rf $(VENV) build target *.egg-info
