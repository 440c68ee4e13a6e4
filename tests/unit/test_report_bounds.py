"""A file with 100,000 problems costs about what its size does, not what its problems would cost
one by one: a report lists the first of each severity and counts the rest, the schema check
stops after a fixed number of problems, and finding the lines that hold secrets is one pass.
Work is counted here, never timed (issue 36, item 2)."""

import gc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import run_topo
from tests.unit.test_secrets_shown import TOPOLOGY, leading_cases
from topology.core import collector, resolve, schema, secrets
from topology.core.analysis import analyse
from topology.core.diagnostics import (
    ERROR_LIMIT,
    Diagnostic,
    Severity,
    Span,
    error,
    in_file_order,
    warning,
)
from topology.core.render import diagnostics as render
from topology.core.source import Document, parse

GOLDEN = Path(__file__).parent.parent / "golden"
SCHEMAS = Path(__file__).parent.parent.parent / "schemas"
LIMIT = render.SHOWN_PER_SEVERITY


def _counted(function: Callable[..., Any], calls: list[object]) -> Callable[..., Any]:
    """`function`, noting the first argument of each call in `calls`."""

    def counting(*arguments: Any) -> Any:
        calls.append(arguments[0])
        return function(*arguments)

    return counting


def _clusters_of_the_wrong_type(count: int) -> str:
    """`clusters` whose every entry is a number: one T103 each, were they all reported."""
    return "version: 1\nclusters:\n" + "".join(f"  c{i}: 5\n" for i in range(count)) + "flows: []\n"


def test_the_text_report_lists_the_first_errors_exactly_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(_clusters_of_the_wrong_type(5_000))
    result = run_topo("validate", str(file))
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "error[T103]" in line]
    assert len(errors) == LIMIT
    assert (
        errors[0] == f"{file}:3:7: error[T103]: clusters.c0 must be a mapping, not a whole number"
    )
    assert errors[-1].startswith(f"{file}:{LIMIT + 2}:")
    stopped = f"{file}:{schema.MAX_PROBLEMS + 3}:"
    assert f"{stopped}" in result.stderr and "warning[T309]: stopped checking" in result.stderr
    more = schema.MAX_PROBLEMS - LIMIT
    assert result.stderr.splitlines()[-1] == f"... and {more} more errors not shown"
    assert result.stdout.strip() == f"{file}: {schema.MAX_PROBLEMS} errors, 1 warning"


def test_json_says_how_many_it_left_out(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(_clusters_of_the_wrong_type(5_000))
    result = run_topo("validate", "--format", "json", str(file))
    assert result.returncode == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads((SCHEMAS / "validate.schema.json").read_text()))
    [report] = document["files"]
    assert [d["code"] for d in report["diagnostics"]] == ["T103"] * LIMIT + ["T309"]
    assert report["omitted"] == {"errors": schema.MAX_PROBLEMS - LIMIT, "warnings": 0}
    assert report["diagnostics"][0]["line"] == 3 and report["diagnostics"][0]["column"] == 7


def test_a_report_with_nothing_left_out_has_no_count() -> None:
    analysis = analyse(_clusters_of_the_wrong_type(3), "t.yaml")
    assert render.listed(analysis.diagnostics).left_out() is None
    assert "omitted" not in render.as_json(analysis.document, analysis.diagnostics)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["error", "warning"]), st.sampled_from(["T101", "T309", "T310"])),
        max_size=300,
    ),
    st.integers(min_value=0, max_value=60),
)
def test_listed_keeps_the_first_of_each_severity_and_every_limit(
    kinds: list[tuple[str, str]], limit: int
) -> None:
    made = [
        (error if severity == "error" else warning)(code, f"problem {i}", Span("t", i + 1, 1))
        for i, (severity, code) in enumerate(kinds)
    ]
    chosen = render.listed(made, limit)
    assert [d for d in made if d in chosen.shown] == list(chosen.shown)  # in the order given
    for severity, left in (
        (Severity.ERROR, chosen.errors_left_out),
        (Severity.WARNING, chosen.warnings_left_out),
    ):
        of_it = [d for d in made if d.severity is severity]
        shown = [d for d in chosen.shown if d.severity is severity]
        assert len(shown) + left == len(of_it)
        assert shown[: min(limit, len(of_it))] == of_it[:limit]
        assert all(d in shown for d in of_it if d.code in ("T309", "T310"))


