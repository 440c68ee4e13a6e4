"""Topology data -> YAML text a person would have written: header comment, flow style where short.

Short mappings and lists are written inline (`mirror: {from: east, to: west}`,
`include: [orders, 'payments\\..*']`), as in DESIGN.md's example; anything longer than a line
is written as a block. Regexes are single-quoted so backslashes read as they are, and secret
references double-quoted, as the design's examples show them.

The text must mean the same to every YAML loader people point at it: YAML 1.2 ones (topo's own,
ruamel) and YAML 1.1 ones (PyYAML, and the many tools built on libyaml). A general emitter
decides quoting by one version only (ruamel's wrote `{bootstrap: a:9092}`, which libyaml refuses,
and `yes` or `1:20` unquoted: strings in 1.2, a bool and the integer 80 in 1.1). So this module
writes the text itself: the data is plain (mappings, lists, strings, numbers, booleans), and
every string's quoting is decided by `_scalar` for both versions. Writing it here is also linear:
a topology of 200,000 topics is written in a fraction of a second.
"""

import math
import re
from collections.abc import Sequence
from typing import Any

from ruamel.yaml.resolver import implicit_resolvers

_INLINE_WIDTH = 72  # an inline collection longer than this (as text) becomes a block
_SIMPLE_KEY = 1000  # YAML 1.1 loaders refuse a key longer than 1024 characters on one line
_REFERENCE = re.compile(r"\$\{(env|file):[^}]+\}")
# Where regexes live: their strings are quoted even when YAML would not need it.
_REGEX_PARENTS = {"include", "exclude"}
# Plain (unquoted) only from characters that are no indicator anywhere, in any YAML version, and
# never starting with `-`: a lone `-` in a block list is `- -`, a nested list to every loader.
_REGEX_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_FLOW_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")
# In a block, `,` is text and so is a `:` not followed by a space (host:port lists).
_BLOCK_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./,-]*(?::[A-Za-z0-9_./,-]+)*")
# What YAML 1.1 or 1.2 would read a plain scalar as, other than a string (bool, int, float,
# null, timestamp, merge...): ruamel's resolver patterns of both versions, by first character.
_TYPED: dict[str, list[re.Pattern[str]]] = {}
for _versions, _tag, _lazy, _firsts in implicit_resolvers:
    _pattern = re.compile(_lazy.pattern, _lazy.flags)  # compiled here: ruamel's are lazy
    for _first in _firsts:
        _TYPED.setdefault(_first, []).append(_pattern)
# Characters a YAML scalar cannot hold as they are: outside YAML's printable set, or read as a
# line break (YAML 1.1's U+0085, U+2028, U+2029) or a byte order mark.
_UNPRINTABLE = re.compile(
    "[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029\ufeff]"
)
_NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\0": "\\0", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_DOUBLE_ESCAPED = re.compile(r'[\\"]|' + _UNPRINTABLE.pattern)


def render(data: dict[str, Any], header: Sequence[str] = ()) -> str:
    lines = [f"# {_comment_safe(line)}" if line else "" for line in header]
    lines += _block_mapping(data, indent=0, depth=0)
    return _space_sections(lines)


# -- collections ----------------------------------------------------------------------------


