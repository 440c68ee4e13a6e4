"""YAML text -> plain data, with the position of every key and value, and syntax diagnostics.

ruamel's composer gives nodes with marks; we build plain dicts, lists and scalars from them
ourselves so that duplicate keys can be reported (every one, with both places) instead of
aborting, and so that later stages can point at `clusters.east.bootstrap` as `file:line:col`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.parser import Parser

from topology.diagnostics import Diagnostic, Span, error

Path = tuple[str | int, ...]

# Scalars we hand to ruamel's constructor; anything else (timestamps, custom tags) stays the text
# the user wrote, so a schema saying "string" accepts a value that merely looks like a date.
_NATIVE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
# Aliases expand into copies, so a short file can stand for billions of values ("billion laughs");
# past this many the rest is not built. Real topologies have a few thousand.
MAX_VALUES = 1_000_000
# Python refuses to turn an int of more than 4300 digits into text, and every message does that.
_MAX_NUMBER_TEXT = 1_000


@dataclass(frozen=True)
class Document:
    """One parsed file: its text, its data, and where each path's key and value are."""

    file: str
    text: str
    data: Any
    values: Mapping[Path, Span] = field(default_factory=dict)
    keys: Mapping[Path, Span] = field(default_factory=dict)

    def span(self, path: Path, *, key: bool = False) -> Span:
        """The closest known position for `path` (its key if asked, else its value)."""
        probe = tuple(path)
        while probe:
            found = self.keys.get(probe) if key else self.values.get(probe)
            if found is None and not key:
                found = self.keys.get(probe)
            if found is not None:
                return found
            probe = probe[:-1]
        return self.values.get((), Span(self.file, 1, 1))

    def line(self, number: int) -> str:
        lines = self.text.splitlines()
        return lines[number - 1] if 0 < number <= len(lines) else ""


def parse(text: str, file: str) -> tuple[Document, list[Diagnostic]]:
    """Parse YAML text; a syntax error becomes a diagnostic and the data is None."""
    yaml = YAML(typ="safe", pure=True)
    try:
        root = _compose(text, yaml)
    except MarkedYAMLError as problem:
        mark = problem.problem_mark or problem.context_mark
        span = Span(file, mark.line + 1, mark.column + 1) if mark else Span(file, 1, 1)
        reason = problem.problem or problem.context or "not valid YAML"
        return Document(file, text, None), [error("T001", f"YAML syntax: {reason}", span)]
    except YAMLError as problem:  # unmarked errors (e.g. a bad encoding) still name the file
        return Document(file, text, None), [
            error("T001", f"YAML syntax: {problem}", Span(file, 1, 1))
        ]
    builder = _Builder(file, yaml)
    data = builder.build(root, ()) if root is not None else None
    return Document(file, text, data, builder.values, builder.keys), builder.diagnostics


def _compose(text: str, pure: YAML) -> Node | None:
    """The node tree, from ruamel's C parser (libyaml) when it is installed: five times faster
    on a large file, with the same nodes and marks. Its error messages differ, so a text it
    refuses goes to the pure parser, which says what is wrong in the words we show."""
    fast = YAML(typ="safe", pure=False)
    if fast.Parser is not Parser:
        try:
            root: Node | None = fast.compose(text)
            return root
        except (YAMLError, ValueError):
            pass
    root = pure.compose(text)
    return root


class _Builder:
    def __init__(self, file: str, yaml: YAML) -> None:
        self.file = file
        self.yaml = yaml
        self.values: dict[Path, Span] = {}
        self.keys: dict[Path, Span] = {}
        self.diagnostics: list[Diagnostic] = []
        self._open: set[int] = set()  # the collections being built: an alias to one is a cycle
        self._count = 0

    def _span(self, node: Node) -> Span:
        return Span(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def build(self, node: Node, path: Path) -> Any:
        self.values.setdefault(path, self._span(node))
        self._count += 1
        if self._count > MAX_VALUES:
            if self._count == MAX_VALUES + 1:
                self.diagnostics.append(
                    error(
                        "T001",
                        f"YAML: the document expands to more than {MAX_VALUES:,} values "
                        "(aliases copy what they refer to); the rest is not read",
                        self._span(node),
                    )
                )
            return None
        if isinstance(node, ScalarNode):
            return self._scalar(node)
        return self._collection(node, path)

    def _collection(self, node: Node, path: Path) -> Any:
        if id(node) in self._open:
            self.diagnostics.append(
                error(
                    "T001",
                    "YAML: the value anchored here contains an alias to itself, so it never ends",
                    self._span(node),
                )
            )
            return None
        self._open.add(id(node))
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            assert isinstance(node, SequenceNode)
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        finally:
            self._open.discard(id(node))

    def _scalar(self, node: ScalarNode) -> Any:
        tag, text = node.tag, str(node.value)
        if tag == _STR_TAG or tag not in _NATIVE_TAGS:  # most values: no constructor needed
            return text
        kind = tag.rsplit(":", 1)[-1]
        if kind == "int" and len(text) > _MAX_NUMBER_TEXT:
            self.diagnostics.append(
                error("T104", f"a number of {len(text)} characters is too long", self._span(node))
            )
            return text
        try:
            return self.yaml.constructor.construct_object(node, deep=True)
        except (YAMLError, ValueError, KeyError):  # `!!int abc`: an explicit tag that does not fit
            shown = text if len(text) <= 40 else text[:40] + "..."
            self.diagnostics.append(
                error("T001", f"YAML: {shown!r} is not a valid !!{kind}", self._span(node))
            )
            return text

    def _mapping(self, node: MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, Span] = {}
        merges = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges.append(value_node)
                continue
            key = self._key(key_node)
            child = (*path, key)
            if key in seen:
                self.diagnostics.append(
                    error(
                        "T002",
                        f"duplicate key '{key}' (first at line {seen[key].line}); "
                        "YAML keeps only one, so the other would be lost",
                        self._span(key_node),
                    )
                )
                continue
            seen[key] = self._span(key_node)
            self.keys.setdefault(child, seen[key])
            result[key] = self.build(value_node, child)
        # Explicit keys win over merged ones (`<<: *base`), as the YAML merge spec says. Built
        # after them, merged values never take the positions the explicit ones recorded.
        merged: dict[str, Any] = {}
        for value_node in merges:
            for key, value in self._merge_source(value_node, path).items():
                merged.setdefault(key, value)
        return {**merged, **result}

    def _merge_source(self, node: Node, path: Path) -> dict[str, Any]:
        sources = node.value if isinstance(node, SequenceNode) else [node]
        merged: dict[str, Any] = {}
        for source in sources:  # earlier sources take precedence
            if isinstance(source, MappingNode):
                for key, value in (self._collection(source, path) or {}).items():
                    merged.setdefault(key, value)
            else:
                self.diagnostics.append(
                    error(
                        "T103",
                        "a merge key (<<) needs a mapping or a list of them",
                        self._span(source),
                    )
                )
        return merged

    def _key(self, node: Node) -> str:
        if isinstance(node, ScalarNode):
            return str(node.value)
        self.diagnostics.append(error("T103", "keys must be plain strings", self._span(node)))
        return f"<complex key at line {node.start_mark.line + 1}>"
