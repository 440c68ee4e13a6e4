"""Diagnostics as people read them (compiler style, with the line) and as machines do (JSON).

A line that holds a secret written in the file is never shown: not under a diagnostic about
that secret (`Diagnostic.secret`, such as T206), nor under any other diagnostic that happens to
point at the same line, whatever the value starts with and whether or not the file parses.
FILE:LINE:COL and the message still say where and what; what a message quotes from the secret
(a YAML parser's `found undefined alias 'Xy9...'`) is left out of it.
"""

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from topology.core import collector, secrets
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
    with collector.paused():  # as many lines and names as the file has: no garbage
        lines = _LINE_BREAK.split(document.text)
        secret = _SecretKeys()
        if len(lines) > _MANY_LINES:
            names = {path[-1] for path in document.keys if isinstance(path[-1], str)}
            secret.refuse_unnamed(names)
        found = {number: lines[number - 1] for number in _covered(document, len(lines), secret)}
        found.update(_written(lines, secret, _naming_lines(document.text, len(lines))))
    _cached = (document, found)
    return found


_MANY_LINES = 2_000  # past this, find the lines that may name a secret in one pass first


def _naming_lines(text: str, count: int) -> list[int] | None:
    """The numbers of the lines that may name a secret's key (`secrets.secret_name_parts`), in
    order; None for a short text, whose every line is looked at."""
    if count <= _MANY_LINES:
        return None
    numbers: list[int] = []
    number, before = 1, 0
    for at in secrets.secret_name_parts(text):  # in order; each at a letter, inside no break
        number += len(_LINE_BREAK.findall(text, before, at))
        before = at
        if not numbers or numbers[-1] != number:
            numbers.append(number)
    return numbers


_cached: tuple[Document, dict[int, str]] | None = None


class _SecretKeys(dict[str, bool]):
    """`is_secret_key`, remembered: a file repeats its keys many times."""

    def __missing__(self, key: str) -> bool:
        self[key] = found = bool(key) and secrets.is_secret_key(key)
        return found

    def refuse_unnamed(self, names: set[str]) -> None:
        """Remember as no secret, in one pass over them all, each name that holds no part of
        a secret's name (`secrets.secret_name_parts`): a file may have 100,000 different keys,
        and asking `is_secret_key` of each took a quarter of a second."""
        fresh = [name for name in names if name not in self]
        starts, at = [], 0
        for name in fresh:
            starts.append(at)
            at += len(name) + 1  # the separator: no part spans it, as parts are words
        named = {bisect_right(starts, i) - 1 for i in secrets.secret_name_parts("\n".join(fresh))}
        self.update((name, False) for i, name in enumerate(fresh) if i not in named)


def _written(
    lines: list[str], secret: _SecretKeys, naming: list[int] | None = None
) -> Iterator[tuple[int, str]]:
    """The lines that write a secret, read from the text alone, so that it works on a file that
    does not parse (a T001 on the password's own line): a line where a secret's key (block or
    flow style) has a value that is not empty and not a whole reference, whatever the value
    starts with (`&`, `*`, `|`, `[`, `!`...); and below a secret's key that starts its line, the
    lines indented more than that key, which continue its value (a block scalar after `|` or
    `>`, a plain or quoted scalar, a nested value). Linear in the text's length; only the
    `naming` lines (every line when None), as no other names a secret."""
    numbers = range(1, len(lines) + 1) if naming is None else naming
    after = 1  # the first line not yet yielded as the continuation of a secret's value
    for number in numbers:
        if number < after:
            continue
        line = lines[number - 1]
        if ":" not in line:
            continue
        value, under = _secret_on(line, secret)
        if value is not None:
            yield number, value
        after = number + 1
        while under is not None and after <= len(lines):
            below = lines[after - 1]
            if below.strip() and _indent(below) <= under:
                break
            yield after, below
            after += 1


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
    collections: dict[tuple[str | int, ...], int] = {}  # a secret's list or mapping: its line
    for path, line in document.values.lines():
        if not (path and isinstance(path[-1], str) and secret[path[-1]]):
            continue
        value = _at(document.data, path)
        if not _written_data(value):
            continue
        if isinstance(value, (list, dict)):
            collections[path] = line
        else:
            ends.append((line, line))
    under = _last_lines_under(document, collections)
    ends += [(line, under.get(path, line)) for path, line in collections.items()]
    if not ends:
        return
    starts = sorted(
        {line for spans in (document.values, document.keys) for _, line in spans.lines()}
    )
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


