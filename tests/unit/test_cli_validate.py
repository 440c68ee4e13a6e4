"""`topo validate` and `topo graph` as a user runs them: exit codes, streams, formats."""

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import run_topo
from tests.unit.test_secrets_shown import LEAKED, leading_cases

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


# -- bad input found outside the project: each one a located error and exit 1 ---------------

LOCATED = re.compile(r"^\S+:\d+:\d+: (error|warning|note)\b")
VALID_TEXT = (GOLDEN / "valid-prefix-ring" / "topology.yaml").read_text()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_topology(where: str, depth: int) -> str:
    """A valid-looking topology with a value `depth` levels deep at `where`."""
    deep = _nested(depth)
    clusters = "clusters:\n  east: {bootstrap: 'h:1'}\n  west: {bootstrap: 'h:2'}\n"
    flows = "flows:\n  - mirror: {from: east, to: west}\n"
    if where == "top":
        return f"version: 1\n{clusters}{flows}extra: {deep}\n"
    if where == "client":
        clusters = clusters.replace("'h:1'", f"'h:1', client: {{x: {deep}}}")
    elif where == "topics":
        flows += f"    topics: {{include: {deep}}}\n"
    elif where == "spark":
        flows += f"engine: {{spark_conf: {{spark.x: {deep}}}}}\n"
    return f"version: 1\n{clusters}{flows}"


