"""Diagnostics as people read them (compiler style, with the line) and as machines do (JSON).

A line that holds a secret written in the file is never shown: not under a diagnostic about
that secret (`Diagnostic.secret`, such as T206), nor under any other diagnostic that happens to
point at the same line, whatever the value starts with and whether or not the file parses.
FILE:LINE:COL and the message still say where and what; what a message quotes from the secret
(a YAML parser's `found undefined alias 'Xy9...'`) is left out of it.
"""

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from topology.core import secrets
from topology.core.diagnostics import Diagnostic, Severity, Span
from topology.core.source import Document


def as_text(diagnostic: Diagnostic, document: Document) -> str:
    """`FILE:LINE:COL: error[CODE]: message`, then the offending line with a caret under it;
    each note (`FILE:LINE:COL: note: ...`) likewise, under it. A diagnostic about a secret, and
    a line holding one, are shown without the line."""
    diagnostic = redacted(diagnostic, document)
    if diagnostic.secret:
        return "\n".join([diagnostic.headline(), *(note.headline() for note in diagnostic.notes)])
    parts = [_with_line(diagnostic.headline(), diagnostic.span, document)]
    parts += [_with_line(note.headline(), note.span, document) for note in diagnostic.notes]
    return "\n".join(parts)


def _with_line(headline: str, span: Span, document: Document) -> str:
    if span.line in _hidden(document):
        return headline
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

# -- lines that hold secrets --------------------------------------------------------------

# A mapping key's colon: followed by a blank or the end of the line, or right after a quoted key
# (`{"password":x}`).
_COLON = re.compile(r":(?=[ \t]|$)|(?<=[\"']):")
# A whole reference as a value, quoted or not, up to where the value ends.
_REFERENCE = re.compile(r"""(["']?)\$\{(?:env|file):[^}]+\}\1[ \t]*(?:$|#|[,}\]])""")
_LOOK = 1_000  # a value this long is no reference; reading further would make a long line slow
# The line breaks ruamel counts (as Document.line does), so a number means the same line here.
_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


def _hidden(document: Document) -> dict[int, str]:
    """The lines never shown, each with the text on it that may be the secret: what follows a
    secret's key, or the whole line. Computed once per document, as a report renders many
    diagnostics."""
    global _cached
    if _cached is not None and _cached[0] is document:
        return _cached[1]
    lines = _LINE_BREAK.split(document.text)
    secret = _SecretKeys()
    found = {number: lines[number - 1] for number in _covered(document, len(lines), secret)}
    found.update(_written(lines, secret))
    _cached = (document, found)
    return found


_cached: tuple[Document, dict[int, str]] | None = None


class _SecretKeys(dict[str, bool]):
    """`is_secret_key`, remembered: a file repeats its keys many times."""

    def __missing__(self, key: str) -> bool:
        self[key] = found = bool(key) and secrets.is_secret_key(key)
        return found


def _written(lines: list[str], secret: _SecretKeys) -> Iterator[tuple[int, str]]:
    """The lines that write a secret, read from the text alone, so that it works on a file that
    does not parse (a T001 on the password's own line): a line where a secret's key (block or
    flow style) has a value that is not empty and not a whole reference, whatever the value
    starts with (`&`, `*`, `|`, `[`, `!`...); and below a secret's key that starts its line, the
    lines indented more than that key, which continue its value (a block scalar after `|` or
    `>`, a plain or quoted scalar, a nested value). Linear in the text's length."""
    under: int | None = None  # the column of the secret's key whose value may go on below
    for number, line in enumerate(lines, 1):
        if under is not None:
            if not line.strip() or _indent(line) > under:
                yield number, line
                continue
            under = None
        if ":" not in line:
            continue
        value, under = _secret_on(line, secret)
        if value is not None:
            yield number, value


def _secret_on(line: str, secret: _SecretKeys) -> tuple[str | None, int | None]:
    """What follows a secret's key on the line, if it writes the secret there (else None); and
    the key's column if it starts the line, as its value may continue on the lines below."""
    value: str | None = None
    column: int | None = None
    start = 0
    for colon in _COLON.finditer(line):
        segment = line[start : colon.start()]
        cut = max(segment.rfind("{"), segment.rfind("["), segment.rfind(","))
        raw = segment[cut + 1 :]
        key = raw.strip().lstrip("-? \t").strip("\"'")
        first = start == 0 and cut < 0  # the key starts the line (block style)
        start = colon.end()
        if not secret[key]:
            continue
        rest = line[start : start + _LOOK]
        if _written_value(rest.strip(), flow=not first):
            value = rest
        if first:
            column = len(raw) - len(raw.lstrip(" \t-?"))
    return value, column


def _written_value(value: str, *, flow: bool) -> bool:
    """Whether the text after a secret's key writes a value: anything but nothing, a whole
    reference, or (in a flow collection) the `,` or `}` that ends an empty value. A comment is
    taken for a value, as it may hold the secret commented out."""
    if not value or (flow and value[0] in ",}]"):
        return False
    return _REFERENCE.match(value) is None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _covered(document: Document, last_line: int, secret: _SecretKeys) -> Iterator[int]:
    """The lines a secret value of the parsed document covers: from its first line to the line
    before the next key or value that is not part of it starts (a quoted value, a list or an
    alias's anchored value can run over several lines)."""
    if document.data is None:
        return
    ends: list[tuple[int, int]] = []
    for path, span in document.values.items():
        if not (path and isinstance(path[-1], str) and secret[path[-1]]):
            continue
        value = _at(document.data, path)
        if not _written_data(value):
            continue
        last = span.line
        if isinstance(value, (list, dict)):
            last = max(_lines_under(document, path), default=last)
        ends.append((span.line, last))
    if not ends:
        return
    starts = sorted({s.line for s in (*document.values.values(), *document.keys.values())})
    for first, last in ends:
        after = bisect_right(starts, last)
        end = starts[after] - 1 if after < len(starts) else last_line
        yield from range(first, max(last, end) + 1)


def _written_data(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip()) and secrets.reference(value) is None
    if isinstance(value, (list, dict)):
        return bool(value)
    return value is not None


def _lines_under(document: Document, path: tuple[str | int, ...]) -> Iterator[int]:
    depth = len(path)
    for spans in (document.values, document.keys):
        for inner, span in spans.items():
            if len(inner) > depth and inner[:depth] == path:
                yield span.line


def _at(data: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


# A quoted fragment of a message: what it quotes from the file.
_QUOTED = re.compile(r"""'([^'\n]*)'|"([^"\n]*)\"""")


def redacted(diagnostic: Diagnostic, document: Document) -> Diagnostic:
    """The diagnostic, with what its message quotes from the secret on its line replaced by
    `'…'` (a parser's `found undefined alias 'Xy9secret'` for `password: *Xy9secret`). `as_text`
    and `as_json` show only this; anything else that prints a message should too."""
    message = diagnostic.message
    if diagnostic.secret or ("'" not in message and '"' not in message):
        return diagnostic
    secret = _hidden(document).get(diagnostic.span.line)
    if secret is None:
        return diagnostic

    def cut(found: re.Match[str]) -> str:
        quoted = found.group(1) if found.group(1) is not None else found.group(2)
        quoted = quoted.removesuffix("...")  # a long value is quoted cut short
        if quoted and any(c.isalnum() for c in quoted) and quoted in secret:
            return found.group()[0] + "…" + found.group()[0]
        return found.group()

    return replace(diagnostic, message=_QUOTED.sub(cut, message))


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
        "diagnostics": [redacted(d, document).to_dict() for d in diagnostics],
    }


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
