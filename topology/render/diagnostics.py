"""Diagnostics as people read them (compiler style, with the line) and as machines do (JSON)."""

from collections.abc import Sequence

from topology.diagnostics import Diagnostic, Severity
from topology.source import Document


def as_text(diagnostic: Diagnostic, document: Document) -> str:
    """`FILE:LINE:COL: error[CODE]: message`, then the offending line with a caret under it."""
    line = document.line(diagnostic.span.line)
    if not line.strip():
        return diagnostic.headline()
    gutter = str(diagnostic.span.line)
    caret = " " * (diagnostic.span.column - 1) + "^"
    return f"{diagnostic.headline()}\n  {gutter} | {line}\n  {' ' * len(gutter)} | {caret}"


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
