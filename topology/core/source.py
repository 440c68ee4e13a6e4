"""YAML text -> plain data, with the position of every key and value, and syntax diagnostics.

ruamel's composer gives nodes with marks; we build plain dicts, lists and scalars from them
ourselves so that duplicate keys can be reported (every one, with both places) instead of
aborting, and so that later stages can point at `clusters.east.bootstrap` as `file:line:col`.
"""

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, overload

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
)
from ruamel.yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.parser import Parser
from ruamel.yaml.reader import ReaderError

from topology.core.diagnostics import Diagnostic, Note, Span, error

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
_DECIMAL = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_MERGE_TAG = "tag:yaml.org,2002:merge"
# Aliases expand into copies, so a short file can stand for billions of values ("billion laughs");
# past this many the rest is not built. Real topologies have a few thousand.
MAX_VALUES = 1_000_000
# Python refuses to turn an int of more than 4300 digits into text, and every message does that.
_MAX_NUMBER_TEXT = 1_000
# Real topologies nest fewer than 10 levels. Deeper values are refused before anything recurses
# over them: Python would raise RecursionError near 1,000 levels and a C parser overflow its
# stack (a segmentation fault) near 50,000.
MAX_DEPTH = 100
# A file that repeats a key thousands of times is one mistake; past this many reports of it, one
# more diagnostic counts the rest (fewer than a report lists, so that one is shown).
MAX_DUPLICATE_REPORTS = 20
# The line breaks ruamel counts in its marks (YAML 1.1's), so a line number means the same here.
_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


_T = TypeVar("_T")


class Spans(Mapping[Path, Span]):
    """Positions by path, kept as (line, column) and made a Span when read: a file of 300,000
    values made 300,000 Spans (a fifth of a second) that hardly any reader asks for."""

    __slots__ = ("_at", "_file")

    def __init__(self, file: str = "", at: dict[Path, tuple[int, int]] | None = None) -> None:
        self._file, self._at = file, at or {}

    def lines(self) -> Iterator[tuple[Path, int]]:
        """Each path with the line it starts on, without a Span for each."""
        return ((path, at[0]) for path, at in self._at.items())

    def __getitem__(self, path: Path) -> Span:
        line, column = self._at[path]
        return Span(self._file, line, column)

    @overload
    def get(self, path: Path, /) -> Span | None: ...

    @overload
    def get(self, path: Path, /, default: Span | _T) -> Span | _T: ...

    def get(self, path: Path, /, default: object = None) -> object:
        found = self._at.get(path)
        return default if found is None else Span(self._file, *found)

    def __contains__(self, path: object) -> bool:
        return path in self._at

    def __iter__(self) -> Iterator[Path]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


@dataclass(frozen=True)
class Document:
    """One parsed file: its text, its data, and where each path's key and value are."""

    file: str
    text: str
    data: Any
    values: Spans = field(default_factory=Spans)
    keys: Spans = field(default_factory=Spans)

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
        lines = self._lines
        return lines[number - 1] if 0 < number <= len(lines) else ""

    @cached_property
    def _lines(self) -> list[str]:
        # Split once: a report shows a line for each of possibly thousands of diagnostics.
        lines = _LINE_BREAK.split(self.text)
        return lines[:-1] if lines and lines[-1] == "" else lines

    def written(self, path: Path) -> str:
        """The scalar at `path` as the file spells it (`0x1`, not the 1 it means)."""
        span = self.values.get(tuple(path))
        if span is None:
            return ""
        found = _TOKEN.match(self.line(span.line), span.column - 1)
        return found.group().rstrip() if found else ""


# A scalar's text (with its tag, if any) up to where a flow collection, a comment or the line
# would end it.
_TOKEN = re.compile(r"[^,#\]}]*")


