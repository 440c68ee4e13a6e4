"""topology.core.source: YAML text to plain data, with the place of every key and value."""

from collections.abc import Callable
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.parser import Parser

from topology.core import source
from topology.core.diagnostics import Note, Span
from topology.core.source import Document, parse

FILE = "t.yaml"


def _parsed(text: str) -> Document:
    document, found = parse(text, FILE)
    assert found == []
    return document


def at(line: int, column: int) -> Span:
    return Span(FILE, line, column)


def test_keys_and_values_are_located_where_an_editor_shows_them() -> None:
    document = _parsed('version: 1\nclusters:\n  east:\n    bootstrap: "h:1"\n')
    assert document.data == {"version": 1, "clusters": {"east": {"bootstrap": "h:1"}}}
    assert document.keys[("version",)] == at(1, 1)
    assert document.values[("version",)] == at(1, 10)
    assert document.keys[("clusters", "east")] == at(3, 3)
    assert document.values[("clusters", "east")] == at(4, 5)  # a block mapping starts at its key
    assert document.keys[("clusters", "east", "bootstrap")] == at(4, 5)
    assert document.values[("clusters", "east", "bootstrap")] == at(4, 16)  # the opening quote


def test_items_of_flow_and_block_lists_are_located_by_index() -> None:
    text = "flows:\n  - active-active: [east, west]\n  - aggregate:\n      from:\n        - a\n"
    text += "        - b\n"
    document = _parsed(text)
    assert document.data["flows"][1] == {"aggregate": {"from": ["a", "b"]}}
    assert document.values[("flows", 0)] == at(2, 5)
    assert document.values[("flows", 0, "active-active", 0)] == at(2, 21)
    assert document.values[("flows", 0, "active-active", 1)] == at(2, 27)
    assert document.keys[("flows", 1, "aggregate", "from")] == at(4, 7)
    assert document.values[("flows", 1, "aggregate", "from", 1)] == at(6, 11)


def test_a_path_without_a_position_falls_back_to_its_closest_ancestor() -> None:
    document = _parsed("clusters:\n  east: {bootstrap: x}\n")
    assert document.span(("clusters", "east", "security", "protocol")) == at(2, 9)
    assert document.span(("clusters", "east", "security"), key=True) == at(2, 3)
    assert document.span(("nothing",)) == at(1, 1)
    assert document.span(("clusters",)) == at(2, 3)  # the value of `clusters:` starts at east


def test_scalars_keep_yaml_12_types_and_other_tags_stay_the_text_written() -> None:
    text = "a: 2024-01-01\nb: yes\nc: 0o17\nd: ~\ne: 1.5\nf: !custom x\ng: '1'\nh: true\n"
    assert _parsed(text).data == {
        "a": "2024-01-01",  # a timestamp would not be a string the schema accepts
        "b": "yes",
        "c": 15,
        "d": None,
        "e": 1.5,
        "f": "x",
        "g": "1",
        "h": True,
    }


MERGE = """\
base: &base
  bootstrap: h:1
  client: {acks: all}
east:
  <<: *base
  bootstrap: h:2
west:
  bootstrap: h:3
  <<: [{bootstrap: h:9, linger: 5}, *base]
"""


def test_merge_keys_copy_the_anchor_and_explicit_keys_win() -> None:
    data = _parsed(MERGE).data
    assert data["east"] == {"bootstrap": "h:2", "client": {"acks": "all"}}
    # Of several merged mappings the earlier wins, and explicit keys beat them all.
    assert data["west"] == {"bootstrap": "h:3", "linger": 5, "client": {"acks": "all"}}


def test_merged_values_are_located_at_the_anchor_and_explicit_ones_where_written() -> None:
    document = _parsed(MERGE)
    assert document.keys[("east", "bootstrap")] == at(6, 3)
    assert document.values[("east", "bootstrap")] == at(6, 14)  # h:2, not the anchor's h:1
    assert document.keys[("west", "bootstrap")] == at(8, 3)  # explicit before the merge too
    assert document.values[("east", "client", "acks")] == at(3, 18)
    assert document.keys[("west", "linger")] == at(9, 25)


def test_a_merge_of_something_not_a_mapping_is_a_type_error() -> None:
    document, found = parse("a: {<<: [x], b: 1}\n", FILE)
    assert document.data == {"a": {"b": 1}}
    assert [(d.code, d.span) for d in found] == [("T103", at(1, 10))]


def test_duplicate_keys_are_each_reported_with_the_line_of_the_first() -> None:
    text = (
        "clusters:\n  east: {bootstrap: a:1}\n  west: {bootstrap: b:1}\n  east: {bootstrap: c:1}\n"
    )
    text += "  east: {bootstrap: d:1}\n"
    document, found = parse(text, FILE)
    assert document.data["clusters"]["east"] == {"bootstrap": "a:1"}  # the first is kept
    assert [(d.code, d.span) for d in found] == [("T002", at(4, 3)), ("T002", at(5, 3))]
    assert all("duplicate key 'east' (first at line 2)" in d.message for d in found)
    assert document.keys[("clusters", "east")] == at(2, 3)


