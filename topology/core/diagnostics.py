"""Diagnostics as values: every problem topo finds in a file, with where it is.

The front end never stops at the first problem. Each stage returns the diagnostics it found and
the CLI decides the exit code from `has_errors`. Codes are stable: they are documented in
docs/diagnostics.md and tests check that every code below has a page entry and a golden case.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


# Every code topo can emit, with a short title. Never renumber: users silence and search by code.
CODES: dict[str, str] = {
    "T001": "YAML syntax error",
    "T002": "duplicate key",
    "T003": "document is not a topology",
    "T004": "unsupported version",
    "T101": "unknown key",
    "T102": "missing required key",
    "T103": "wrong type",
    "T104": "invalid value",
    "T105": "flow kind",
    "T201": "unknown cluster",
    "T202": "invalid regular expression",
    "T203": "malformed bootstrap address",
    "T204": "malformed secret reference",
    "T205": "incomplete security settings",
    "T206": "secret written in plain text",
    "T207": "illegal topic name",
    "T208": "topic names collide in metrics",
    "T209": "incomplete engine settings",
    "T210": "objective that cannot be measured",
    "T211": "local master too small for the copy slots",
    "T212": "removed engine trigger",
    "T213": "client setting topo keeps for itself",
    "T214": "admin setting topo's admin plane takes otherwise",
    "T301": "self-loop",
    "T302": "duplicate edge",
    "T303": "unprotected identity loop",
    "T304": "topic name collision",
    "T305": "remote name equals a local topic",
    "T306": "remote topic name too long",
    "T307": "flow replicates nothing",
    "T308": "topics arrive by more than one path",
    "T309": "analysis limit reached",
    "T310": "too many replication edges",
    "M001": "properties syntax error",
    "M002": "duplicate property",
    "M003": "no clusters list",
    "M004": "invalid cluster alias",
    "M005": "missing bootstrap servers",
    "M006": "cluster not in the clusters list",
    "M007": "flow names an unlisted cluster",
    "M008": "no enabled flow",
    "M009": "property topo does not map",
    "M010": "unknown property",
    "M011": "invalid value",
    "M012": "custom MirrorMaker plug-in",
    "M013": "old property name",
    "M014": "reference topo cannot keep",
    "M015": "property without effect in MM2",
    "M016": "topo behaves differently",
    "M017": "MM2 cannot express this",
    "M018": "identity loop in MM2",
    "M019": "two settings write one MM2 property",
    "M020": "name MM2 cannot hold",
    "M021": "secret not copied",
    "M022": "not MirrorMaker 2's configuration",
    "M023": "what MM2's connectors say apart",
    "M024": "login topo cannot import",
}


@dataclass(frozen=True, order=True)
class Span:
    """A position in a file; line and column are 1-based, as editors show them."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Note:
    """A second place that explains a diagnostic, such as where the parser gave up on a bracket
    opened lines before."""

    span: Span
    message: str

    def headline(self) -> str:
        return f"{self.span}: note: {one_line(self.message)}"

    def to_dict(self) -> dict[str, object]:
        return {
            "message": self.message,
            "file": self.span.file,
            "line": self.span.line,
            "column": self.span.column,
        }


@dataclass(frozen=True)
class Diagnostic:
    """One problem and where it is. `secret` marks a diagnostic about a secret written in the
    file: its message never quotes the value, and no renderer shows the line that holds it
    (only FILE:LINE:COL), so a password does not end up in a CI log or a review comment."""

    severity: Severity
    code: str
    message: str
    span: Span
    notes: tuple[Note, ...] = ()
    secret: bool = False

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"undocumented diagnostic code {self.code}")

    def headline(self) -> str:
        """`FILE:LINE:COL: error[CODE]: message`, the compiler-style line editors can jump to."""
        return f"{self.span}: {self.severity.value}[{self.code}]: {one_line(self.message)}"

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "file": self.span.file,
            "line": self.span.line,
            "column": self.span.column,
        }
        if self.notes:
            found["notes"] = [note.to_dict() for note in self.notes]
        if self.secret:
            found["secret"] = True
        return found


# Messages quote what the file says, and a key may hold a newline or a terminal's escape.
_CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]")


def one_line(message: str) -> str:
    """The message on one line, with control characters written as escapes (`\\n`): what a
    terminal shows of text read from a user's file."""
    return _CONTROL.sub(lambda found: found.group().encode("unicode_escape").decode(), message)


def error(
    code: str, message: str, span: Span, *, notes: tuple[Note, ...] = (), secret: bool = False
) -> Diagnostic:
    return Diagnostic(Severity.ERROR, code, message, span, notes, secret)


def warning(code: str, message: str, span: Span, *, secret: bool = False) -> Diagnostic:
    return Diagnostic(Severity.WARNING, code, message, span, secret=secret)


# The errors after which the analysis of a file stops (T309): past them a report would list no
# more (it lists the first 50), and finding and wording each costs time a file of 100,000 of
# them would spend for nothing.
ERROR_LIMIT = 200


def error_count(diagnostics: Iterable[Diagnostic]) -> int:
    return sum(1 for d in diagnostics if d.severity is Severity.ERROR)


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)


def in_file_order(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sorted by position, then code, with exact repeats dropped (two rules can agree)."""
    # Plain tuples: Span's generated comparisons and hash are Python calls, seconds for 100,000.
    unique = {(*_place(d.span), d.code, d.message): d for d in diagnostics}
    return [unique[key] for key in sorted(unique)]


def _place(span: Span) -> tuple[str, int, int]:
    return span.file, span.line, span.column
