r"""The full-match regexes in filters: is one usable, which names does it match, what is it like.

This module owns every match of a user's pattern against a name. Filters are Java regexes (MM2
matches them with java.util.regex), and Java's engine, like Python's `re`, backtracks: `(a+)+b`
against forty `a`s runs for hours. Topo matches each pattern RE2 can take with RE2, which never
backtracks, so a match costs time linear in the name's length whatever the pattern. RE2 has no
lookarounds, backreferences, possessive repeats, atomic groups, `\Z`, `(?x)`, `\uXXXX` or repeat
counts above 1000; a pattern using them is matched by the `regex` package's backtracking engine
instead, with a time limit on every match (`MATCH_TIMEOUT`): one that runs past it raises
`SlowPatternError`, naming the pattern, rather than hanging.

Every pattern is checked by Python's `re` parser first (what `literal`, `leading_literal` and
`example` read) and must mean there what it means to Java. `problem` refuses, with the reason,
what Java refuses or reads differently: `{` that does not start a repeat count (`{,3}` is a repeat
in Python, text in RE2, an error in Java), `[` or `&&` inside a class (Java's nested classes and
intersections: `[[:alpha:]]` is the characters `:alph` in Java, a POSIX class in RE2), `(?#...)`.
Like Java's defaults, `\d`, `\w`, `\s` and `\b` are ASCII in both engines.

Literal patterns (`orders`, `payments\\.eu`) name exactly one topic and are looked up in a set,
so an include list of thousands of names costs one lookup per name, not one match per pattern.
The graph analysis reasons about names a filter lets through without seeing a live cluster:
`example` builds one name a pattern matches, which is enough to show that two flows collide.
"""

import re
import warnings
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from re import _compiler as sre_compile  # type: ignore[attr-defined]
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import re2  # type: ignore[import-untyped]
import regex  # type: ignore[import-untyped]

from topology.core.errors import TopoError

_EXAMPLE_CHAR = "x"
# Longer examples are no use as topic names (Kafka allows 249 characters), and `x{100000000}`
# would otherwise build a string of that length.
_MAX_EXAMPLE = 1_000

# Seconds one name may take against one pattern RE2 cannot match. A lookahead against a topic
# name takes microseconds; only catastrophic backtracking comes near this.
MATCH_TIMEOUT = 0.2
# Answers each Matcher remembers (the analysis asks about the same names at every hop); the
# least recently asked are forgotten, so a long-running driver asking about ever new consumer
# group ids stays within this.
ANSWERS_KEPT = 10_000

# Text with no regex syntax but escaped punctuation: checked and read without compiling, so
# a list of 50,000 topic names costs a scan each rather than a compile each.
_PLAIN = re.compile(r"(?:[^.^$*+?{}\[\]|()\\]|\\[^A-Za-z0-9])*")
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
_REPEAT_COUNT = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")
_NO_LOWER_BOUND = re.compile(r"\{,([0-9]*)\}")


SLOW_FIX = (
    "rewrite it without nested repeats such as (a|aa)+ or (a+)+, or without lookarounds and "
    "backreferences so that topo can match it with RE2, in linear time"
)


class SlowPatternError(TopoError):
    """A pattern RE2 cannot take ran past `MATCH_TIMEOUT` on one name: it backtracks."""

    def __init__(self, pattern: str, name: str) -> None:
        self.pattern = pattern
        self.name = name
        self.shown = name if len(name) <= 40 else f"{name[:40]}... ({len(name)} characters)"
        super().__init__(
            f"'{pattern}' took too long to match '{self.shown}' (it backtracks catastrophically); "
            f"{SLOW_FIX}"
        )


def _bounded_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own copy of every error to stderr
    return options


_OPTIONS = _bounded_options()


@cache
def problem(pattern: str) -> str | None:
    """Why the pattern cannot be used as a filter, or None."""
    if _PLAIN.fullmatch(pattern):
        return None
    reason, warned = _python_parse(pattern)
    if reason is not None:
        return reason
    if warned is not None:  # "Possible nested set", "Possible set intersection"
        return (
            f"{warned}: Java reads '[' and '&&' inside a character class as a nested class and "
            "an intersection ([[:alpha:]] is the characters ':alph'), other engines do not; "
            "escape the character (\\[, \\&) or write the class out, such as [a-zA-Z]"
        )
    return _java_problem(pattern) or _engine_problem(pattern)