def test_a_syntax_error_is_one_diagnostic_at_the_offending_character() -> None:
    document, found = parse("version: 1\nflows: [a, b]]\n", FILE)
    assert document.data is None
    assert [(d.code, d.span, d.notes) for d in found] == [("T001", at(2, 14), ())]
    assert found[0].message.startswith("YAML syntax: ")


def test_an_unclosed_bracket_is_reported_at_the_bracket_with_a_note_where_parsing_stopped() -> None:
    document, found = parse("version: 1\nflows: [a, b\nclusters: {}\n", FILE)
    assert document.data is None
    assert [(d.code, d.span) for d in found] == [("T001", at(2, 8))]
    assert found[0].message.startswith("YAML syntax: this '[' is not closed before line 3")
    assert found[0].notes == (Note(at(3, 9), "the parser gave up here"),)


@pytest.mark.parametrize(("text", "opener"), [("a: [1,\n", "["), ("a: [1, {b:\n", "{")])
def test_a_file_ending_inside_brackets_points_at_the_innermost_open_one(
    text: str, opener: str
) -> None:
    _, found = parse(text, FILE)
    assert [(d.span, d.notes[0].span) for d in found] == [
        (at(1, text.rindex(opener) + 1), at(2, 1))
    ]
    assert f"this '{opener}' is not closed before the end of the file" in found[0].message


def test_an_unclosed_brace_inside_a_list_points_at_the_brace() -> None:
    _, found = parse("a: [1, {b: 2]\n", FILE)
    assert [(d.span, d.notes[0].span) for d in found] == [(at(1, 8), at(1, 13))]
    assert "this '{' is not closed" in found[0].message


def test_a_bad_indent_is_located_at_the_colon_it_makes_illegal() -> None:
    _, found = parse("a: 1\n  b: 2\n", FILE)
    assert [(d.code, d.span) for d in found] == [("T001", at(2, 4))]
    assert "mapping values are not allowed here" in found[0].message


def test_an_unclosed_quote_is_reported_at_the_quote_and_the_end_of_the_file() -> None:
    for quote in "\"'":
        _, found = parse(f"a: {quote}x\nb: 1\n", FILE)
        assert [(d.code, d.span) for d in found] == [("T001", at(1, 4))]
        assert "this quote is not closed before the end of the file" in found[0].message
        assert found[0].notes == (Note(at(3, 1), "the parser gave up here"),)


def test_a_bad_escape_in_a_closed_quote_is_reported_where_it_is_without_a_note() -> None:
    _, found = parse('x: "\\q"\n', FILE)
    assert [(d.span, d.notes) for d in found] == [(at(1, 6), ())]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("a: 1\nb: x\x00y\n", at(2, 5)),
        ("a: 1\r\nb: \x07\n", at(2, 4)),
        ("a: '\x1b[31m'\n", at(1, 5)),
        ("\x00", at(1, 1)),
    ],
)
def test_a_forbidden_character_is_located_by_line_and_column(text: str, where: Span) -> None:
    _, found = parse(text, FILE)
    assert [(d.code, d.span) for d in found] == [("T001", where)]
    assert "position" not in found[0].message
    assert "is not allowed in YAML text" in found[0].message


@pytest.mark.parametrize("depth", [101, 1_000, 100_000])
@pytest.mark.parametrize(
    ("opening", "make"),
    [
        ("[", lambda n: "a: " + "[" * n + "]" * n + "\n"),
        ("{", lambda n: "a: " + "{x: " * n + "1" + "}" * n + "\n"),
        ("- ", lambda n: "- " * n + "x\n"),
        ("block", lambda n: "".join(" " * i + f"k{i}:\n" for i in range(n)) + " " * n + "v\n"),
    ],
)
def test_nesting_deeper_than_the_limit_is_one_located_error_at_any_depth(
    opening: str, make: Callable[[int], str], depth: int
) -> None:
    if opening == "block" and depth > 1_000:
        depth = 1_000  # indentation makes the file quadratic in its depth
    document, found = parse(make(depth), FILE)
    assert document.data is None
    assert [d.code for d in found] == ["T001"]
    assert f"more than {source.MAX_DEPTH} levels deep" in found[0].message


def test_nesting_up_to_the_limit_is_read() -> None:
    depth = source.MAX_DEPTH
    document = _parsed("[" * depth + "]" * depth)
    value = document.data
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


