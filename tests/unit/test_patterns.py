"""topology.core.patterns: which filters are literal names, and a name each regex matches."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from topology.core import patterns
from topology.core.patterns import (
    Matcher,
    SlowPatternError,
    engine,
    example,
    fullmatch,
    leading_literal,
    literal,
    problem,
)


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("orders", "orders"),
        ("payments\\.eu", "payments.eu"),
        ("a\\-b_c", "a-b_c"),
        ("[a]", "a"),  # a one-character class matches one name too
        ("", ""),
    ],
)
def test_literal_patterns_name_exactly_one_topic(pattern: str, name: str) -> None:
    assert literal(pattern) == name


@pytest.mark.parametrize(
    "pattern",
    [
        "orders.*",
        "payments.eu",
        "a|b",
        "orders?",
        "[ab]",
        "\\d",
        "^orders$",
        "(orders)",
        "(?i)orders",
    ],
)
def test_anything_that_matches_more_than_one_name_is_not_literal(pattern: str) -> None:
    assert literal(pattern) is None


def test_an_invalid_pattern_is_not_literal_and_has_no_example() -> None:
    assert (literal("orders["), example("orders[")) == (None, None)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("orders", "orders"),
        ("payments\\..*", "payments.x"),  # repeats use their minimum, at least one
        ("[a-c]+", "a"),
        ("[0-9]{3}", "000"),
        ("x{2,5}", "xx"),
        ("ab{0}c", "ac"),
        ("\\d+-\\w", "0-x"),
        ("\\W", "-"),
        ("(ab)+", "ab"),
        ("foo|bar", "foo"),
        ("(?:eu|us)\\.clicks", "eu.clicks"),
        ("^orders$", "orders"),
    ],
)
def test_example_builds_a_short_name_the_pattern_matches(pattern: str, expected: str) -> None:
    assert example(pattern) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [("[^x]", "a"), ("[^xa]", "0"), ("[^a-z]", "0"), ("[^\\d]", "x"), ("[^\\w]", "-")],
)
def test_a_negated_class_gives_a_topic_character_it_does_not_exclude(
    pattern: str, expected: str
) -> None:
    assert example(pattern) == expected


def test_a_negated_class_excluding_every_candidate_has_no_example() -> None:
    assert example("[^xa0_.-]") is None


@pytest.mark.parametrize("pattern", ["(?=x)x", "(?!y).*", "x(?<=x)", "(?<!a)b", "(a)\\1"])
def test_lookarounds_and_backreferences_give_up_rather_than_guess(pattern: str) -> None:
    assert example(pattern) is None


def test_a_huge_repeat_gives_up_instead_of_building_the_string() -> None:
    assert example("x{1000}") == "x" * 1000
    assert example("y{100000000}") is None  # built, these would be 100 MB strings
    assert example("(z{10000}){10000}") is None


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("orders[", "unterminated character set"),
        ("*x", "nothing to repeat"),
        ("a{99999999999999999999}", "the repetition number is too large"),
        ("(" * 600 + "a" + ")" * 600, "too deeply nested"),
    ],
)
def test_problem_explains_why_a_pattern_does_not_compile(pattern: str, reason: str) -> None:
    assert reason in (problem(pattern) or "")


def test_problem_is_none_for_a_valid_pattern() -> None:
    assert problem("payments\\..*") is None


# -- bounded matching: RE2, never backtracking ----------------------------------------------

# Each of these runs for hours in a backtracking engine (Python's re, Java's) against a long
# run of the repeated character that does not end the way the pattern wants.
CATASTROPHIC = [("(a+)+b", "a"), ("(a|aa)*c", "a"), ("(x+x+)+y", "x"), ("(.*a){12}x", "a")]


@pytest.mark.parametrize(("pattern", "char"), CATASTROPHIC)
def test_a_pattern_that_backtracks_catastrophically_is_matched_in_linear_time(
    pattern: str, char: str
) -> None:
    assert problem(pattern) is None  # RE2 takes these: they are only slow when backtracking
    assert not Matcher((pattern,)).matches(char * 249)  # Kafka's longest topic name
    assert not fullmatch(pattern, char * 100_000)


# Java regexes (MM2's filters are java.util.regex) that RE2 cannot take: each is matched by the
# backtracking engine instead, as Java would match it.
JAVA_ONLY = [
    ("(?!internal).*", "orders", "internal"),
    ("(?<=a)b", None, "b"),
    ("a(?<=a)b", "ab", "b"),
    ("(a)\\1", "aa", "ab"),
    ("(?P<n>a)(?P=n)", "aa", "a"),
    ("a*+b", "aab", "aa"),
    ("a*+a", None, "aaa"),  # the possessive repeat gives nothing back
    ("(?>a|ab)c", "ac", "abc"),  # the atomic group keeps its first choice
    ("a\\Z", "a", "ab"),
    ("a{1001}", "a" * 1001, "a" * 1000),
    ("\\u0041", "A", "u0041"),
    ("(?x) orders \\. .* # a comment", "orders.eu", "orders .eu"),
]


@pytest.mark.parametrize(("pattern", "matching", "other"), JAVA_ONLY)
def test_what_re2_cannot_take_is_matched_by_the_backtracking_engine_as_java_would(
    pattern: str, matching: str | None, other: str
) -> None:
    assert problem(pattern) is None
    assert engine(pattern) in ("backtracking", "literal")
    matcher = Matcher((pattern,))
    assert matching is None or matcher.matches(matching)
    assert not matcher.matches(other)


def test_re2_matches_every_pattern_it_takes() -> None:
    assert engine("(a+)+b") == "re2" and engine("(?i)orders") == "re2"
    assert engine("(?!internal).*") == "backtracking" and engine("orders") == "literal"


# Catastrophic for a backtracking engine, and out of RE2's reach: the lookaround keeps them
# from RE2, the nested repeat makes them backtrack past any limit on a long run of `a`s.
CATASTROPHIC_LOOKAROUNDS = ["(?=(a|aa)+b).*", "(a|aa)+(?<!x)b", "(?=(a|a)*b).*"]


@pytest.mark.parametrize("pattern", CATASTROPHIC_LOOKAROUNDS)
def test_a_backtracking_pattern_past_its_time_limit_is_an_error_naming_it(pattern: str) -> None:
    assert engine(pattern) == "backtracking"
    with pytest.raises(SlowPatternError) as raised:
        Matcher((pattern,)).matches("a" * 100)
    assert raised.value.pattern == pattern
    assert str(raised.value).startswith(f"'{pattern}' took too long to match 'aaaa")
    assert "backtracks catastrophically" in str(raised.value)


def test_a_backtracking_pattern_is_not_tried_when_a_linear_one_matches() -> None:
    assert Matcher(("a+", "(?=(a|aa)+b).*")).matches("a" * 100)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        # Python reads {,3} as {0,3}, RE2 as the text, Java refuses it
        ("a{,3}", "'{,3}' has no lower bound: Java refuses it and RE2 reads it as text"),
        ("${topic}", "does not start a repeat count"),
        ("orders{eu}", "does not start a repeat count"),
        # Java: the characters ':alph'; RE2: a POSIX class; Python: '[:alph' then ']'
        ("[[:alpha:]]", "nested set"),
        ("[a-z&&[^aeiou]]", "nested class and an intersection"),
        ("(?#why)orders", "Java has no (?#...) comments"),
        ("y{100000000}", "repeat counts are too large for topo"),
    ],
)
def test_what_java_refuses_or_reads_otherwise_is_a_problem_that_says_why(
    pattern: str, reason: str
) -> None:
    found = problem(pattern) or ""
    assert reason in found
    assert "not supported" not in found
    assert not Matcher((pattern,)).matches("a")  # reported when resolved; here it matches nothing


@pytest.mark.parametrize("pattern", ["a{2}", "a{2,}", "a{1,3}", "[{]", "\\{x\\}", "[]{]"])
def test_a_brace_that_is_a_repeat_count_or_escaped_is_fine(pattern: str) -> None:
    assert problem(pattern) is None


def test_a_matcher_remembers_a_bounded_number_of_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "ANSWERS_KEPT", 100)
    matcher = Matcher(("console-consumer-.*", "(?!internal).*"))
    for number in range(1_000):  # a driver asking about ever new consumer group ids
        assert matcher.matches(f"console-consumer-{number}")
    assert matcher._answer is not None
    assert matcher._answer.cache_info().currsize == 100  # type: ignore[attr-defined]


def test_a_matcher_looks_literal_names_up_and_matches_the_regexes() -> None:
    names = [f"t{number:05d}" for number in range(50_000)]
    matcher = Matcher((*names, "payments\\..*", "(?i)orders"))
    assert matcher.names == frozenset(names) and len(matcher.regexes) == 2
    assert all(matcher.matches(name) for name in names)
    assert matcher.matches("payments.eu") and matcher.matches("ORDERS")
    assert not matcher.matches("t5") and not matcher.matches("PAYMENTS.eu")  # (?i) stays put


def test_a_matcher_of_many_regexes_matches_each() -> None:
    regexes = [f"svc{number}-.*" for number in range(2_000)]
    matcher = Matcher(regexes)
    assert matcher.matches("svc1999-events") and not matcher.matches("svc2000-events")


# -- property: regexes from a small grammar -----------------------------------------------

# What `example` knows how to build: it must always find a name for these.
_BUILDABLE_ATOMS = [
    *("a", "b", "x", "\\.", "-", ".", "[a-c]", "[^a]", "[^x.]", "\\d", "\\w", "\\W", "\\D"),
    *("[_-]", "[^\\d]", "\\s", "[0-9a-f]"),
]
# What it may give up on, or must not get wrong: lookarounds, anchors, boundaries.
_OTHER_ATOMS = ["(?=a)", "(?!b)", "(?<=a)", "\\b", "\\B", "^", "$", "[^xa0_.-]", "\\A", "\\Z"]
_QUANTIFIERS = ["*", "+", "?", "{2}", "{0}", "{1,3}", "*?", "+?", "{2,}"]
# A possessive repeat can make a regex match nothing at all: `a*+a`.
_OTHER_QUANTIFIERS = ["*+", "++", "?+"]


def _regexes(atoms: list[str], quantifiers: list[str]) -> st.SearchStrategy[str]:
    return st.recursive(
        st.sampled_from(atoms),
        lambda inner: st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda pair: f"(?:{pair[0]}|{pair[1]})"),
            st.tuples(inner, st.sampled_from(quantifiers)).map(lambda q: f"(?:{q[0]}){q[1]}"),
            inner.map(lambda body: f"({body})"),
        ),
        max_leaves=8,
    )


@settings(max_examples=300, deadline=None)
@given(_regexes(_BUILDABLE_ATOMS, _QUANTIFIERS))
def test_example_finds_a_full_match_for_every_buildable_regex(pattern: str) -> None:
    found = example(pattern)
    assert found is not None
    assert fullmatch(pattern, found)


@settings(max_examples=300, deadline=None)
@given(_regexes(_BUILDABLE_ATOMS + _OTHER_ATOMS, _QUANTIFIERS + _OTHER_QUANTIFIERS))
def test_example_when_not_none_fully_matches(pattern: str) -> None:
    assume(problem(pattern) is None)
    found = example(pattern)
    assert found is None or fullmatch(pattern, found)
    name = literal(pattern)
    assert name is None or (fullmatch(pattern, name) and name == found)


@pytest.mark.parametrize(
    ("pattern", "lead"),
    [
        ("svc1-.*", "svc1-"),
        ("east\\..*", "east."),
        ("orders", "orders"),
        ("ab*", "a"),  # the repeat makes b optional
        ("ab+", "a"),
        (".*", ""),
        ("a|b", ""),
        ("(east)\\..*", ""),  # conservative: a group ends the known text
        ("(?i)east\\..*", ""),  # EAST.x matches too
        ("orders[", ""),
    ],
)
def test_leading_literal_is_text_every_match_starts_with(pattern: str, lead: str) -> None:
    assert leading_literal(pattern) == lead


def test_validate_says_invalid_only_of_what_is_no_regex_at_all() -> None:
    from topology.core.analysis import analyse

    text = (
        "version: 1\nclusters:\n"
        '  east: {bootstrap: "1.2.3.4:9"}\n  west: {bootstrap: "1.2.3.5:9"}\n'
        'flows:\n  - mirror: {from: east, to: west}\n    topics: {include: ["a{,3}", "("]}\n'
    )
    messages = [d.message for d in analyse(text, "t.yaml").diagnostics if d.code == "T202"]
    assert messages[0].startswith("'a{,3}' cannot be used as a filter: ")
    assert messages[1].startswith("'(' is not a valid regular expression: ")
