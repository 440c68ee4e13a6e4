"""The import rules of docs/architecture.md, checked the way pre-commit checks them: with ruff."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("confluent_kafka", "pyspark", "typer")
SOURCE = "".join(f"import {name}\n" for name in LIBRARIES) + f"\nprint({', '.join(LIBRARIES)})\n"


def banned_in(path: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--stdin-filename", path, "--output-format",
         "concise", "--select", "TID251", "-"],
        input=SOURCE, capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    return {
        name
        for name in ("confluent_kafka", "pyspark", "typer")
        if f"`{name}` is banned" in done.stdout
    }


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("topology/model.py", set()),
        ("topology/lab/manager.py", set()),
        ("topology/kafka/admin.py", {"confluent_kafka"}),
        ("topology/spark/job.py", {"pyspark"}),
        ("topology/cli/plan.py", {"typer"}),
    ],
)
def test_each_edge_library_is_allowed_in_one_place_only(path: str, allowed: set[str]) -> None:
    assert banned_in(path) == set(LIBRARIES) - allowed
