import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers import run_topo
from topology.cli import app

runner = CliRunner()


def lab_env(lab: Path) -> dict[str, str]:
    return {**os.environ, "TOPO_LAB_DIR": str(lab)}


def test_help_loads_neither_spark_nor_the_kafka_client() -> None:
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom topology.cli import app\n"
        "for args in (['--help'], ['lab', '--help'], ['lab', 'up', '--help']):\n"
        "    assert CliRunner().invoke(app, args).exit_code == 0\n"
        "print(sorted(m for m in ('pyspark', 'confluent_kafka') if m in sys.modules))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"


def test_help_lists_the_lab_commands() -> None:
    result = runner.invoke(app, ["lab", "--help"])
    assert result.exit_code == 0
    for command in ("up", "down", "status"):
        assert command in result.output


def test_status_of_an_empty_lab(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOPO_LAB_DIR", str(tmp_path))
    result = runner.invoke(app, ["lab", "status", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["lab", "down", "nosuch"], "there is no lab cluster named 'nosuch' (known: none)"),
        (["lab", "up", "Bad Name"], "lab cluster name 'Bad Name' is not valid"),
        (["lab", "up", "a", "b", "--port", "20000"], "--port applies to one cluster"),
    ],
)
def test_user_errors_are_one_line_and_exit_1(tmp_path: Path, args: list[str], message: str) -> None:
    done = run_topo(*args, env=lab_env(tmp_path))
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("error: ") and message in line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    import os

    done = run_topo(
        "--debug", "lab", "down", "nosuch", env={**os.environ, "TOPO_LAB_DIR": str(tmp_path)}
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr and done.stderr.rstrip().endswith("(known: none)")