def parse(text: str, file: str) -> tuple[Document, list[Diagnostic]]:
    """Parse YAML text; a syntax error becomes a diagnostic and the data is None."""
    # A byte-order mark (Windows editors, PowerShell) is not part of the text: the parser skips
    # it, so line 1's columns and the text we show and re-read must skip it too.
    text = text.removeprefix("\ufeff")
    yaml = YAML(typ="safe", pure=True)
    try:
        root = _compose(text, yaml)
    except _TooDeep as deep:
        problem = (
            f"YAML: values nest more than {MAX_DEPTH} levels deep here (a topology needs fewer "
            "than 10); the file is not read further"
        )
        return Document(file, text, None), [error("T001", problem, _at(file, deep.mark))]
    except _TooMany as many:
        problem = (
            f"YAML: the document expands to more than {MAX_VALUES:,} values (aliases copy what "
            "they refer to); the file is not read further"
        )
        return Document(file, text, None), [error("T001", problem, _at(file, many.mark))]
    except _SyntaxError as problem:
        return Document(file, text, None), [_syntax_error(problem.found, problem.open, file)]
    except ReaderError as problem:  # a character YAML forbids: located, not "position 878"
        return Document(file, text, None), [_forbidden_character(problem, text, file)]
    except YAMLError as problem:  # unmarked errors (e.g. a bad encoding) still name the file
        return Document(file, text, None), [
            error("T001", f"YAML syntax: {problem}", Span(file, 1, 1))
        ]
    lines = _LINE_BREAK.split(text)
    builder = _Builder(file, yaml, (len(lines), len(lines[-1]) + 1))
    data = builder.build(root, ()) if root is not None else None
    values, keys = Spans(file, builder.values), Spans(file, builder.keys)
    return Document(file, text, data, values, keys), builder.finish()


def _at(file: str, mark: Any) -> Span:
    return Span(file, mark.line + 1, mark.column + 1)


# What ruamel says while inside something that must be closed, and what that opener is.
_OPENERS = {
    "while parsing a flow mapping": "this '{'",
    "while parsing a flow sequence": "this '['",
    "while scanning a quoted scalar": "this quote",
}
_GAVE_UP = (
    "expected ',' or ",
    "did not find expected ',' or ",  # libyaml's words for the same
    "expected the node content, but found '<stream end>'",
    "found unexpected end of stream",
    "found unexpected document",
)


def _syntax_error(problem: MarkedYAMLError, open_flow: Node | None, file: str) -> Diagnostic:
    """The error where the user must look: at an unclosed bracket or quote, not only at the
    place, possibly many lines on, where the parser noticed; that place becomes a note."""
    reason = problem.problem or problem.context or "not valid YAML"
    start, stop = problem.context_mark, problem.problem_mark
    opener = _OPENERS.get(problem.context or "")
    if opener is None and open_flow is not None and "<stream end>" in reason:
        # ruamel names no opener when the file ends inside a flow collection; ours is known
        opener = "this '{'" if isinstance(open_flow, MappingNode) else "this '['"
        start = open_flow.start_mark
    if opener and start and stop and reason.startswith(_GAVE_UP):
        at_end = "end of stream" in reason or "<stream end>" in reason
        where = "the end of the file" if at_end else f"line {stop.line + 1}"
        message = f"YAML syntax: {opener} is not closed before {where} ({reason})"
        note = Note(_at(file, stop), "the parser gave up here")
        return error("T001", message, _at(file, start), notes=(note,))
    mark = stop or start
    return error("T001", f"YAML syntax: {reason}", _at(file, mark) if mark else Span(file, 1, 1))


def _forbidden_character(problem: ReaderError, text: str, file: str) -> Diagnostic:
    character = problem.character
    code = ord(character) if isinstance(character, str) else int(character)
    before = text[: problem.position]
    line_start = max(before.rfind(c) for c in "\n\r\x85\u2028\u2029") + 1
    span = Span(file, len(_LINE_BREAK.findall(before)) + 1, problem.position - line_start + 1)
    return error("T001", f"YAML syntax: character U+{code:04X} is not allowed in YAML text", span)


class _TooDeep(Exception):
    def __init__(self, mark: Any) -> None:
        super().__init__("too deep")
        self.mark = mark