def _assert_located_failure(result: subprocess.CompletedProcess[str], file: str) -> None:
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{file}:") and LOCATED.match(first), first


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("where", ["top", "client", "topics", "spark"])
def test_deep_nesting_is_a_located_error_at_any_depth(
    tmp_path: Path, where: str, depth: int
) -> None:
    file = tmp_path / "deep.yaml"
    file.write_text(_deep_topology(where, depth))
    result = run_topo("validate", str(file))
    _assert_located_failure(result, str(file))
    assert "error[T001]: YAML: values nest more than 100 levels deep here" in result.stderr


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deep_nesting_in_either_file_of_a_diff_is_a_located_error(
    tmp_path: Path, depth: int
) -> None:
    base, head = tmp_path / "base.yaml", tmp_path / "head.yaml"
    base.write_text(VALID_TEXT)
    head.write_text(_deep_topology("top", depth))
    result = run_topo("diff", str(base), str(head))
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"{head}:7:107: error[T001]" in result.stderr


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deeply_nested_saved_plan_is_refused_where_it_nests_too_deep(
    tmp_path: Path, depth: int
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"format_version": "1", "changes": [' + _nested(depth) + "]}")
    result = run_topo("apply", str(plan))
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert f"{plan}:1:" in result.stderr
    assert "nest more than 100 levels deep" in result.stderr


def test_deep_json_that_is_no_plan_is_read_as_a_topology_and_refused(tmp_path: Path) -> None:
    file = tmp_path / "deep.json"
    file.write_text("[" * 100_000)
    result = run_topo("apply", str(file))
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"{file}:1:101: error[T001]" in result.stderr


def test_an_unclosed_string_full_of_escaped_quotes_is_scanned_once(tmp_path: Path) -> None:
    """apply first asks whether a file is a saved plan; that scan was quadratic on an unclosed
    string of escaped quotes (80 KB: 38 s). A hang here is caught by the test timeout."""
    file = tmp_path / "q.json"
    file.write_text('{"format_version": "1", "changes": "' + '\\"' * 500_000)
    result = run_topo("apply", str(file), "--dry-run")
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and f"{file}:1:" in result.stderr


def test_an_unclosed_bracket_points_at_it_and_at_where_parsing_stopped(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text("version: 1\nclusters:\n  east: {bootstrap: 'h:1'\nflows: []\n")
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{file}:3:9: error[T001]: YAML syntax: this '{{' is not closed")
    assert lines[3] == f"{file}:4:1: note: the parser gave up here"
    assert lines[4] == "  4 | flows: []"


def test_notes_are_in_the_json_output_too(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text("version: 1\nclusters: [a, b\n")
    result = run_topo("validate", "--format", "json", str(file))
    document = json.loads(result.stdout)
    jsonschema.validate(document, _schema("validate.schema.json"))
    [diagnostic] = document["files"][0]["diagnostics"]
    assert (diagnostic["line"], diagnostic["column"]) == (2, 11)
    assert diagnostic["notes"] == [
        {"message": "the parser gave up here", "file": str(file), "line": 3, "column": 1}
    ]


def test_control_characters_are_located_by_line_and_column(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(VALID_TEXT.replace("version: 1", "version: 1\nname: a\x00b"))
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    assert f"{file}:2:8: error[T001]: YAML syntax: character U+0000 is not allowed" in result.stderr
    assert "position" not in result.stderr
    assert "\x00" not in result.stderr  # the line is shown with the character replaced


def test_thousands_of_duplicate_keys_are_reported_briefly(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(VALID_TEXT + "name: a\n" * 50_000)
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    headlines = [line for line in result.stderr.splitlines() if "error[T002]" in line]
    assert len(headlines) == 21
    assert "49,979 more duplicate keys from here on are not listed" in headlines[-1]


@pytest.mark.parametrize("version", ["1.0", "0x1", "+1", "01", "0o1", "true", "'1'"])
def test_only_the_integer_written_1_is_version_1(tmp_path: Path, version: str) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(VALID_TEXT.replace("version: 1", f"version: {version}"))
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    assert f"{file}:1:10: error[T004]: version {version} is not supported" in result.stderr


@pytest.mark.parametrize(
    ("old", "new"),
    [("east:", '"east\\n":'), ("version: 1", 'version: 1\nname: "ring\\n"')],
)
def test_names_may_not_end_in_a_newline(tmp_path: Path, old: str, new: str) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(VALID_TEXT.replace(old, new, 1))
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    assert "error[T104]" in result.stderr


@pytest.mark.parametrize(
    "client", ["{sasl.jaas.config: '${env:JAAS}'}", "{sasl.jaas.config: 'x required;'}"]
)
def test_validate_refuses_the_jaas_setting_plan_would_refuse(tmp_path: Path, client: str) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(
        "version: 1\nclusters:\n"
        f"  east: {{bootstrap: 'h:1', client: {client}}}\n"
        "  west: {bootstrap: 'h:2'}\nflows:\n  - mirror: {from: east, to: west}\n"
    )
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    # At the key itself, not at the cluster.
    assert f"{file}:3:37: error[T205]: cluster east: client.sasl.jaas.config is a Java" in (
        result.stderr
    )


def test_thousands_of_unknown_keys_are_reported_up_to_a_limit_then_counted() -> None:
    from topology.core.analysis import analyse
    from topology.core.schema import MAX_UNKNOWN_KEYS

    text = VALID_TEXT + "".join(f"extra{i}: 1\n" for i in range(5_000))
    unknown = [d for d in analyse(text, "t.yaml").diagnostics if d.code == "T101"]
    assert len(unknown) == MAX_UNKNOWN_KEYS + 1
    rest = 5_000 - MAX_UNKNOWN_KEYS
    assert unknown[-1].message == (
        f"{rest:,} more unknown keys in the top level from here on are not listed"
    )


def test_a_megabyte_value_is_quoted_briefly_in_its_diagnostic() -> None:
    from topology.core.analysis import analyse

    text = VALID_TEXT.replace("version: 1", "version: 1\nname: " + "x" * 1_000_000)
    [problem] = analyse(text, "t.yaml").diagnostics
    assert problem.code == "T104"
    assert "... (1,000,000 characters) is not allowed here" in problem.message
    assert len(problem.message) < 500


def test_a_file_that_is_not_utf8_is_located_at_the_bad_byte(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_bytes(b'version: 1\nclusters:\n  ea\xffst: {bootstrap: "1.2.3.4:9"}\n')
    done = run_topo("validate", str(file))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        done.stderr.strip() == f"error: {file}:3:5: not UTF-8 text (invalid start byte, byte 0xff)"
    )


VALID_PAIR = (
    "version: 1\n"
    "clusters:\n"
    '  east: {bootstrap: "1.2.3.4:9092"}\n'
    '  west: {bootstrap: "1.2.3.5:9092"}\n'
    "flows:\n"
    "  - mirror: {from: east, to: west}\n"
)


def test_a_file_starting_with_a_byte_order_mark_is_read_as_without_it(tmp_path: Path) -> None:
    file = tmp_path / "bom.yaml"
    file.write_bytes(b"\xef\xbb\xbf" + VALID_PAIR.encode())
    result = run_topo("validate", str(file))
    assert result.returncode == 0, result.stderr


def test_a_tagged_version_is_named_as_written(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(VALID_PAIR.replace("version: 1", "version: !!int 1  # tagged"))
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    assert f"{file}:1:10: error[T004]: version !!int 1 is not supported" in result.stderr


# -- secrets never reach the terminal -------------------------------------------------------

SECRETS = ("hunter2", "changeit", "s3cr3t-jaas", "pre-leak", "k3y-pem")
SECRET_TOPOLOGY = """\
version: 1
clusters:
  east:
    bootstrap: "127.0.0.1:24980"
    security:
      protocol: SASL_SSL
      sasl: {mechanism: PLAIN, username: mirror, password: hunter2}
    client:
      ssl.keystore.pasword: changeit
      sasl.jass.config: "s3cr3t-jaas"
      ssl.key.pem: |
        k3y-pem
      ssl.truststore.password: "pre-leak${env:X}"
      acks: all
  west: {bootstrap: "127.0.0.1:16340", security: {sasl: {mechanism: PLAIN, password: hunter2}}}
flows:
  - mirror: {from: east, to: west}
"""


@pytest.mark.parametrize("output", ["text", "json"])
def test_no_secret_value_or_line_holding_one_is_printed(tmp_path: Path, output: str) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(SECRET_TOPOLOGY)
    result = run_topo("validate", "--format", output, str(file))
    assert result.returncode == 1  # west's sasl with a PLAINTEXT protocol, and T204
    printed = result.stdout + result.stderr
    for secret in SECRETS:
        assert secret not in printed
    if output == "text":
        # Each finding keeps FILE:LINE:COL; T206 for the misspelled names too.
        for where in ("7:60", "9:29", "10:25", "11:20", "13:32"):
            assert f"{file}:{where}: warning[T206]" in result.stderr
        # West's T205 is not about a secret, but its line holds one: shown without the line.
        assert (
            f"{file}:15:57: error[T205]: cluster west: SASL PLAIN needs username" in result.stderr
        )
        assert " | " not in result.stderr
    else:
        document = json.loads(result.stdout)
        jsonschema.validate(document, _schema("validate.schema.json"))
        found = document["files"][0]["diagnostics"]
        assert {d["code"] for d in found if d.get("secret")} == {"T204", "T206"}
        assert all("secret" not in d for d in found if d["code"] == "T205")


def test_a_line_without_a_secret_is_still_shown(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(
        SECRET_TOPOLOGY.replace("      acks: all", "      acks: sometimes\n      x: ${env:")
    )
    result = run_topo("validate", str(file))
    assert "  15 |       x: ${env:" in result.stderr


def test_a_secret_on_a_line_yaml_cannot_parse_is_not_shown(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(SECRET_TOPOLOGY.replace("password: hunter2}", 'password: "hunter2}', 1))
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    assert "error[T001]" in result.stderr
    assert "hunter2" not in result.stderr


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_secret_is_not_printed_whatever_it_starts_with(tmp_path: Path, output: str) -> None:
    # `password: &Xy9...`, `*Xy9...`, `>Secr3t`, `[Secr3t]`, `{Secr3t`... in flow and block
    # style, some of which YAML cannot parse: no line holding one, no message quoting one.
    files = []
    for name, text in leading_cases():
        file = tmp_path / f"{name}.yaml"
        file.write_text(text)
        files.append(str(file))
    result = run_topo("validate", "--format", output, *files)
    assert result.returncode == 1
    printed = result.stdout + result.stderr
    for leaked in LEAKED:
        assert leaked not in printed
    if output == "text":
        assert "Traceback" not in result.stderr
        assert f"{files[0]}:5:" in result.stderr  # located all the same
    else:
        document = json.loads(result.stdout)
        jsonschema.validate(document, _schema("validate.schema.json"))
        assert all(report["diagnostics"] for report in document["files"][:12])
