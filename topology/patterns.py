"""Facts about the full-match regexes in filters: is one valid, literal, and what does it match.

The graph analysis reasons about names a filter lets through without seeing a live cluster. A
literal pattern (`orders`, `payments\\.eu`) names exactly one topic; for any other pattern,
`example` builds one name it matches, which is enough to show that two flows can collide.
"""

import re
from functools import cache
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

_EXAMPLE_CHAR = "x"
# Longer examples are no use as topic names (Kafka allows 249 characters), and `x{100000000}`
# would otherwise build a string of that length.
_MAX_EXAMPLE = 1_000


def problem(pattern: str) -> str | None:
    """Why the pattern does not compile, or None."""
    try:
        re.compile(pattern)
    except (re.error, OverflowError) as reason:  # `a{99999999999999999999}` overflows
        return str(reason)
    except RecursionError:
        return "too deeply nested for Python's regular expression parser"
    return None


@cache
def literal(pattern: str) -> str | None:
    """The one string the pattern matches if it is a plain literal (escapes allowed), else None."""
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
    return candidate if re.fullmatch(pattern, candidate) else None


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
