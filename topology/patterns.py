"""The full-match regexes in filters: is one usable, which names does it match, what is it like.

This module owns every match of a user's pattern against a name. Python's `re` (like Java's
regex, which MM2 uses) backtracks: `(a+)+b` against forty `a`s runs for hours. Topo matches
with RE2 instead, which never backtracks, so a match costs time linear in the name's length
whatever the pattern; the price is RE2's syntax, which has no lookarounds, backreferences,
possessive repeats or atomic groups. `problem` refuses those with a reason, at the pattern.

Literal patterns (`orders`, `payments\\.eu`) name exactly one topic and are looked up in a set,
so an include list of thousands of names costs one lookup per name, not one match per pattern.
The graph analysis reasons about names a filter lets through without seeing a live cluster:
`example` builds one name a pattern matches, which is enough to show that two flows collide.
"""

import re
from collections.abc import Iterable
from functools import cache
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import re2  # type: ignore[import-untyped]

_EXAMPLE_CHAR = "x"
# Longer examples are no use as topic names (Kafka allows 249 characters), and `x{100000000}`
# would otherwise build a string of that length.
_MAX_EXAMPLE = 1_000

# Text with no regex syntax but escaped punctuation: checked and read without compiling, so
# a list of 50,000 topic names costs a scan each rather than a compile each.
_PLAIN = re.compile(r"(?:[^.^$*+?{}\[\]|()\\]|\\[^A-Za-z0-9])*")
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def _bounded_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own copy of every error to stderr
    return options


_OPTIONS = _bounded_options()

# RE2's error for a construct it lacks -> what the user is told, and what to do instead.
_UNSUPPORTED = [
    (
        ("(?=", "(?!", "(?<=", "(?<!"),
        "lookarounds are not supported",
        "; list the names to leave out under exclude instead",
    ),
    (
        (*(f"escape sequence: \\{digit}" for digit in "123456789"), "sequence: \\k", "(?P"),
        "backreferences are not supported",
        "",
    ),
    (("*+", "++", "?+", "}+"), "possessive repeats are not supported", "; drop the extra '+'"),
    (("(?>",), "atomic groups are not supported", "; write (?:...) instead"),
    (("\\Z",), "\\Z is not supported", "; it is not needed, filters match whole names"),
    (("repetition size",), "a repeat count above 1000 is not supported", ""),
    (("pattern too large",), "the pattern is too large", ""),
]
_WHY_RE2 = "topo matches filters with RE2, which runs in linear time and never backtracks"


@cache
def problem(pattern: str) -> str | None:
    """Why the pattern cannot be used as a filter, or None."""
    if _PLAIN.fullmatch(pattern):
        return None
    try:
        re.compile(pattern)
    except (re.error, OverflowError) as reason:  # `a{99999999999999999999}` overflows
        return str(reason)
    except RecursionError:
        return "too deeply nested for Python's regular expression parser"
    return _bounded_problem(pattern)


def _bounded_problem(pattern: str) -> str | None:
    try:
        re2.compile(pattern, _OPTIONS)
    except re2.error as raised:
        reason = raised.args[0].decode() if raised.args else "RE2 refuses it"
        for keys, what, instead in _UNSUPPORTED:
            if any(key in reason for key in keys):
                return f"{what} ({_WHY_RE2}){instead}"
        return f"{reason} ({_WHY_RE2})"
    return None


class Matcher:
    """Does a name fully match any of a list of patterns? In time linear in the name's length.

    Literal patterns are a set lookup. The other patterns are joined into one RE2 regex, each in
    its own group (RE2 keeps an inline flag such as `(?i)` inside the group it is written in), so
    a name costs one call into RE2 however many regexes there are. Answers are remembered: the
    analysis asks about the same names at every hop. Patterns with a `problem` (reported when
    the file was resolved) match nothing.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        names, regexes = set(), []
        for pattern in patterns:
            name = literal(pattern)
            if name is not None:
                names.add(name)
            elif problem(pattern) is None:
                regexes.append(pattern)
        self.names = frozenset(names)
        self.regexes = tuple(regexes)
        self._joined = _joined(self.regexes) if regexes else None
        self._answers: dict[str, bool] = {}

    def matches(self, name: str) -> bool:
        if name in self.names:
            return True
        if self._joined is None:
            return False
        answer = self._answers.get(name)
        if answer is None:
            answer = self._answers[name] = any(regex.fullmatch(name) for regex in self._joined)
        return answer


def _joined(regexes: tuple[str, ...]) -> tuple[Any, ...]:
    """One RE2 regex for all, or one each if together they are too large for RE2's memory."""
    try:
        return (re2.compile("|".join(f"(?:{regex})" for regex in regexes), _OPTIONS),)
    except re2.error:
        return tuple(re2.compile(regex, _OPTIONS) for regex in regexes)


