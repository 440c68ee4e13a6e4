"""`topo validate` and `topo graph` as a user runs them: exit codes, streams, formats."""

import json
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import run_topo

GOLDEN = Path(__file__).parent.parent / "golden"
SCHEMAS = Path(__file__).parent.parent.parent / "schemas"
VALID = str(GOLDEN / "valid-multi-hop-prefix" / "topology.yaml")
INVALID = str(GOLDEN / "T201-unknown-cluster" / "topology.yaml")


def _schema(name: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((SCHEMAS / name).read_text())
    return loaded


def test_a_valid_file_exits_0_and_says_so() -> None:
    result = run_topo("validate", VALID)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{VALID}: valid"
    assert result.stderr == ""


def test_every_error_is_reported_with_its_line_shown() -> None:
    result = run_topo("validate", INVALID)
    assert result.returncode == 1
    headlines = [line for line in result.stderr.splitlines() if "error[" in line]
    assert headlines == [
        f"{INVALID}:7:5: error[T201]: flows[0] names cluster 'wset', which is not under "
        "clusters; did you mean 'west'?",
        f"{INVALID}:8:5: error[T201]: flows[1] names cluster 'north', which is not under "
        "clusters; clusters are: east, west, central",
    ]
    assert "  7 |   - mirror: {from: east, to: wset}" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.strip() == f"{INVALID}: 2 errors, 0 warnings"


def test_several_files_fail_when_one_does() -> None:
    result = run_topo("validate", VALID, INVALID)
    assert result.returncode == 1
    assert f"{VALID}: valid" in result.stdout


def test_warnings_pass_unless_strict() -> None:
    warned = str(GOLDEN / "T307-replicates-nothing" / "topology.yaml")
    assert run_topo("validate", warned).returncode == 0
    assert run_topo("validate", "--strict", warned).returncode == 1


def test_json_output_follows_its_schema() -> None:
    result = run_topo("validate", "--format", "json", VALID, INVALID)
    assert result.returncode == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, _schema("validate.schema.json"))
    assert [f["valid"] for f in document["files"]] == [True, False]
    assert {d["code"] for d in document["files"][1]["diagnostics"]} == {"T201"}
    assert result.stderr == ""


def test_a_missing_file_is_one_line() -> None:
    result = run_topo("validate", "no-such.yaml")
    assert result.returncode == 1
    assert result.stderr == "error: no-such.yaml: no such file\n"


def test_standard_input(tmp_path: Path) -> None:
    import subprocess
    import sys

    text = (GOLDEN / "valid-prefix-ring" / "topology.yaml").read_text()
    code = "from topology.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", code, "validate", "-"], input=text, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("output", ["mermaid", "dot", "json"])
def test_graph_formats(output: str) -> None:
    result = run_topo("graph", "--format", output, VALID)
    assert result.returncode == 0, result.stderr
    if output == "mermaid":
        assert result.stdout.splitlines()[0] == "flowchart LR"
        assert 'c_east -->|"orders"| c_west' in result.stdout
    elif output == "dot":
        assert '"east" -> "west" [label="orders"];' in result.stdout
    else:
        document = json.loads(result.stdout)
        jsonschema.validate(document, _schema("graph.schema.json"))
        central = document["remote_topics"]["central"]
        assert {
            "names": "west.east.orders",
            "exact": ["west.east.orders"],
            "origin": "east",
            "path": ["east", "west", "central"],
        } in central


def test_graph_of_an_invalid_file_fails_with_diagnostics() -> None:
    result = run_topo("graph", INVALID)
    assert result.returncode == 1
    assert "error[T201]" in result.stderr
