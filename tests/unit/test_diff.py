"""`topo diff`: semantic comparison, its three renderings (snapshots) and its exit codes."""

import json
from pathlib import Path

import jsonschema
import pytest
from syrupy.assertion import SnapshotAssertion

from tests.helpers import run_topo
from topology.core.analysis import analyse
from topology.core.topology_diff import diff

CASES = Path(__file__).parent.parent / "diff"
SCHEMA = json.loads(
    (Path(__file__).parent.parent.parent / "schemas" / "diff.schema.json").read_text()
)


def _files(case: str) -> tuple[str, str]:
    return str(CASES / case / "base.yaml"), str(CASES / case / "head.yaml")


def _diff(case: str) -> dict[str, object]:
    base, head = (analyse(Path(f).read_text(), Path(f).name) for f in _files(case))
    return diff(base, head).to_dict()


def test_rewriting_two_mirrors_as_active_active_is_no_change() -> None:
    data = _diff("pair-to-mesh")
    assert data["changed"] is False
    result = run_topo("diff", *_files("pair-to-mesh"))
    assert result.returncode == 0, result.stderr
    assert "No changes" in result.stdout


def test_naming_change_is_breaking_and_filters_are_judged() -> None:
    data = _diff("widen-and-rename")
    edges = {e["edge"]: e for e in data["edges"]}  # type: ignore[attr-defined]
    assert edges["west->central"]["breaking"] is True
    assert [c["effect"] for c in edges["east->west"]["changes"]] == ["widened"]
    assert edges["east->central"]["action"] == "add"
    topics = {t["cluster"]: t for t in data["topics"]}  # type: ignore[attr-defined]
    assert topics["central"] == {
        "cluster": "central",
        "added": ["clicks"],
        "removed": ["west.clicks"],
    }
    assert any("T304" in p for p in data["problems_introduced"])  # type: ignore[attr-defined]


def test_narrowing_removal_and_masked_secrets() -> None:
    data = _diff("security-and-removal")
    edges = {e["edge"]: e for e in data["edges"]}  # type: ignore[attr-defined]
    effects = {c["field"]: c["effect"] for c in edges["east->west"]["changes"]}
    assert effects == {"topics": "narrowed", "delivery": "changed", "filter": "widened"}
    assert edges["east->dr"]["action"] == "remove"
    assert "plain-text-oops" not in json.dumps(data)
    east = next(c for c in data["clusters"] if c["cluster"] == "east")  # type: ignore[attr-defined]
    password = next(c for c in east["changes"] if c["field"] == "security.sasl.password")
    assert password["before"] == "${env:EAST_PASSWORD}"
    assert password["after"] == "(inline secret)"
    assert "15" not in json.dumps(password)  # not even its length


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir()))
@pytest.mark.parametrize("output", ["text", "markdown", "json"])
def test_renderings(case: str, output: str, snapshot: SnapshotAssertion) -> None:
    base, head = _files(case)
    result = run_topo("diff", "--format", output, base, head)
    assert result.returncode in (0, 1, 2), result.stderr
    assert "Traceback" not in result.stderr
    if output == "json":
        jsonschema.validate(json.loads(result.stdout), SCHEMA)
    assert result.stdout.replace(str(CASES), "CASES") == snapshot


def test_exit_codes() -> None:
    assert run_topo("diff", *_files("security-and-removal")).returncode == 2
    assert run_topo("diff", *_files("widen-and-rename")).returncode == 1  # head has an error
    base, _ = _files("pair-to-mesh")
    broken = str(Path(__file__).parent.parent / "golden" / "T001-yaml-syntax" / "topology.yaml")
    result = run_topo("diff", base, broken)
    assert result.returncode == 1
    assert "error[T001]" in result.stderr


def test_an_inline_secret_is_never_in_its_wrappers_text() -> None:
    from topology.core.topology_diff import _InlineSecret

    assert "hunter2" not in repr(_InlineSecret("hunter2")) + str(_InlineSecret("hunter2"))
    assert _InlineSecret("a") != _InlineSecret("b")  # a changed secret is still a change


def test_a_secret_written_as_a_number_is_masked_too(tmp_path: Path) -> None:
    texts = {}
    for name, value in (("base", "12345"), ("head", "67890")):
        texts[name] = tmp_path / f"{name}.yaml"
        texts[name].write_text(
            "version: 1\nclusters:\n"
            f"  a: {{bootstrap: 'a:9092', client: {{ssl.key.password: {value}}}}}\n"
            "  b: {bootstrap: 'b:9092'}\nflows:\n  - mirror: {from: a, to: b}\n"
        )
    result = run_topo("diff", "--format", "json", str(texts["base"]), str(texts["head"]))
    assert "12345" not in result.stdout and "67890" not in result.stdout, result.stdout
    assert "(inline secret)" in result.stdout