def _block_mapping(mapping: dict[Any, Any], indent: int, depth: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for key, value in mapping.items():
        key_text = _key(key)
        if len(key_text) > _SIMPLE_KEY:  # too long for a simple key: an explicit one
            lines.append(f"{pad}? {key_text}")
            key_text = ""
        if isinstance(value, dict | list) and value and not _inline_here(value, key, depth + 1):
            lines.append(f"{pad}{key_text}:")
            if isinstance(value, dict):
                lines += _block_mapping(value, indent + 2, depth + 1)
            else:
                lines += _block_sequence(value, indent + 2, str(key), depth + 1)
        else:
            lines.append(f"{pad}{key_text}: {_value(value, str(key), flow=False)}")
    return lines


def _block_sequence(sequence: list[Any], indent: int, parent: str, depth: int) -> list[str]:
    """`- item` lines at `indent`; a mapping item's keys line up after the `- `."""
    pad = " " * indent
    lines: list[str] = []
    for item in sequence:
        if isinstance(item, dict) and item:
            inner = _block_mapping(item, indent + 2, depth + 1)
        elif isinstance(item, list) and item and not _inline(item):
            inner = _block_sequence(item, indent + 2, parent, depth + 1)
        else:
            lines.append(f"{pad}- {_value(item, parent, flow=False)}")
            continue
        lines.append(f"{pad}- {inner[0][indent + 2 :]}")
        lines += inner[1:]
    return lines


def _inline_here(value: dict[str, Any] | list[Any], parent: str, depth: int) -> bool:
    # Sections (clusters, defaults, flows) and list items stay blocks: they are what a reader
    # scans for.
    if isinstance(value, dict):
        return depth > 1 and bool(parent) and _inline(value)
    return _inline(value)


def _inline(value: dict[str, Any] | list[Any]) -> bool:
    """Inline when every item is a scalar (or a short list) and it fits on a line."""
    if len(value) > _INLINE_WIDTH // 3:  # "[a, b, ...]": more items than that cannot fit
        return False
    items = value.values() if isinstance(value, dict) else value
    nested = [item for item in items if isinstance(item, dict | list)]
    if any(isinstance(item, dict) for item in nested):
        return False
    if any(not _inline(item) for item in nested):
        return False
    return len(_flow(value, parent="")) <= _INLINE_WIDTH


def _flow(value: Any, parent: str) -> str:
    if isinstance(value, dict):
        items = (f"{_key(k)}: {_flow(v, str(k))}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item, parent) for item in value) + "]"
    return _value(value, parent, flow=True)


def _value(value: Any, parent: str, flow: bool) -> str:
    if isinstance(value, dict | list):
        return _flow(value, parent)
    if isinstance(value, str):
        return _scalar(value, flow, regex=parent in _REGEX_PARENTS)
    return _non_string(value)


def _key(key: Any) -> str:
    # A key is read as a plain scalar too: a cluster called `on` is the bool True in YAML 1.1.
    return _scalar(key, flow=True) if isinstance(key, str) else _non_string(key)


# -- scalars --------------------------------------------------------------------------------


def _scalar(value: str, flow: bool, regex: bool = False) -> str:
    """The string as YAML text every loader reads back as this same string.

    Plain only when it is plainly text to YAML 1.1 and 1.2 alike; double quotes for secret
    references (as the design writes them) and for characters that need an escape (line breaks,
    tabs, control and non-printable characters); single quotes otherwise, which keep
    backslashes as they are.
    """
    # isprintable() is a fast, stricter test: what it accepts needs no escape in YAML.
    if _REFERENCE.fullmatch(value) or (not value.isprintable() and _UNPRINTABLE.search(value)):
        return '"' + _DOUBLE_ESCAPED.sub(_escape, value) + '"'
    if _plain(value, flow, regex):
        return value
    return "'" + value.replace("'", "''") + "'"


def _plain(value: str, flow: bool, regex: bool) -> bool:
    shape = _REGEX_PLAIN if regex else _FLOW_PLAIN if flow else _BLOCK_PLAIN
    return bool(shape.fullmatch(value)) and not _typed(value)


def _typed(value: str) -> bool:
    """Whether YAML 1.1 or 1.2 would read this plain scalar as something other than a string."""
    return any(pattern.match(value) for pattern in _TYPED.get(value[:1], ()))


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _non_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        # YAML 1.1 reads a float only with a dot: 1e+20 would be a string there.
        return text if "." in text else text.replace("e", ".0e", 1)
    return str(value)


# -- the page -------------------------------------------------------------------------------


def _comment_safe(line: str) -> str:
    """A header line that stays one comment line: it names files and properties from the user's
    input, and a line break in one (YAML 1.1 also breaks at U+2028) would end the comment."""
    return _UNPRINTABLE.sub(lambda match: f"\\u{ord(match[0]):04x}", line)


def _space_sections(lines: list[str]) -> str:
    """A blank line before each top-level key after the header, as people space these files."""
    out: list[str] = []
    seen_key = False
    for line in lines:
        top_level_key = bool(line) and not line[0].isspace() and not line.startswith(("#", "-"))
        if top_level_key and (seen_key or (out and out[-1].startswith("#"))):
            out.append("")
        seen_key = seen_key or top_level_key
        out.append(line)
    return "\n".join(out) + "\n"
