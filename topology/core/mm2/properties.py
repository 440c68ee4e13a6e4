"""Java's .properties format (java.util.Properties.load), read with line numbers, and written.

Reading follows the JDK's rules exactly, because MM2 reads its file with them: `#` and `!` start
comment lines; the key ends at the first unescaped `=`, `:` or whitespace; a line ending in an odd
number of backslashes continues on the next one (whose leading whitespace is dropped); `\\t`,
`\\n`, `\\r`, `\\f` and `\\uXXXX` are escapes and a backslash before any other character is
dropped, so `topics=a\\.b` means the regex `a.b`. Writing escapes what reading would change.
"""

import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WHITESPACE = " \t\f"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Property(NamedTuple):
    """One key/value pair and where it is: 1-based lines and columns, as editors count.

    A named tuple rather than a frozen dataclass: a file of 200,000 properties makes as many,
    and a tuple is built three times faster."""

    key: str
    value: str
    line: int
    column: int
    value_line: int
    value_column: int
    last_line: int  # the last physical line of the entry (continuations)


@dataclass(frozen=True)
class SyntaxProblem:
    message: str
    line: int
    column: int


def parse(text: str) -> tuple[list[Property], list[SyntaxProblem]]:
    """Every entry in file order (repeats included: the caller decides about them).

    Linear in the text, with regexes doing the per-character work: a file of one 10 MB line, or
    of 200,000 lines, is read in well under a second.
    """
    lines = physical_lines(text)
    entries: list[Property] = []
    problems: list[SyntaxProblem] = []
    index = 0
    while index < len(lines):
        stripped = lines[index].lstrip(_WHITESPACE)
        if not stripped or stripped[0] in "#!":
            index += 1
            continue
        # Join the physical lines of one logical line, remembering where each piece starts.
        pieces: list[tuple[int, int, str]] = []  # (line number, column of first char, text)
        column = len(lines[index]) - len(stripped) + 1
        piece = stripped
        while piece.endswith("\\") and _continues(piece) and index + 1 < len(lines):
            pieces.append((index + 1, column, piece[:-1]))
            index += 1
            following = lines[index].lstrip(_WHITESPACE)
            column = len(lines[index]) - len(following) + 1
            piece = following
        if piece.endswith("\\") and _continues(piece):  # at the end of the file: dropped
            piece = piece[:-1]
        pieces.append((index + 1, column, piece))
        index += 1
        entry, problem = _entry(pieces)
        entries.append(entry)
        if problem:
            problems.append(problem)
    return entries, problems


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def physical_lines(text: str) -> list[str]:
    """Lines as the JDK splits them: at \\n, \\r and \\r\\n only."""
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


# The key runs to the first unescaped `=`, `:` or blank; then blanks, one `=` or `:`, blanks.
_KEY_AND_SEPARATOR = re.compile(
    r"((?:[^\\=: \t\f]+|\\.|\\\Z)*)[ \t\f]*(?:[=:][ \t\f]*)?", re.DOTALL
)


def _entry(pieces: list[tuple[int, int, str]]) -> tuple[Property, SyntaxProblem | None]:
    raw = pieces[0][2] if len(pieces) == 1 else "".join(text for _, _, text in pieces)
    match = _KEY_AND_SEPARATOR.match(raw)
    assert match is not None  # every part of the pattern may be empty
    key_end, value_start = match.end(1), match.end()
    key, key_problem = _unescape(raw[:key_end])
    value, value_problem = _unescape(raw[value_start:])
    if len(pieces) == 1:  # most entries: one line, positions by arithmetic
        key_line = value_line = pieces[0][0]
        key_column, value_column = pieces[0][1], pieces[0][1] + value_start
    else:
        key_line, key_column = _position(pieces, 0)
        value_line, value_column = _position(pieces, value_start)
    problem = None
    reason = key_problem or value_problem
    if reason:
        problem = SyntaxProblem(reason, key_line, key_column)
    entry = Property(
        key, value, key_line, key_column, value_line, value_column, last_line=pieces[-1][0]
    )
    return entry, problem


def _position(pieces: list[tuple[int, int, str]], offset: int) -> tuple[int, int]:
    """(line, column) of the character at `offset` in the joined pieces; past the end, the
    position just after the last piece."""
    for line, column, text in pieces:
        if offset < len(text):
            return line, column + offset
        offset -= len(text)
    line, column, text = pieces[-1]
    return line, column + len(text)