class _TooMany(Exception):
    def __init__(self, mark: Any) -> None:
        super().__init__("too many values")
        self.mark = mark


class _SyntaxError(YAMLError):
    """ruamel's error, with the innermost flow collection open when it was raised."""

    def __init__(self, found: MarkedYAMLError, open_flow: Node | None) -> None:
        super().__init__(str(found))
        self.found = found
        self.open = open_flow


def _compose(text: str, pure: YAML) -> Node | None:
    """The node tree, from ruamel's C parser (libyaml) when it is installed: five times faster
    on a large file, with the same nodes and marks. Its error messages differ, so a text it
    refuses goes to the pure parser, which says what is wrong in the words we show; unless the
    text is so large that the pure parser would take seconds, when libyaml's words will do."""
    fast = YAML(typ="safe", pure=False)
    if fast.Parser is not Parser:
        try:
            return _Composer(fast).compose(fast.parse(text))
        except _SyntaxError:
            if len(text) > _PURE_MESSAGES_UP_TO:
                raise
        except (YAMLError, ValueError):
            pass
    return _Composer(pure).compose(pure.parse(text))


_PURE_MESSAGES_UP_TO = 1_000_000  # characters; the pure parser reads about a megabyte a second


class _Composer:
    """ruamel's composer, without recursion: nodes built from parser events on a stack, so no
    depth of nesting can overflow Python's or C's stack, and one deeper than MAX_DEPTH is
    refused at the place it crosses the limit. It also counts the values the document stands
    for once aliases are copied, and stops at the alias that takes them past MAX_VALUES, so a
    few lines that expand to billions cost nothing to refuse."""

    def __init__(self, yaml: YAML) -> None:
        # first character -> [(tag, regex)]: YAML 1.2's rules for an untagged plain scalar
        self.implicit: dict[str | None, list[tuple[str, Any]]] = yaml.resolver.versioned_resolver
        self.by_start: dict[str, list[tuple[str, Any]]] = {}
        self.anchors: dict[Any, Node] = {}
        self.open: list[CollectionNode] = []
        self.keys: list[Node | None] = []  # per open collection: a key waiting for its value
        self.root: Node | None = None
        self.documents = 0
        self.values = 0  # so far, with every alias counted as the values it copies
        self.sizes: dict[Any, int] = {}  # anchor -> the values it stands for
        self.opened_at: list[int] = []  # per open collection: `values` before it

    def compose(self, events: Iterable[Event]) -> Node | None:
        scalar, take = self._scalar, self._take
        try:
            for event in events:
                if type(event) is ScalarEvent:  # most events: the short way
                    scalar(event)
                else:
                    take(event)
        except MarkedYAMLError as found:
            flows = [node for node in self.open if node.flow_style]
            raise _SyntaxError(found, flows[-1] if flows else None) from None
        return self.root

    def _scalar(self, event: ScalarEvent) -> None:
        """`_take` of a scalar, in one call instead of five: a file of 300,000 values has as
        many of them."""
        node = _Scalar(self._scalar_tag(event), event.value, event.start_mark)
        self.values += 1
        if self.values > MAX_VALUES:
            raise _TooMany(event.start_mark)
        if event.anchor is not None:
            self._anchor(event, node)
        if not self.open:
            self.root = node
            return
        top = self.open[-1]
        if type(top) is _Sequence:
            top.value.append(node)
            return
        key = self.keys[-1]
        if key is None:
            self.keys[-1] = node
        else:
            top.value.append((key, node))
            self.keys[-1] = None

    def _take(self, event: Event) -> None:
        node: Node
        if isinstance(event, ScalarEvent):
            self._scalar(event)
            return
        if isinstance(event, CollectionStartEvent):
            if len(self.open) >= MAX_DEPTH:
                raise _TooDeep(event.start_mark)
            self.opened_at.append(self.values)
            self._count(1, event)
            mapping = isinstance(event, MappingStartEvent)
            kind = _Mapping if mapping else _Sequence
            tag = _explicit_tag(event) or (_MAP_TAG if mapping else _SEQ_TAG)
            collection = kind(tag, [], event.start_mark, None, event.flow_style)
            self._anchor(event, collection)
            self.open.append(collection)
            self.keys.append(None)
            return
        elif isinstance(event, CollectionEndEvent):
            node = self.open.pop()
            self.keys.pop()
            node.end_mark = event.end_mark
            if node.anchor is not None:
                self.sizes[node.anchor] = self.values - self.opened_at[-1]
            self.opened_at.pop()
        elif isinstance(event, AliasEvent):
            if event.anchor not in self.anchors:
                raise MarkedYAMLError(
                    problem=f"found undefined alias {event.anchor!r}",
                    problem_mark=event.start_mark,
                )
            node = self.anchors[event.anchor]
            self._count(self.sizes.get(event.anchor, 1), event)  # 1: an alias to itself
        elif isinstance(event, DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise MarkedYAMLError(
                    problem="a topology file holds one YAML document, but another starts here",
                    problem_mark=event.start_mark,
                )
            return
        else:  # the stream's and the document's other events carry no values
            return
        self._add(node)

    def _scalar_tag(self, event: ScalarEvent) -> str:
        """What ruamel's resolver answers, without its per-call lookups (a third of the time
        on a large file)."""
        tag = event.ctag
        if tag is not None:
            explicit = _explicit_tag(event)
            if explicit is not None:
                return explicit
        value = event.value
        if event.implicit[0]:
            start = value[:1]
            rules = self.by_start.get(start)
            if rules is None:
                lazy = self.implicit.get(start, []) + self.implicit.get(None, [])
                # ruamel compiles each rule on first use behind a proxy that every match pays for
                rules = [(tag, re.compile(regex.pattern, regex.flags)) for tag, regex in lazy]
                self.by_start[start] = rules
            for tag, regex in rules:
                if regex.match(value):
                    return str(tag)
        return _STR_TAG

    def _anchor(self, event: NodeEvent, node: Node) -> None:
        if event.anchor is not None:
            self.anchors[event.anchor] = node
            node.anchor = event.anchor
            self.sizes[event.anchor] = 1

    def _count(self, values: int, event: Event) -> None:
        self.values += values
        if self.values > MAX_VALUES:
            raise _TooMany(event.start_mark)

    def _add(self, node: Node) -> None:
        """Put a finished node where it belongs: the root, a list item, a key or its value."""
        if not self.open:
            self.root = node
        elif isinstance(self.open[-1], SequenceNode):
            self.open[-1].value.append(node)
        elif self.keys[-1] is None:
            self.keys[-1] = node
        else:
            self.open[-1].value.append((self.keys[-1], node))
            self.keys[-1] = None


def _explicit_tag(event: ScalarEvent | CollectionStartEvent) -> str | None:
    tag = event.ctag
    return None if tag is None or str(tag) == "!" else str(tag)


_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"


# ruamel's nodes keep the tag as a Tag object and render it to text on every read; these keep
# the text. They are still ruamel nodes, so its constructor reads them.
class _Scalar(ScalarNode):
    __slots__ = ("tag",)

    def __init__(self, tag: str, value: str, start_mark: Any) -> None:
        self.tag = tag
        self.value = value
        self.start_mark = self.end_mark = start_mark
        self.style = self.comment = self.anchor = None


class _Sequence(SequenceNode):
    __slots__ = ("tag",)

    def __init__(self, tag: str, value: list[Any], start: Any, end: Any, flow: Any) -> None:
        self.tag = tag
        self.value = value
        self.start_mark, self.end_mark, self.flow_style = start, end, flow
        self.comment = self.anchor = None


class _Mapping(MappingNode):
    __slots__ = ("tag",)

    def __init__(self, tag: str, value: list[Any], start: Any, end: Any, flow: Any) -> None:
        self.tag = tag
        self.value = value
        self.start_mark, self.end_mark, self.flow_style = start, end, flow
        self.comment = self.anchor = self.merge = None


class _Builder:
    def __init__(self, file: str, yaml: YAML, end: tuple[int, int]) -> None:
        self.file = file
        self.yaml = yaml
        self.end = end  # where the text ends: (line, column), as positions are kept
        self.values: dict[Path, tuple[int, int]] = {}
        self.keys: dict[Path, tuple[int, int]] = {}
        self.diagnostics: list[Diagnostic] = []
        self._open: set[int] = set()  # the collections being built: an alias to one is a cycle
        self._count = 0
        self._duplicates: list[Span] = []  # every repeated key; the first few are reported

    def finish(self) -> list[Diagnostic]:
        """The diagnostics found, with repeated keys past the first few counted in one more."""
        unreported = self._duplicates[MAX_DUPLICATE_REPORTS:]
        if unreported:
            self.diagnostics.append(
                error(
                    "T002",
                    f"{len(unreported):,} more duplicate keys from here on are not listed",
                    unreported[0],
                )
            )
        return self.diagnostics

    def _at(self, node: Node) -> tuple[int, int]:
        """The node's (line, column), 1-based."""
        mark = node.start_mark
        at = (mark.line + 1, mark.column + 1)
        # libyaml puts an empty value at the very end (`---` alone), past the text
        return self.end if at > self.end else at

    def _span(self, node: Node) -> Span:
        return Span(self.file, *self._at(node))

    def build(self, node: Node, path: Path) -> Any:
        if path not in self.values:
            self.values[path] = self._at(node)
        self._count += 1
        if type(node) is _Scalar and node.tag == _STR_TAG and self._count <= MAX_VALUES:
            return node.value  # most values: a string, nothing to check or convert
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

    def _item(self, node: Node, path: Path) -> Any:
        """`build` of a list item or a mapping's value, a plain string without another call:
        a file of 300,000 values has as many of them."""
        if type(node) is not _Scalar or node.tag != _STR_TAG or self._count >= MAX_VALUES:
            return self.build(node, path)
        if path not in self.values:
            mark = node.start_mark
            at = (mark.line + 1, mark.column + 1)
            self.values[path] = self.end if at > self.end else at
        self._count += 1
        return node.value

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
            return [self._item(item, (*path, i)) for i, item in enumerate(node.value)]
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
        if kind == "int" and _DECIMAL.fullmatch(text):  # the common case, without the constructor
            return int(text)
        try:
            return self.yaml.constructor.construct_object(node, deep=True)
        except (YAMLError, ValueError, KeyError):  # `!!int abc`: an explicit tag that does not fit
            self.diagnostics.append(
                error("T001", f"YAML: {_shown(text)!r} is not a valid !!{kind}", self._span(node))
            )
            return text

    def _mapping(self, node: MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, tuple[int, int]] = {}
        merges = []
        keys, item, place = self.keys, self._item, self._at
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merges.append(value_node)
                continue
            key = key_node.value if type(key_node) is _Scalar else self._key(key_node)
            if key in seen:
                self._duplicate(key, seen[key][0], self._span(key_node))
                continue
            child = (*path, key)
            seen[key] = at = place(key_node)
            if child not in keys:
                keys[child] = at
            result[key] = item(value_node, child)
        # Explicit keys win over merged ones (`<<: *base`), as the YAML merge spec says. Built
        # after them, merged values never take the positions the explicit ones recorded.
        merged: dict[str, Any] = {}
        for value_node in merges:
            for key, value in self._merge_source(value_node, path).items():
                merged.setdefault(key, value)
        return {**merged, **result}

    def _duplicate(self, key: str, first: int, again: Span) -> None:
        self._duplicates.append(again)
        if len(self._duplicates) <= MAX_DUPLICATE_REPORTS:
            self.diagnostics.append(
                error(
                    "T002",
                    f"duplicate key '{_shown(key)}' (first at line {first}); "
                    "YAML keeps only one, so the other would be lost",
                    again,
                )
            )

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


def _shown(text: str) -> str:
    """Text quoted in a message, cut short: a megabyte key must not become a megabyte line."""
    return text if len(text) <= 40 else text[:40] + "..."
