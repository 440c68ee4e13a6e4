"""Topology data -> YAML text a person would have written: header comment, flow style where short.

Short mappings and lists are written inline (`mirror: {from: east, to: west}`,
`include: [orders, 'payments\\..*']`), as in DESIGN.md's example; anything longer than a line
is written as a block. Regexes are single-quoted so backslashes read as they are, and secret
references double-quoted, as the design's examples show them.
"""

import io
import re
from collections.abc import Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

_INLINE_WIDTH = 72  # an inline collection longer than this (as text) becomes a block
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:-]*")
_REFERENCE = re.compile(r"\$\{(env|file):[^}]+\}")
# Where regexes live: their strings are quoted even when YAML would not need it.
_REGEX_PARENTS = {"include", "exclude"}


def render(data: dict[str, Any], header: Sequence[str] = ()) -> str:
    document = _convert(data, parent="")
    assert isinstance(document, CommentedMap)
    if header:
        document.yaml_set_start_comment("\n".join(header))
    yaml = YAML()
    yaml.width = 4096  # never wrap: the inline/block choice is made here
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump(document, out)
    return _space_sections(out.getvalue())


def _convert(value: Any, parent: str, depth: int = 0) -> Any:
    """ruamel's commented values; `parent` is the key above, `depth` the nesting level."""
    if isinstance(value, dict):
        mapping = CommentedMap((key, _convert(item, key, depth + 1)) for key, item in value.items())
        # Sections (clusters, defaults, flows) and list items stay blocks: they are what a
        # reader scans for.
        if depth > 1 and parent and _inline(value):
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        sequence = CommentedSeq(
            _convert(item, "" if isinstance(item, dict) else parent, depth + 1) for item in value
        )
        if _inline(value):
            sequence.fa.set_flow_style()
        return sequence
    if isinstance(value, str):
        return _scalar(value, regex=parent in _REGEX_PARENTS)
    return value


def _scalar(value: str, regex: bool) -> str:
    """The string, marked for the quoting ruamel should use (its marker types are str)."""
    quoted: str = value
    if _REFERENCE.fullmatch(value):
        quoted = DoubleQuotedScalarString(value)
    elif regex and not re.fullmatch(r"[A-Za-z0-9_-]+", value):
        quoted = SingleQuotedScalarString(value)
    return quoted


def _inline(value: dict[str, Any] | list[Any]) -> bool:
    """Inline when every item is a scalar (or a short list) and it fits on a line."""
    items = value.values() if isinstance(value, dict) else value
    nested = [item for item in items if isinstance(item, dict | list)]
    if any(isinstance(item, dict) for item in nested):
        return False
    if any(not _inline(item) for item in nested):
        return False
    return len(_text(value)) <= _INLINE_WIDTH


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_text(item) for item in value) + "]"
    if isinstance(value, str) and not _PLAIN.fullmatch(value):
        return f"'{value}'"
    return str(value)


def _space_sections(text: str) -> str:
    """A blank line before each top-level key after the header, as people space these files."""
    lines = text.splitlines()
    out: list[str] = []
    seen_key = False
    for line in lines:
        top_level_key = bool(line) and not line[0].isspace() and not line.startswith(("#", "-"))
        if top_level_key and (seen_key or (out and out[-1].startswith("#"))):
            out.append("")
        seen_key = seen_key or top_level_key
        out.append(line)
    return "\n".join(out) + "\n"