# An escape: \\uXXXX, a \\u without four hex digits (malformed), or a backslash and any character.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(u)|(.))", re.DOTALL)


def _unescape(text: str) -> tuple[str, str | None]:
    """The JDK's loadConvert; a malformed \\uXXXX is reported (the JDK throws on it)."""
    if "\\" not in text:
        return text, None
    malformed: list[int] = []

    def replace(match: re.Match[str]) -> str:
        if match[1] is not None:
            return chr(int(match[1], 16))
        if match[2] is not None:
            malformed.append(match.start())
            return ""
        return _ESCAPES.get(match[3], match[3])

    unescaped = _ESCAPE.sub(replace, text)
    if malformed:
        start = malformed[0]
        before = _ESCAPE.sub(replace, text[:start])
        digits = text[start + 2 : start + 6]
        return _join_surrogates(before), f"malformed \\uXXXX escape '\\u{digits}'"
    joined = _join_surrogates(unescaped)
    lone = _SURROGATE.search(joined)
    if lone:
        # Half a UTF-16 pair is no character: UTF-8 and YAML cannot hold it (libyaml refuses
        # the escape), so the topology could not be written.
        half = f"\\u{ord(lone[0]):04x}"
        return joined, f"'{half}' is half of a UTF-16 surrogate pair, which no YAML file can hold"
    return joined, None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _join_surrogates(text: str) -> str:
    """Java strings are UTF-16: `\\ud83d\\ude00` is one character, and so it is here."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# -- writing ------------------------------------------------------------------------------

_KEY_SPECIALS = re.compile(r"([ =:#!])")


def escape_key(key: str) -> str:
    escaped = _controls(key.replace("\\", "\\\\"))
    return _ascii(_KEY_SPECIALS.sub(r"\\\1", escaped))


def escape_value(value: str) -> str:
    """Backslashes doubled, control characters escaped, leading blanks kept, non-ASCII as \\u."""
    escaped = _controls(value.replace("\\", "\\\\"))
    if escaped.startswith(" "):
        escaped = "\\" + escaped
    return _ascii(escaped)


def _controls(text: str) -> str:
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t").replace("\f", "\\f")


def _ascii(text: str) -> str:
    # MM2 loads the file as ISO-8859-1 (Properties.load(InputStream)); \u escapes survive that.
    return "".join(char if ord(char) < 128 else _utf16_escape(char) for char in text)


def _utf16_escape(char: str) -> str:
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def line(key: str, value: str, width: int = 100) -> str:
    """`key = value`, escaped so that `parse` gives back exactly (key, value).

    A long comma-separated list is continued over several lines (`\\` at the end), one
    indented item group per line, as people write MM2's topic lists.
    """
    written = escape_value(value)
    if not written:
        return f"{escape_key(key)} ="
    first = f"{escape_key(key)} = "
    items = written.split(", ")
    if len(first) + len(written) <= width or any(i[:1] in _WHITESPACE for i in items[1:]):
        return first + written
    lines, current = [], first
    for index, item in enumerate(items):
        piece = item + (", " if index < len(items) - 1 else "")
        if current.strip() and current != first and len(current) + len(piece) > width - 2:
            lines.append(current + "\\")
            current = "    "
        current += piece
    return "\n".join([*lines, current])


def comment(text: str, width: int = 98) -> list[str]:
    """`# text`: each line of text wrapped to `width`; a leading `- ` indents what follows."""
    lines: list[str] = []
    for part in text.splitlines() or [""]:
        indent = "  " if part.startswith("- ") else ""
        wrapped = textwrap.wrap(
            part,
            width=width - 2,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines += [f"# {piece}".rstrip() for piece in wrapped or [""]]
    return lines


def mask(text: str, secrets: Iterable[Property]) -> str:
    """The text with the values of `secrets` replaced by `****`, line count unchanged.

    Diagnostics show the offending line of the file; a line holding a password must never be
    printed as it is.
    """
    lines = physical_lines(text)
    for entry in secrets:
        first = entry.value_line - 1
        if 0 <= first < len(lines) and entry.value:
            lines[first] = lines[first][: entry.value_column - 1] + "****"
            for following in range(first + 1, min(entry.last_line, len(lines))):
                lines[following] = ""
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")