def test_many_duplicate_keys_are_reported_up_to_a_limit_then_counted() -> None:
    text = "a: 1\n" * 5_000
    document, found = parse(text, FILE)
    assert document.data == {"a": 1}
    limit = source.MAX_DUPLICATE_REPORTS
    assert [d.code for d in found] == ["T002"] * (limit + 1)
    assert found[-1].span == at(limit + 2, 1)
    assert found[-1].message.startswith(f"{5_000 - 1 - limit:,} more duplicate keys")


def test_more_than_one_document_is_a_located_error() -> None:
    _, found = parse("a: 1\n---\nb: 2\n", FILE)
    assert [(d.code, d.span) for d in found] == [("T001", at(2, 1))]


def test_written_gives_the_scalar_as_spelled() -> None:
    document = _parsed("version: 0x1\nother: {v: +1, w: 1.0}\n")
    assert document.written(("version",)) == "0x1"
    assert document.written(("other", "v")) == "+1"
    assert document.written(("other", "w")) == "1.0"
    assert document.written(("missing",)) == ""


def test_an_empty_document_is_none_without_a_diagnostic() -> None:
    for text in ("", "\n\n", "# only a comment\n"):
        document, found = parse(text, FILE)
        assert (document.data, found) == (None, [])
        assert document.span(("anything",)) == at(1, 1)
    document, found = parse("---\n", FILE)  # an explicit document holding one null
    assert (document.data, found) == (None, [])
    assert document.span(()) == at(2, 1)


def test_line_gives_the_text_of_a_line_and_nothing_outside_the_file() -> None:
    document = _parsed("a: 1\nb: 2\n")
    assert [document.line(n) for n in (0, 1, 2, 3)] == ["", "a: 1", "b: 2", ""]


# -- the C parser and the pure one ------------------------------------------------------------

GOLDEN = Path(__file__).parent.parent / "golden"
_HAS_C_PARSER = YAML(typ="safe", pure=False).Parser is not Parser
needs_c_parser = pytest.mark.skipif(not _HAS_C_PARSER, reason="ruamel.yaml.clib not installed")


def _pure_only(monkeypatch: pytest.MonkeyPatch) -> None:
    real = YAML
    monkeypatch.setattr(source, "YAML", lambda typ, pure: real(typ=typ, pure=True))


def _everything(text: str) -> tuple[object, ...]:
    document, found = parse(text, FILE)
    return document.data, dict(document.values), dict(document.keys), found


@needs_c_parser
@pytest.mark.parametrize("case", sorted(p.name for p in GOLDEN.iterdir()))
def test_the_c_parser_builds_what_the_pure_one_builds(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (GOLDEN / case / "topology.yaml").read_text(encoding="utf-8") + MERGE
    fast = _everything(text)
    _pure_only(monkeypatch)
    assert _everything(text) == fast


@needs_c_parser
def test_an_empty_value_is_located_after_its_colon_not_at_the_next_key() -> None:
    document = _parsed("clusters:\n\n  # none yet\nflows: []\n")
    assert document.values[("clusters",)] == at(1, 10)


def test_numbers_read_without_the_constructor_equal_what_it_reads() -> None:
    text = "a: [0, -5, +7, 007, 1_000, 0x1f, 0o17, 12345678901234567890, -0, 1.5, .inf, true, ~]\n"
    fast = _parsed(text).data
    assert fast == YAML(typ="safe", pure=True).load(text)


@needs_c_parser
def test_a_large_file_is_not_parsed_twice_and_libyaml_words_still_point_at_the_opener(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(source, "_PURE_MESSAGES_UP_TO", 10)
    _, found = parse("version: 1\nflows: [a, b\nclusters: {}\n", FILE)
    assert [(d.code, d.span) for d in found] == [("T001", at(2, 8))]
    assert "this '[' is not closed before line 3 (did not find expected" in found[0].message
    assert found[0].notes == (Note(at(3, 9), "the parser gave up here"),)


def test_a_billion_laughs_is_refused_at_the_alias_that_crosses_the_limit_before_building() -> None:
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        text += f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]\n"
    document, found = parse(text, FILE)
    assert document.data is None
    assert [(d.code, d.span) for d in found] == [("T001", at(6, 36))]  # 10^6 values reached
    assert f"more than {source.MAX_VALUES:,} values" in found[0].message


def test_aliases_below_the_limit_are_copied() -> None:
    document = _parsed("a: &a {x: 1}\nb: [*a, *a]\n")
    assert document.data == {"a": {"x": 1}, "b": [{"x": 1}, {"x": 1}]}


@pytest.mark.parametrize("text", ["a: " + "[" * 100_000, "- " * 100_000 + "x\n"])
def test_the_pure_parser_alone_also_refuses_deep_nesting(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pure_only(monkeypatch)  # as without ruamel.yaml.clib
    document, found = parse(text, FILE)
    assert document.data is None
    assert [d.code for d in found] == ["T001"]
    assert f"more than {source.MAX_DEPTH} levels deep" in found[0].message
