"""Diagnostics as people read them (compiler style, with the line) and as machines do (JSON)."""

import re
from collections.abc import Sequence

from topology.diagnostics import Diagnostic, Severity, Span
from topology.source import Document


def as_text(diagnostic: Diagnostic, document: Document) -> str:
    """`FILE:LINE:COL: error[CODE]: message`, then the offending line with a caret under it;
    each note (`FILE:LINE:COL: note: ...`) likewise, under it."""
    parts = [_with_line(diagnostic.headline(), diagnostic.span, document)]
    parts += [_with_line(note.headline(), note.span, document) for note in diagnostic.notes]
    return "\n".join(parts)


def _with_line(headline: str, span: Span, document: Document) -> str:
    line, column = _shown(document.line(span.line), span.column)
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
