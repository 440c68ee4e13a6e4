"""topology.patterns: which filters are literal names, and a name each regex matches."""

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from topology.patterns import example, leading_literal, literal, problem


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
        ("(?>a)b", "ab"),
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
    assert re.fullmatch(pattern, found)


@settings(max_examples=300, deadline=None)
@given(_regexes(_BUILDABLE_ATOMS + _OTHER_ATOMS, _QUANTIFIERS + _OTHER_QUANTIFIERS))
def test_example_when_not_none_fully_matches(pattern: str) -> None:
    assume(problem(pattern) is None)
    found = example(pattern)
    assert found is None or re.fullmatch(pattern, found)
    name = literal(pattern)
    assert name is None or (re.fullmatch(pattern, name) and name == found)


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
