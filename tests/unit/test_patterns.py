"""topology.patterns: which filters are literal names, and a name each regex matches."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from topology.patterns import Matcher, example, fullmatch, leading_literal, literal, problem


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


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("(?!internal).*", "lookarounds are not supported"),
        ("(?<=a)b", "lookarounds are not supported"),
        ("(a)\\1", "backreferences are not supported"),
        ("(?P<n>a)(?P=n)", "backreferences are not supported"),
        ("a*+", "possessive repeats are not supported"),
        ("(?>a)b", "atomic groups are not supported"),
        ("a{1001}", "a repeat count above 1000"),
    ],
)
def test_what_re2_cannot_match_is_a_problem_that_says_why(pattern: str, reason: str) -> None:
    found = problem(pattern) or ""
    assert reason in found and "RE2" in found
    assert not Matcher((pattern,)).matches("a")  # reported when resolved; here it matches nothing


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
