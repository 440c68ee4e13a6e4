"""Topology data -> YAML text a person would have written: header comment, flow style where short.

Short mappings and lists are written inline (`mirror: {from: east, to: west}`,
`include: [orders, 'payments\\..*']`), as in the files in examples/; anything longer than a line
is written as a block. Regexes are single-quoted so backslashes read as they are, and secret
references double-quoted, as examples/ writes them.

The text must mean the same to every YAML loader people point at it: YAML 1.2 ones (topo's own,
ruamel) and YAML 1.1 ones (PyYAML, and the many tools built on libyaml). ruamel's emitter decides
quoting by YAML 1.2 alone, so it writes `{bootstrap: a:9092}` (libyaml stops at the `:`) and
`yes` or `1:20` unquoted (strings in 1.2, a bool and the integer 80 in 1.1). So every string's
quoting is decided here, by `scalar`, and ruamel only carries it out.
"""

import io
import re
from collections.abc import Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

_INLINE_WIDTH = 72  # an inline collection longer than this (as text) becomes a block
_REFERENCE = re.compile(r"\$\{(env|file):[^}]+\}")
# Where regexes live: their strings are quoted even when YAML would not need it.
_REGEX_PARENTS = {"include", "exclude"}
_REGEX_PLAIN = re.compile(r"[A-Za-z0-9_-]+")
# Plain (unquoted) only from characters that are no indicator anywhere, in any YAML version.
_FLOW_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")
# In a block, `,` is text and so is a `:` not followed by a space (host:port lists).
_BLOCK_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./,-]*(?::[A-Za-z0-9_./,-]+)*")
# Both versions' implicit typing: a plain scalar is a string only if both say so.
_RESOLVERS = (VersionedResolver(version=(1, 1)), VersionedResolver(version=(1, 2)))
_STR_TAG = "tag:yaml.org,2002:str"


def render(data: dict[str, Any], header: Sequence[str] = ()) -> str:
    document = _convert(data, parent="", depth=0, flow=False)
    assert isinstance(document, CommentedMap)
    yaml = YAML()
    yaml.width = 1 << 30  # never wrap or fold: the inline/block choice is made here
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    out.writelines(f"# {_comment_safe(line)}\n" if line else "\n" for line in header)
    yaml.dump(document, out)
    return _space_sections(out.getvalue())


def scalar(value: str, flow: bool, regex: bool = False) -> str:
    """The string, marked for the quoting every loader reads back as this same string.

    Plain only when it is plainly text to YAML 1.1 and 1.2 alike; double quotes when it holds
    characters that need an escape (line breaks, tabs, control and non-printable characters);
    single quotes otherwise, which keep backslashes as they are.
    """
    marked: str = value  # ruamel's quoting markers are str subclasses
    if _REFERENCE.fullmatch(value) or _needs_escape(value):
        marked = DoubleQuotedScalarString(value)
    elif not _plain(value, flow, regex):
        marked = SingleQuotedScalarString(value)
    return marked


def _plain(value: str, flow: bool, regex: bool) -> bool:
    if regex:
        return bool(_REGEX_PLAIN.fullmatch(value)) and _is_text_in_every_version(value)
    shape = _FLOW_PLAIN if flow else _BLOCK_PLAIN
    return bool(shape.fullmatch(value)) and _is_text_in_every_version(value)


def _is_text_in_every_version(value: str) -> bool:
    return all(r.resolve(ScalarNode, value, (True, False)) == _STR_TAG for r in _RESOLVERS)


def _needs_escape(value: str) -> bool:
    return any(not _printable(char) for char in value)


def _printable(char: str) -> bool:
    """YAML's printable set, less the characters YAML 1.1 reads as line breaks or a BOM."""
    return char not in "\u2028\u2029\ufeff" and (
        "\x20" <= char <= "\x7e"
        or "\xa0" <= char <= "\ud7ff"
        or "\ue000" <= char <= "\ufffd"
        or "\U00010000" <= char <= "\U0010ffff"
    )


def _comment_safe(line: str) -> str:
    """A header line that stays one comment line: it names files and properties from the user's
    input, and a line break in one (YAML 1.1 also breaks at U+2028) would end the comment."""
    return "".join(char if _printable(char) else f"\\u{ord(char):04x}" for char in line)


def _convert(value: Any, parent: str, depth: int, flow: bool) -> Any:
    """ruamel's commented values; `parent` is the key above, `depth` the nesting level, `flow`
    whether an enclosing collection is written inline."""
    if isinstance(value, dict):
        # Sections (clusters, defaults, flows) and list items stay blocks: they are what a
        # reader scans for.
        inline = flow or (depth > 1 and bool(parent) and _inline(value))
        mapping = CommentedMap(
            (_key(key, inline), _convert(item, key, depth + 1, inline))
            for key, item in value.items()
        )
        if inline:
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        inline = flow or _inline(value)
        sequence = CommentedSeq(
            _convert(item, "" if isinstance(item, dict) else parent, depth + 1, inline)
            for item in value
        )
        if inline:
            sequence.fa.set_flow_style()
        return sequence
    if isinstance(value, str):
        return scalar(value, flow, regex=parent in _REGEX_PARENTS)
    return value


def _key(key: Any, flow: bool) -> Any:
    # A key is read as a plain scalar too: a cluster called `on` is the bool True in YAML 1.1.
    return scalar(key, flow=True) if isinstance(key, str) else key


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
    """About as long as the inline text ruamel will write (quotes counted, escapes not)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_text(k)}: {_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_text(item) for item in value) + "]"
    if isinstance(value, str) and not _FLOW_PLAIN.fullmatch(value):
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