def test_the_schema_check_explains_a_fixed_number_of_problems_however_many_there_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    explained: list[object] = []
    monkeypatch.setattr(schema, "_explain", _counted(schema._explain, explained))
    for count in (schema.MAX_PROBLEMS + 1, 10 * schema.MAX_PROBLEMS, 50 * schema.MAX_PROBLEMS):
        explained.clear()
        found = schema.check(parse(_clusters_of_the_wrong_type(count), "t.yaml")[0])
        assert len(explained) == schema.MAX_PROBLEMS
        assert [d.code for d in found] == ["T103"] * schema.MAX_PROBLEMS + ["T309"]
        # The file's first problems, in its order, the same on every run.
        assert [d.span.line for d in found[:-1]] == list(range(3, schema.MAX_PROBLEMS + 3))


def test_fewer_problems_than_the_limit_are_all_reported_without_t309() -> None:
    found = schema.check(parse(_clusters_of_the_wrong_type(schema.MAX_PROBLEMS), "t.yaml")[0])
    assert [d.code for d in found] == ["T103"] * schema.MAX_PROBLEMS


def test_bad_cluster_names_past_the_good_ones_are_still_found() -> None:
    names = [f"c{i}" for i in range(1_000)] + ["bad.name"]
    text = "version: 1\nclusters:\n" + "".join(f"  {n}: {{bootstrap: 'h:1'}}\n" for n in names)
    found = schema.check(parse(text + "flows: []\n", "t.yaml")[0])
    assert [(d.code, d.span.line) for d in found] == [("T104", 1_003)]


def test_unknown_keys_are_counted_past_the_first_and_the_count_is_shown() -> None:
    text = "version: 1\nclusters: {}\n" + "".join(f"extra{i}: 1\n" for i in range(10_000))
    analysis = analyse(text, "t.yaml")
    chosen = render.listed(analysis.diagnostics)
    assert chosen.left_out() is None  # the per-mapping limit is below the report's
    assert chosen.shown[-1].message == (
        f"{10_000 - schema.MAX_UNKNOWN_KEYS:,} more unknown keys in the top level from here on "
        "are not listed"
    )