@cache
def _python_parse(pattern: str) -> tuple[str | None, str | None]:
    """Why Python's parser refuses the pattern, and what it warns about (Java's class syntax)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FutureWarning)
        try:
            sre_compile.compile(pattern, 0)  # not re.compile: its cache would hide the warning
        except (re.error, OverflowError) as reason:  # `a{99999999999999999999}` overflows
            return str(reason), None
        except RecursionError:
            return "too deeply nested for Python's regular expression parser", None
    future = [w for w in caught if issubclass(w.category, FutureWarning)]
    return None, (str(future[0].message) if future else None)


def is_invalid(pattern: str) -> bool:
    """Is the pattern not a regex at all (Python's parser refuses it), rather than one topo
    cannot use the way Java reads it (`problem` says which)?"""
    return not _PLAIN.fullmatch(pattern) and _python_parse(pattern)[0] is not None


def _java_problem(pattern: str) -> str | None:
    """What Python's parser takes but Java refuses or reads otherwise, outside classes."""
    index, class_opened = 0, -1  # where the open class's first character is, or -1
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if class_opened >= 0:
            if char == "]" and index > class_opened:  # `[]a]`: a first `]` is a member
                class_opened = -1
        elif char == "[":
            class_opened = index + (2 if pattern.startswith("^", index + 1) else 1)
        elif pattern.startswith("(?#", index):
            return "Java has no (?#...) comments; remove the comment"
        elif char == "{" and not _REPEAT_COUNT.match(pattern, index):
            bound = _NO_LOWER_BOUND.match(pattern, index)
            if bound:
                return (
                    f"'{bound.group()}' has no lower bound: Java refuses it and RE2 reads it as "
                    f"text; write {{0,{bound.group(1)}}}"
                )
            return (
                f"the '{{' at position {index} does not start a repeat count such as {{2}} or "
                "{1,3}, so Java refuses it; write \\{ for the character"
            )
        index += 1
    return None


def _engine_problem(pattern: str) -> str | None:
    if _linear(pattern) is not None:
        return None
    try:
        size = _expanded_size(list(sre_parse.parse(pattern)))
    except RecursionError:
        size = _MAX_EXPANDED + 1
    if size > _MAX_EXPANDED:
        return (
            f"its repeat counts are too large for topo to match it (about {size} pattern steps "
            f"once expanded; the limit is {_MAX_EXPANDED}): RE2 takes counts up to 1000, the "
            "backtracking engine expands them"
        )
    if _backtracking(pattern) is not None:
        return None
    try:
        re2.compile(pattern, _OPTIONS)
    except re2.error as raised:
        reason = raised.args[0].decode() if raised.args else "RE2 refuses it"
        return f"neither RE2 nor the backtracking engine takes it ({reason})"
    return "neither RE2 nor the backtracking engine takes it"  # pragma: no cover


# The backtracking engine writes a counted repeat out in full: `y{1000000}` takes 300 MB.
_MAX_EXPANDED = 100_000


def _expanded_size(items: list[tuple[Any, Any]]) -> int:
    """About how many steps the pattern is once its counted repeats are written out."""
    size = 0
    for op, argument in items:
        if op in (
            sre_constants.MAX_REPEAT,
            sre_constants.MIN_REPEAT,
            sre_constants.POSSESSIVE_REPEAT,
        ):
            low, high, body = argument
            count = low if high == sre_constants.MAXREPEAT else high
            size += max(count, 1) * _expanded_size(list(body))
        elif op is sre_constants.SUBPATTERN:
            size += _expanded_size(list(argument[-1]))
        elif op is sre_constants.ATOMIC_GROUP:
            size += _expanded_size(list(argument))
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            size += _expanded_size(list(argument[1]))
        elif op is sre_constants.BRANCH:
            size += sum(_expanded_size(list(branch)) for branch in argument[1])
        else:
            size += 1
        if size > _MAX_EXPANDED:
            return size  # enough to refuse; `(z{10000}){10000}` need not be counted out
    return size


@cache
def _linear(pattern: str) -> Any:
    """The pattern compiled by RE2, or None when RE2 lacks one of its constructs."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error:
        return None


@cache
def _backtracking(pattern: str) -> Any:
    """The pattern compiled by the `regex` package (Python's syntax; ASCII classes, as Java's)."""
    for flags in (regex.VERSION0 | regex.ASCII, regex.VERSION0):  # `(?u)` wants no ASCII flag
        try:
            return regex.compile(pattern, flags)
        except (regex.error, ValueError, OverflowError, RecursionError):
            continue
    return None


def engine(pattern: str) -> str:
    """How names are matched against the pattern: "literal", "re2", "backtracking" or "none"."""
    if literal(pattern) is not None:
        return "literal"
    if problem(pattern) is not None:
        return "none"
    return "re2" if _linear(pattern) is not None else "backtracking"


class Matcher:
    """Does a name fully match any of a list of patterns? In bounded time.

    Literal patterns are a set lookup. The patterns RE2 takes are joined into one RE2 regex, each
    in its own group (RE2 keeps an inline flag such as `(?i)` inside the group it is written in),
    so a name costs one call into RE2, in time linear in its length, however many regexes there
    are. The others are tried one by one, each match limited to `MATCH_TIMEOUT`
    (`SlowPatternError` past it). The last `ANSWERS_KEPT` answers are remembered: the analysis
    asks about the same names at every hop. Patterns with a `problem` (reported when the file
    was resolved) match nothing.
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
        linear = tuple(p for p in regexes if _linear(p) is not None)
        self._linear = _joined(linear) if linear else ()
        self._backtracking = tuple((p, _backtracking(p)) for p in regexes if p not in linear)
        self._answer: Callable[[str], bool] | None = (
            lru_cache(maxsize=ANSWERS_KEPT)(self._match) if regexes else None
        )

    def matches(self, name: str) -> bool:
        if name in self.names:
            return True
        return self._answer is not None and self._answer(name)

    def _match(self, name: str) -> bool:
        if any(compiled.fullmatch(name) for compiled in self._linear):
            return True
        for pattern, compiled in self._backtracking:
            try:
                if compiled.fullmatch(name, timeout=MATCH_TIMEOUT):
                    return True
            except TimeoutError:
                raise SlowPatternError(pattern, name) from None
        return False


def _joined(regexes: tuple[str, ...]) -> tuple[Any, ...]:
    """One RE2 regex for all, or one each if together they are too large for RE2's memory."""
    try:
        return (re2.compile("|".join(f"(?:{each})" for each in regexes), _OPTIONS),)
    except re2.error:
        return tuple(_linear(each) for each in regexes)


def fullmatch(pattern: str, name: str) -> bool:
    """Does the name fully match the pattern? False for a pattern with a `problem`; raises
    `SlowPatternError` when a backtracking pattern runs past `MATCH_TIMEOUT`."""
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
