"""Diagnostics as people read them (compiler style, with the line) and as machines do (JSON).

A line that holds a secret written in the file is never shown: not under a diagnostic about
that secret (`Diagnostic.secret`, such as T206), nor under any other diagnostic that happens to
point at the same line. FILE:LINE:COL still says where it is.
"""

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import Any

from topology import secrets
from topology.diagnostics import Diagnostic, Severity, Span
from topology.source import Document


def as_text(diagnostic: Diagnostic, document: Document) -> str:
    """`FILE:LINE:COL: error[CODE]: message`, then the offending line with a caret under it;
    each note (`FILE:LINE:COL: note: ...`) likewise, under it. A diagnostic about a secret, and
    a line holding one, are shown without the line."""
    if diagnostic.secret:
        return "\n".join([diagnostic.headline(), *(note.headline() for note in diagnostic.notes)])
    parts = [_with_line(diagnostic.headline(), diagnostic.span, document)]
    parts += [_with_line(note.headline(), note.span, document) for note in diagnostic.notes]
    return "\n".join(parts)


def _with_line(headline: str, span: Span, document: Document) -> str:
    text = document.line(span.line)
    if _holds_secret(text) or span.line in _secret_lines(document):
        return headline
    line, column = _shown(text, span.column)
    if not line.strip():
        return headline
    gutter = str(span.line)
    caret = " " * (column - 1) + "^"
    return f"{headline}\n  {gutter} | {line}\n  {' ' * len(gutter)} | {caret}"


_WIDE = 120  # a longer line is shown as the part around the column, not a megabyte of it


def _shown(line: str, column: int) -> tuple[str, int]:
    """The line as printed, and the column of the caret in it: cut around the column when it is
    long, and control characters (a terminal would act on them) replaced, one for one."""
    if len(line) > _WIDE:
        start = max(0, min(column - 1 - _WIDE // 2, len(line) - _WIDE))
        cut = line[start : start + _WIDE]
        line = ("..." if start else "") + cut + ("..." if start + _WIDE < len(line) else "")
        column -= start - (3 if start else 0)
    return _CONTROL.sub("\N{REPLACEMENT CHARACTER}", line), column


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# -- lines that hold secrets --------------------------------------------------------------

# A mapping key's colon (followed by a blank or the end of the line), and the value after it: a
# quoted value whole, a plain one up to where a flow collection or a comment would end it.
_COLON = re.compile(r":(?=[ \t]|$)")
_VALUE = re.compile(
    r"""[ \t]*("(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?|\$\{[^}]*\}[ \t]*(?=[,}\]#]|$)|[^,}\]#]*)"""
)
_LOOK = 1_000  # a value this long is no reference; reading further would make a long line slow


def _holds_secret(line: str) -> bool:
    """Whether the line writes a value under a secret-looking key (`password: hunter2`,
    `{ssl.keystore.pasword: x}`); a reference (`${env:NAME}`) is not a secret. Read from the
    text alone, so it works on a file that does not parse (a T001 on the password's own line);
    linear in the line's length."""
    start = 0
    for colon in _COLON.finditer(line):
        segment = line[start : colon.start()]
        cut = max(segment.rfind("{"), segment.rfind("["), segment.rfind(","))
        key = segment[cut + 1 :].strip().lstrip("-? \t").strip("\"'")
        start = colon.end()
        if key and secrets.is_secret_key(key):
            value = _VALUE.match(line[start : start + _LOOK])
            if value and _literal(value.group(1).strip().strip("\"'")):
                return True
    return False


def _literal(value: str) -> bool:
    """A value written in place: not empty, not a reference, not a nested mapping or list, not
    a block scalar's indicator (its lines are found from the parsed document)."""
    if not value or value[0] in "{[|>&*":
        return False
    return secrets.reference(value) is None


_cached: tuple[Document, frozenset[int]] | None = None


def _secret_lines(document: Document) -> frozenset[int]:
    """The lines a literal secret value of the parsed document covers: from its first line to
    the line before the next key or value starts (a block scalar or a quoted value can run over
    several lines). Computed once per document, as a report renders many diagnostics."""
    global _cached
    if _cached is not None and _cached[0] is document:
        return _cached[1]
    found = frozenset(_covered(document))
    _cached = (document, found)
    return found


def _covered(document: Document) -> Iterator[int]:
    if document.data is None:
        return
    firsts = [
        span.line
        for path, span in document.values.items()
        if path
        and isinstance(path[-1], str)
        and secrets.is_secret_key(path[-1])
        and _literal_value(_at(document.data, path))
    ]
    if not firsts:
        return
    starts = sorted({s.line for s in (*document.values.values(), *document.keys.values())})
    last_line = len(_LINE_BREAK.split(document.text))
    for first in firsts:
        after = bisect_right(starts, first)
        end = starts[after] - 1 if after < len(starts) else last_line
        yield from range(first, max(first, end) + 1)


def _literal_value(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip()) and secrets.reference(value) is None
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _at(data: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


def summary(file: str, diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    if not errors:
        extra = f" ({_count(warnings, 'warning')})" if warnings else ""
        return f"{file}: valid{extra}"
    return f"{file}: {_count(errors, 'error')}, {_count(warnings, 'warning')}"


def as_json(document: Document, diagnostics: Sequence[Diagnostic]) -> dict[str, object]:
    return {
        "file": document.file,
        "valid": not any(d.severity is Severity.ERROR for d in diagnostics),
        "diagnostics": [d.to_dict() for d in diagnostics],
    }


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