def test_resolving_stops_at_the_error_limit_and_says_where(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolved: list[object] = []
    monkeypatch.setattr(
        resolve._Resolver, "_cluster", _counted(resolve._Resolver._cluster, resolved)
    )
    malformed = "".join(f"  c{i}: {{bootstrap: nope}}\n" for i in range(3 * ERROR_LIMIT))
    text = f"version: 1\nclusters:\n{malformed}flows:\n  - mirror: {{from: c0, to: c1}}\n"
    analysis = analyse(text, "t.yaml")
    assert len(resolved) == ERROR_LIMIT  # the clusters after the limit are not resolved
    assert [d.code for d in analysis.diagnostics] == ["T203"] * ERROR_LIMIT + ["T309"]
    stopped = analysis.diagnostics[-1]
    assert (stopped.span.line, stopped.span.column) == (ERROR_LIMIT + 3, 3)  # its key
    assert stopped.message.startswith(f"stopped after {ERROR_LIMIT} errors: the clusters")
    assert not analysis.ok and analysis.graph is None  # no graph of a part of the file
    # One error fewer than the limit: everything is resolved, and the graph built.
    fewer = analyse(
        "version: 1\nclusters:\n"
        + "".join(f"  c{i}: {{bootstrap: nope}}\n" for i in range(ERROR_LIMIT - 1))
        + "flows:\n  - mirror: {from: c0, to: c1}\n",
        "t.yaml",
    )
    assert "T309" not in {d.code for d in fewer.diagnostics} and fewer.graph is not None


def test_a_file_with_the_limits_errors_in_its_shape_is_not_resolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(*_: object) -> None:
        raise AssertionError("resolved")

    monkeypatch.setattr(resolve, "resolve", never)
    kindless = "".join("  - {topics: {include: [a]}}\n" for _ in range(300))  # T105 each
    analysis = analyse(
        f"version: 1\nclusters: {{a: {{bootstrap: 'h:1'}}}}\nflows:\n{kindless}", "t"
    )
    codes = [d.code for d in analysis.diagnostics]
    assert codes.count("T105") == 300 and codes[0] == "T309"  # said first, at the file's start
    assert analysis.diagnostics[0].span.line == 1 and analysis.topology is None
    assert analysis.diagnostics[0].message.startswith("stopped after 300 errors in the file's")


def test_finding_secret_lines_asks_about_each_name_once_and_only_names_that_may_be_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[object] = []
    monkeypatch.setattr(secrets, "is_secret_key", _counted(secrets.is_secret_key, asked))
    keys = "".join(f"  extra{i}: {{bootstrap: 'h:1', pasword: x{i}}}\n" for i in range(5_000))
    document, _ = parse("version: 1\nclusters:\n" + keys, "t.yaml")
    hidden = render._hidden(document)
    assert asked == ["pasword"]
    assert sorted(hidden) == list(range(3, 5_004))  # the last secret runs to the end


def test_a_secret_list_under_each_of_many_keys_is_found_in_one_pass_over_the_positions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from topology.core.source import Spans

    passes: list[object] = []
    monkeypatch.setattr(Spans, "lines", _counted(Spans.lines, passes))
    text = "".join(f"k{i}:\n  password:\n    - s{i}\n" for i in range(2_000))
    hidden = render._hidden(parse(text, "t.yaml")[0])
    assert len(passes) <= 5  # the values, then keys and values twice: not one per secret
    # each list (its position is its first item's), and the last runs to the end
    assert sorted(hidden) == [*range(3, 6_001, 3), 6_001]


def _hidden_both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    document, _ = parse(text, "t.yaml")
    render._cached = None
    every_line = render._hidden(document)
    with monkeypatch.context() as patched:
        patched.setattr(render, "_MANY_LINES", 0)  # the pass that looks only where names are
        render._cached = None
        found = render._hidden(document)
    render._cached = None
    return every_line, found


CASES = [
    TOPOLOGY,
    *(text for _, text in leading_cases()),
    *(p.read_text(encoding="utf-8") for p in sorted(GOLDEN.glob("*/topology.yaml"))),
]


@pytest.mark.parametrize("text", CASES)
def test_the_quick_pass_hides_the_lines_the_full_one_does(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every_line, quick = _hidden_both_ways(text, monkeypatch)
    assert quick == every_line


FRAGMENTS = [
    "a: 1",
    "password: hunter2",
    "  password: |",
    "    s3cret",
    "  passWord: ${env:X}",
    "client: {ssl.keystore.pasword: changeit, acks: all}",
    "  - {sasl.jaas.config: x}",
    "",
    "    deeper",
    "ssl.key.pem: >",
    "user.info: 'u:p'",
    "'password': x",
    "- token: t",
    "b:",
    "  c: [1, 2]",
    "KEY: v",
    "\tx: 1",
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(FRAGMENTS), st.sampled_from(["\n", "\r\n", "\r", "\u2028"])),
        max_size=40,
    )
)
def test_the_quick_pass_hides_what_the_full_one_does_on_any_text(
    lines: list[tuple[str, str]],
) -> None:
    text = "".join(line + end for line, end in lines)
    with pytest.MonkeyPatch.context() as monkeypatch:
        every_line, quick = _hidden_both_ways(text, monkeypatch)
    assert quick == every_line


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]),
            st.integers(1, 5),
            st.integers(1, 5),
            st.sampled_from(["T101", "T201"]),
        ),
        max_size=30,
    )
)
def test_file_order_is_the_order_of_the_places(places: list[tuple[str, int, int, str]]) -> None:
    made = [error(code, "m", Span(f, line, column)) for f, line, column, code in places]
    ordered = in_file_order(made)
    assert [(d.span, d.code) for d in ordered] == sorted({(d.span, d.code) for d in made})


def test_the_collector_is_paused_during_an_analysis_and_as_before_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []
    check = schema.check

    def checked(document: Document) -> list[Diagnostic]:
        seen.append(gc.isenabled())
        return check(document)

    monkeypatch.setattr(schema, "check", checked)
    assert gc.isenabled()
    analyse(TOPOLOGY, "t.yaml")
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        analyse(TOPOLOGY, "t.yaml")
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError), collector.paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_positions_read_as_spans() -> None:
    document, _ = parse("a: [1, 2]\nb: {c: x}\n", "t.yaml")
    assert document.values[("a", 1)] == Span("t.yaml", 1, 8)
    assert document.keys.get(("b", "c")) == Span("t.yaml", 2, 5)
    assert document.values.get(("z",), "none") == "none"
    assert ("b", "c") in document.values and ("z",) not in document.values
    assert dict(document.values.lines())[("b", "c")] == 2
    assert len(dict(document.values)) == len(document.values) == 6