def _last_lines_under(
    document: Document, paths: dict[tuple[str | int, ...], int]
) -> dict[tuple[str | int, ...], int]:
    """For each of `paths` that has keys or values under it, the last line one starts on: one
    pass over the document, not one for each (10,000 secret lists made it quadratic)."""
    last: dict[tuple[str | int, ...], int] = {}
    if not paths:
        return last
    for spans in (document.values, document.keys):
        for inner, line in spans.lines():
            for depth in range(1, len(inner)):
                prefix = inner[:depth]
                if prefix in paths and line > last.get(prefix, 0):
                    last[prefix] = line
    return last


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


# A report lists the first this many errors, and as many warnings, in file order; one line
# counts the rest, as compilers do. A file with 100,000 problems is a few mistakes repeated,
# and locating and printing each took seconds.
SHOWN_PER_SEVERITY = 50
# Listed whatever their place: they say the analysis stopped early, so the counts are partial.
_ALWAYS_SHOWN = frozenset({"T309", "T310"})


@dataclass(frozen=True)
class Listed:
    """The diagnostics a report shows, and how many of each severity it leaves out."""

    shown: tuple[Diagnostic, ...]
    errors_left_out: int = 0
    warnings_left_out: int = 0

    def left_out(self) -> str | None:
        """`... and 99,950 more errors not shown`, or None when nothing is left out."""
        parts = [
            f"{n:,} more {word}{'' if n == 1 else 's'}"
            for n, word in ((self.errors_left_out, "error"), (self.warnings_left_out, "warning"))
            if n
        ]
        return f"... and {' and '.join(parts)} not shown" if parts else None


def listed(diagnostics: Iterable[Diagnostic], limit: int = SHOWN_PER_SEVERITY) -> Listed:
    """The first `limit` errors and the first `limit` warnings, in the order given, with every
    analysis-limit diagnostic; the others are counted, not rendered."""
    shown: list[Diagnostic] = []
    seen = {Severity.ERROR: 0, Severity.WARNING: 0}
    for diagnostic in diagnostics:
        seen[diagnostic.severity] += 1
        if seen[diagnostic.severity] <= limit or diagnostic.code in _ALWAYS_SHOWN:
            shown.append(diagnostic)
    left = {s: n - sum(d.severity is s for d in shown) for s, n in seen.items()}
    return Listed(tuple(shown), left[Severity.ERROR], left[Severity.WARNING])


def summary(file: str, diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.severity is Severity.ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    if not errors:
        extra = f" ({_count(warnings, 'warning')})" if warnings else ""
        return f"{file}: valid{extra}"
    return f"{file}: {_count(errors, 'error')}, {_count(warnings, 'warning')}"


def as_json(document: Document, diagnostics: Sequence[Diagnostic]) -> dict[str, object]:
    """The file's report as data: the diagnostics `listed` keeps, and under `omitted` how many
    of each severity it left out (absent when none were)."""
    chosen = listed(diagnostics)
    found: dict[str, object] = {
        "file": document.file,
        "valid": not any(d.severity is Severity.ERROR for d in diagnostics),
        "diagnostics": [redacted(d, document).to_dict() for d in chosen.shown],
    }
    if chosen.errors_left_out or chosen.warnings_left_out:
        found["omitted"] = {
            "errors": chosen.errors_left_out,
            "warnings": chosen.warnings_left_out,
        }
    return found


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