def fullmatch(pattern: str, name: str) -> bool:
    """Does the name fully match the pattern? False for a pattern with a `problem`."""
    return Matcher((pattern,)).matches(name)


@cache
def literal(pattern: str) -> str | None:
    """The one string the pattern matches if it is a plain literal (escapes allowed), else None."""
    if _PLAIN.fullmatch(pattern):
        return _ESCAPED.sub(r"\1", pattern)
    if problem(pattern) is not None:
        return None
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:  # `(?i)orders` also matches ORDERS
        return None
    chars = []
    for op, argument in parsed:
        if op is not sre_constants.LITERAL:
            return None
        chars.append(chr(argument))
    return "".join(chars)


@cache
def leading_literal(pattern: str) -> str:
    """Text every match of the pattern starts with (`svc1-` for `svc1-.*`); "" when unknown."""
    if problem(pattern) is not None:
        return ""
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & re.IGNORECASE:
        return ""
    chars = []
    for op, argument in parsed:
        if op is not sre_constants.LITERAL:
            break
        chars.append(chr(argument))
    return "".join(chars)


@cache
def example(pattern: str) -> str | None:
    """A short string the pattern fully matches (repeats use their minimum, at least one)."""
    if problem(pattern) is not None:
        return None
    parsed = sre_parse.parse(pattern)
    try:
        candidate = _build(list(parsed))
    except (_NoExample, RecursionError):
        return None
    return candidate if fullmatch(pattern, candidate) else None


class _NoExample(Exception):
    pass


def _build(items: list[tuple[Any, Any]]) -> str:
    return "".join(_one(op, argument) for op, argument in items)


def _one(op: Any, argument: Any) -> str:
    if op is sre_constants.LITERAL:
        return chr(argument)
    if op is sre_constants.ANY:
        return _EXAMPLE_CHAR
    if op is sre_constants.NOT_LITERAL:
        return next(char for char in "xa" if ord(char) != argument)
    if op is sre_constants.IN:
        return _from_class(argument)
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
        low, high, body = argument
        count = max(low, 1) if high != 0 else 0
        once = _build(list(body))
        if len(once) * count > _MAX_EXAMPLE:
            raise _NoExample
        return once * count
    if op is sre_constants.SUBPATTERN:
        return _build(list(argument[-1]))
    if op is sre_constants.ATOMIC_GROUP:
        return _build(list(argument))
    if op is sre_constants.BRANCH:
        return _build(list(argument[1][0]))
    if op is sre_constants.AT:
        return ""
    raise _NoExample  # lookarounds, backreferences: give up rather than guess


def _from_class(items: list[tuple[Any, Any]]) -> str:
    if items and items[0][0] is sre_constants.NEGATE:
        # Pick a common topic character that the class does not exclude.
        excluded = re.compile("[" + "".join(_class_text(i) for i in items[1:]) + "]")
        for char in "xa0_-.":
            if not excluded.fullmatch(char):
                return char
        raise _NoExample
    op, argument = items[0]
    if op is sre_constants.LITERAL:
        return chr(argument)
    if op is sre_constants.RANGE:
        return chr(argument[0])
    if op is sre_constants.CATEGORY:
        return _CATEGORIES.get(str(argument), (_EXAMPLE_CHAR, ""))[0]
    raise _NoExample


def _class_text(item: tuple[Any, Any]) -> str:
    op, argument = item
    if op is sre_constants.LITERAL:
        return re.escape(chr(argument))
    if op is sre_constants.RANGE:
        return f"{re.escape(chr(argument[0]))}-{re.escape(chr(argument[1]))}"
    if op is sre_constants.CATEGORY and str(argument) in _CATEGORIES:
        return _CATEGORIES[str(argument)][1]
    raise _NoExample


# \d, \W and the others: a character each one matches, and how it is written in a class.
_CATEGORIES = {
    "CATEGORY_DIGIT": ("0", r"\d"),
    "CATEGORY_NOT_DIGIT": ("x", r"\D"),
    "CATEGORY_SPACE": (" ", r"\s"),
    "CATEGORY_NOT_SPACE": ("x", r"\S"),
    "CATEGORY_WORD": ("x", r"\w"),
    "CATEGORY_NOT_WORD": ("-", r"\W"),
}
