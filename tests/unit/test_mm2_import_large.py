"""`topo import mm2` on big or hostile files: linear time, bounded output, errors where they are.

A 10 MB line, or 200,000 lines, once ran for minutes (per-character Python in the properties
reader, ruamel's emitter); messages quoted megabyte values and the header listed every dropped
name. No timed assertion here: pytest-timeout stops a hang, and benchmarks/import_large.py
measures (docs/benchmarks.md records its numbers).
"""

from pathlib import Path

from tests.helpers import run_topo
from topology.core.analysis import analyse
from topology.core.diagnostics import Severity, error
from topology.core.mm2 import import_check, properties, yaml_out
from topology.core.mm2.import_context import SHOWN_PER_CODE, brief, folded
from topology.core.mm2.import_header import header
from topology.core.mm2.importer import import_properties

FLOW = (
    "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\n"
    "a->b.enabled = true\n"
)
MEGABYTES = 10_000_000


def imported_text(text: str) -> str:
    result = import_properties(text, "mm2.properties")
    assert result.data is not None, [d.headline()[:200] for d in result.diagnostics]
    return yaml_out.render(result.data, header(result, "mm2.properties"))


def test_a_ten_megabyte_line_is_read_in_one_pass() -> None:
    entries, problems = properties.parse(FLOW + "a.client.id = " + "x" * MEGABYTES + "\n")
    assert problems == [] and entries[-1].value == "x" * MEGABYTES


def test_a_ten_megabyte_key_is_named_briefly_everywhere() -> None:
    result = import_properties(FLOW + "k" * MEGABYTES + " = 1\n", "mm2.properties")
    assert max(len(d.message) for d in result.diagnostics) < 300
    text = yaml_out.render(result.data or {}, header(result, "mm2.properties"))
    assert len(text) < 2000  # the header names it by its start and length


def test_a_ten_megabyte_topic_list_imports() -> None:
    topics = ", ".join(f"topic{i}" for i in range(1_000_000))
    text = imported_text(FLOW + f"a->b.topics = {topics}\n")
    assert "      - topic999999\n" in text


def test_two_hundred_thousand_lines_import_and_fold_their_warnings() -> None:
    lines = "".join(f"a->b.unknown{i} = {i}\n" for i in range(200_000))
    result = import_properties(FLOW + lines, "mm2.properties")
    assert result.data is not None and len(result.diagnostics) == 200_000
    shown = folded(result.diagnostics)
    assert len(shown) == SHOWN_PER_CODE + 1
    assert shown[-1].message.startswith(f"{200_000 - SHOWN_PER_CODE} more warnings like the M010")
    assert len(header(result, "mm2.properties")) < 50


def test_two_hundred_thousand_continuation_lines_import() -> None:
    topics = "".join(f", \\\n    t{i}" for i in range(200_000))
    text = imported_text(FLOW + f"a->b.topics = t{topics}\n")
    assert "      - t199999\n" in text


def test_a_line_of_backslashes_is_read_in_one_pass() -> None:
    entries, _ = properties.parse("k = " + "\\\\" * 1_000_000 + "\n")
    assert entries[0].value == "\\" * 1_000_000


def test_brief_cuts_long_runs_and_long_messages() -> None:
    assert brief("short message") == "short message"
    cut = brief("value '" + "v" * 5000 + "' is bad")
    assert cut.startswith("value '" + "v" * 53 + "...(5008 characters) is bad") or len(cut) < 200
    assert len(brief("word " * 10_000)) < 1100


def test_folding_keeps_every_error_kind_and_counts_the_rest() -> None:
    result = import_properties(
        FLOW + "".join(f"a->b.replication.factor{i} = x\n" for i in range(150)), "m.properties"
    )
    shown = folded(result.diagnostics)
    assert len(shown) == SHOWN_PER_CODE + 1
    assert all(d.severity is Severity.WARNING for d in shown)
    assert "line 105 to line 154" in shown[-1].message


# -- the command ----------------------------------------------------------------------------


def test_cli_never_echoes_a_megabyte_line(tmp_path: Path) -> None:
    source = tmp_path / "mm2.properties"
    source.write_text(FLOW + "a->b.replication.factor = " + "9" * 1_000_000 + "\n")
    done = run_topo("import", "mm2", str(source))
    assert done.returncode == 1
    assert f"{source}:5:1: error[M011]" in done.stderr
    assert len(done.stderr) < 2000 and "Traceback" not in done.stderr


def test_cli_shows_problems_of_the_imported_topology_at_their_properties(tmp_path: Path) -> None:
    # Identity a->b, a->c and c->b: MM2 writes a's records to b twice; topo refuses that.
    source = tmp_path / "mm2.properties"
    source.write_text(
        "clusters = a, b, c\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\n"
        "c.bootstrap.servers = c:9092\nreplication.policy.class = IdentityReplicationPolicy\n"
        "a->b.enabled = true\na->c.enabled = true\nc->b.enabled = true\n"
    )
    done = run_topo("import", "mm2", str(source))
    assert done.returncode == 1
    assert f"{source}:6:1: error[T304]" in done.stderr
    assert "(imported topology, flows[0]" in done.stderr
    assert "6 | a->b.enabled = true" in done.stderr
    assert "<imported topology>" not in done.stderr
    # Written to a file, the problem is shown in that file, which the user can open.
    out = tmp_path / "out.yaml"
    done = run_topo("import", "mm2", str(source), "-o", str(out))
    assert done.returncode == 1 and f"{out}:" in done.stderr and "error[T304]" in done.stderr


def test_problems_anywhere_in_the_topology_move_to_their_property() -> None:
    text = FLOW + "a.linger.ms = 5\nreplication.factor = 2\na->b.topics = orders\n"
    result = import_properties(text, "mm2.properties")
    assert result.data is not None
    document = analyse(yaml_out.render(result.data), "<imported topology>").document
    expected = {  # path in the topology -> line of mm2.properties
        ("clusters", "b", "bootstrap"): 3,
        ("clusters", "a", "client", "linger.ms"): 5,
        ("defaults", "replication_factor"): 6,
        ("flows", 0, "topics", "include", 0): 7,
        ("flows", 0, "mirror"): 4,
        ("version",): 1,
    }
    for path, line in expected.items():
        problem = error("T104", "bad", document.span(path))
        (moved,) = import_check.in_properties([problem], document, result.origins, "m.props")
        assert (moved.span.file, moved.span.line) == ("m.props", line), path
        assert moved.message.startswith("bad (imported topology")


def test_non_ascii_digits_and_huge_numbers_stay_text() -> None:
    text = FLOW + "a.linger.ms = \u00b2\na.batch.size = " + "9" * 5000 + "\n"
    client = import_properties(text, "m").data["clusters"]["a"]["client"]  # type: ignore[index]
    assert client == {"linger.ms": "\u00b2", "batch.size": "9" * 5000}
