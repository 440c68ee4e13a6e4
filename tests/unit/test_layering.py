"""The import rules of docs/architecture.md, checked the way pre-commit checks them: with ruff."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("confluent_kafka", "pyspark", "typer")
# topo's own edge packages: the pure core imports none of them.
PACKAGES = ("topology.kafka", "topology.ops", "topology.spark", "topology.cli")


def banned_in(path: str, names: tuple[str, ...]) -> set[str]:
    """Which of `names` ruff refuses to let a file at `path` import."""
    source = "".join(f"import {name}\n" for name in names) + f"\nprint({', '.join(names)})\n"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--stdin-filename",
            path,
            "--output-format",
            "concise",
            "--select",
            "TID251",
            "-",
        ],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return {name for name in names if f"`{name}` is banned" in done.stdout}


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("topology/core/model.py", set()),
        ("topology/lab/manager.py", set()),
        ("topology/review/github.py", set()),
        ("topology/kafka/admin.py", {"confluent_kafka"}),
        ("topology/ops/lease.py", set()),
        ("topology/spark/job.py", {"pyspark"}),
        ("topology/cli/plan.py", {"typer"}),
    ],
)
def test_each_edge_library_is_allowed_in_one_place_only(path: str, allowed: set[str]) -> None:
    assert banned_in(path, LIBRARIES) == set(LIBRARIES) - allowed


# What each folder may import of topo's own edge packages; everything else in PACKAGES is banned.
MAY_IMPORT = {
    "topology/core/model.py": set(),  # the pure core
    "topology/core/plan/planner.py": set(),
    "topology/core/offsets/route.py": set(),
    "topology/kafka/inventory.py": {"topology.kafka"},
    "topology/ops/rounds.py": {"topology.ops"},  # its adapters are passed in
    "topology/spark/driver.py": {"topology.kafka", "topology.ops", "topology.spark"},
    "topology/cli/apply.py": set(PACKAGES),
    "topology/lab/manager.py": {"topology.kafka"},  # probes the clusters it starts
    "topology/review/findings.py": set(),
}
CASES = [
    pytest.param(path, package, package in allowed, id=f"{path}-{package}")
    for path, allowed in MAY_IMPORT.items()
    for package in PACKAGES
]


@pytest.mark.parametrize(("path", "package", "allowed"), CASES)
def test_each_layer_imports_only_the_layers_below_it(
    path: str, package: str, allowed: bool
) -> None:
    assert banned_in(path, (package,)) == (set() if allowed else {package})


# The core imports the core only: beyond the packages above, none of the other edges either.
CORE_ONLY = (
    "topology.host",
    "topology.lab",
    "topology.review",
    "topology.dashboard",
    "topology.telemetry",
)


@pytest.mark.parametrize(
    "path",
    ["topology/core/jobs.py", "topology/core/plan/saved.py", "topology/core/mm2/importer.py"],
)
def test_the_core_imports_no_edge_of_its_own(path: str) -> None:
    assert banned_in(path, (*PACKAGES, *CORE_ONLY)) == {*PACKAGES, *CORE_ONLY}
    assert banned_in("topology/spark/loop.py", CORE_ONLY) == set()  # an edge may


@pytest.mark.parametrize(
    "line",
    [
        "from topology.kafka import client",
        "from topology.kafka.offsets import LogWriter",
        "from topology import kafka",
        "import topology.kafka.records",
    ],
)
def test_every_spelling_of_an_import_is_caught(line: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--stdin-filename",
            "topology/core/model.py",
            "--output-format",
            "concise",
            "--select",
            "TID251",
            "-",
        ],
        input=f"{line}\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert "`topology.kafka` is banned" in done.stdout, (line, done.stdout)


def test_the_whole_package_keeps_the_rules() -> None:
    """Today's code, not only the configuration: `ruff check` over the package finds no import
    across the layers (entry points excepted in pyproject.toml)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--select",
            "TID251",
            "--output-format",
            "concise",
            "topology",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stdout
