"""The .properties reader follows java.util.Properties.load; the writer is its inverse."""

from hypothesis import given
from hypothesis import strategies as st

from topology.core.mm2 import properties


def pairs(text: str) -> list[tuple[str, str]]:
    entries, problems = properties.parse(text)
    assert problems == []
    return [(e.key, e.value) for e in entries]


def test_comments_blank_lines_and_the_three_separators() -> None:
    text = "# a comment\n! another\n\n  a=1\nb : 2\nc 3\nd\te\nf=\ng\n"
    assert pairs(text) == [("a", "1"), ("b", "2"), ("c", "3"), ("d", "e"), ("f", ""), ("g", "")]


def test_only_the_first_separator_counts_and_the_value_keeps_the_rest() -> None:
    assert pairs("url = http://host:80/x=y\n") == [("url", "http://host:80/x=y")]


def test_continuation_lines_drop_their_leading_whitespace() -> None:
    text = "servers = a:1,\\\n          b:2,\\\n\tc:3\nnext=1\n"
    assert pairs(text) == [("servers", "a:1,b:2,c:3"), ("next", "1")]


def test_an_even_number_of_backslashes_does_not_continue() -> None:
    assert pairs("path=C:\\\\\nnext=1\n") == [("path", "C:\\"), ("next", "1")]


def test_a_comment_line_never_continues() -> None:
    assert pairs("# ends with \\\nkey=value\n") == [("key", "value")]


def test_escapes_as_the_jdk_reads_them() -> None:
    # A backslash before an ordinary character is dropped: MM2 reads `a\.b` as the regex `a.b`.
    text = "topics=a\\.b, c\\\\.d\ntab=x\\ty\nuni=caf\\u00e9\nkey\\ with\\=odd\\:chars=v\n"
    assert pairs(text) == [
        ("topics", "a.b, c\\.d"),
        ("tab", "x\ty"),
        ("uni", "café"),
        ("key with=odd:chars", "v"),
    ]


def test_crlf_and_cr_line_ends() -> None:
    assert pairs("a=1\r\nb=2\rc=3") == [("a", "1"), ("b", "2"), ("c", "3")]


def test_positions_are_one_based_and_follow_continuations() -> None:
    entries, _ = properties.parse("# header\n\n   key = first,\\\n   second\nother=x\n")
    key, other = entries
    assert (key.line, key.column) == (3, 4)
    assert (key.value_line, key.value_column) == (3, 10)
    assert key.last_line == 4
    assert (other.line, other.column, other.last_line) == (5, 1, 5)


def test_a_malformed_unicode_escape_is_a_problem_not_a_crash() -> None:
    entries, problems = properties.parse("ok=1\nbad=\\u12zz\n")
    assert [e.key for e in entries] == ["ok", "bad"]
    [problem] = problems
    assert "\\u12zz" in problem.message and (problem.line, problem.column) == (2, 1)


@given(
    key=st.text(min_size=1),
    value=st.text(),
)
def test_every_written_line_reads_back_exactly(key: str, value: str) -> None:
    written = properties.line(key, value)
    assert written.isascii()  # MM2 reads ISO-8859-1: everything else is a \u escape
    assert pairs(written + "\n") == [(key, value)]


@given(items=st.lists(st.text(min_size=1, max_size=40), min_size=2, max_size=12))
def test_long_lists_continue_over_lines_and_still_read_back(items: list[str]) -> None:
    value = ", ".join(items)
    written = properties.line("topics", value)
    assert pairs(written + "\n") == [("topics", value)]


def test_a_long_topic_list_is_written_over_several_lines() -> None:
    value = ", ".join(f"topic-number-{n}" for n in range(12))
    written = properties.line("east->west.topics", value).splitlines()
    assert len(written) > 1 and all(len(line) <= 100 for line in written)
    assert all(line.endswith(", \\") for line in written[:-1])
    assert pairs("\n".join(written) + "\n") == [("east->west.topics", value)]


def test_comments_are_wrapped_and_list_items_indented() -> None:
    lines = properties.comment("- " + "word " * 40)
    assert all(len(line) <= 98 and line.startswith("# ") for line in lines)
    assert lines[0].startswith("# - ") and lines[1].startswith("#   word")


def test_masking_hides_secret_values_and_keeps_the_line_count() -> None:
    text = "a=1\nb.password = hunter2,\\\n   more\nc=3\n"
    entries, _ = properties.parse(text)
    masked = properties.mask(text, [e for e in entries if e.key == "b.password"])
    assert "hunter2" not in masked and "more" not in masked
    assert masked.splitlines() == ["a=1", "b.password = ****", "", "c=3"]


def test_half_a_surrogate_pair_is_a_located_error() -> None:
    # A whole pair is one character (Java strings are UTF-16); half of one cannot be written to
    # YAML (libyaml refuses the escape), so the import says so instead of writing a broken file.
    entries, problems = properties.parse("a = \\ud83d\\ude00\nb = x\\ud800y\n")
    assert entries[0].value == "\U0001f600"
    assert [(p.line, p.message) for p in problems] == [
        (2, "'\\ud800' is half of a UTF-16 surrogate pair, which no YAML file can hold")
    ]
