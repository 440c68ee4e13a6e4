"""Check a parsed document against the packaged topology JSON Schema; every error, located.

jsonschema's messages are written for schema authors ("Additional properties are not allowed");
each error is rewritten here for the person editing the YAML, at the key or value it concerns.
"""

import difflib
import json
import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from topology.core.diagnostics import Diagnostic, error, warning
from topology.core.schema_proof import surely_valid
from topology.core.source import Document, Path

FLOW_KINDS = ("mirror", "active-active", "aggregate")
VERSION = 1
# A mapping with thousands of unknown keys is one mistake (a file that is not a topology, or
# one indented wrongly); past this many, one more diagnostic counts the rest (fewer than a
# report lists, so that one is shown).
MAX_UNKNOWN_KEYS = 20
# jsonschema takes about 0.1 ms to find and describe each problem, so a file that repeats one
# mistake 100,000 times took seconds; past this many it stops and says so (T309).
MAX_PROBLEMS = 200


@cache
def topology_schema() -> dict[str, Any]:
    """The JSON Schema of version 1 topology files, as shipped in schemas/."""
    text = resources.files("topology").joinpath("resources/schemas/topology.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


@cache
def _validator() -> Draft202012Validator:
    checker: Draft202012Validator = _EcmaPatternValidator(
        _inlined(topology_schema(), topology_schema())
    )
    return checker


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """`pattern` as JSON Schema means it (ECMA-262): `$` is the very end of the text. Python's
    `$` also matches before a final newline, which let a cluster name end in one."""
    if isinstance(instance, str) and not ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def ecma_regex(pattern: str) -> re.Pattern[str]:
    """A JSON Schema `pattern` compiled so that `$` is the very end of the text."""
    at_end = pattern.endswith("$") and not pattern.endswith("\\$")
    return re.compile(pattern[:-1] + r"\Z" if at_end else pattern)


_ADDITIONAL = Draft202012Validator.VALIDATORS["additionalProperties"]


def _additional_in_order(
    validator: Any, rule: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """`additionalProperties` with a schema, checked in the mapping's order: jsonschema walks a
    set (hash order, so another order each run), and the check stops after MAX_PROBLEMS, which
    must be the same ones every time."""
    if not (isinstance(rule, dict) and isinstance(instance, dict)):
        yield from _ADDITIONAL(validator, rule, instance, schema)
        return
    named = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))
    for key, value in instance.items():
        if key in named or (patterns and re.search(patterns, key)):
            continue
        if not surely_valid(rule, value, ecma_regex):  # most values: no descent
            yield from validator.descend(value, rule, path=key)


_ITEMS = Draft202012Validator.VALIDATORS["items"]


def _items(
    validator: Any, rule: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """`items`, with each item `surely_valid` proves right passed without jsonschema's descent
    (30 µs an item: a list of 20,000 flows took a second)."""
    if not (isinstance(rule, dict) and isinstance(instance, list)) or "prefixItems" in schema:
        yield from _ITEMS(validator, rule, instance, schema)
        return
    for index, item in enumerate(instance):
        if not surely_valid(rule, item, ecma_regex):
            yield from validator.descend(item, rule, path=index)


def _property_names(
    validator: Any, rule: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """`propertyNames`, with each name that a plain `{type: string, pattern}` rule accepts
    passed without jsonschema's descent (10 µs a name: a second for 100,000 clusters). A name
    it refuses is checked the usual way, for the usual error."""
    if not isinstance(instance, dict):
        return
    plain = (
        isinstance(rule, dict)
        and set(rule) - _ANNOTATIONS <= {"type", "pattern"}
        and rule.get("type", "string") == "string"
        and isinstance(rule.get("pattern"), str)
    )
    accepts = ecma_regex(rule["pattern"]).search if plain else None
    for name in instance:
        if accepts is not None and isinstance(name, str) and accepts(name):
            continue
        yield from validator.descend(instance=name, schema=rule)


_EcmaPatternValidator = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "pattern": _ecma_pattern,
        "additionalProperties": _additional_in_order,
        "propertyNames": _property_names,
        "items": _items,
    },
)


# Keywords that only describe: a `$ref` beside them can be merged into one schema.
_ANNOTATIONS = {"description", "title", "default", "$comment"}


def _inlined(node: Any, root: dict[str, Any]) -> Any:
    """The schema with every local `$ref` replaced by what it points at.

    The same rules, checked twice as fast on a large file: jsonschema looks each `$ref` up again
    for every value it checks. The schema has no recursive references, so this ends.
    """
    if isinstance(node, list):
        return [_inlined(item, root) for item in node]
    if not isinstance(node, dict):
        return node
    rest = {k: _inlined(v, root) for k, v in node.items() if k not in ("$ref", "$defs")}
    if "$ref" not in node:
        return rest
    target: Any = root
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    target = _inlined(target, root)
    if set(rest) <= _ANNOTATIONS:
        return {**target, **rest}
    return {**rest, "allOf": [target]}


def check(document: Document) -> list[Diagnostic]:
    """Every schema problem in the document, each pointing at its key or value."""
    data = document.data
    if not isinstance(data, dict):
        what = "empty" if data is None else f"{_kind(data)}, not a mapping"
        return [
            error(
                "T003",
                "a topology file is a mapping with version, clusters and flows; this one is "
                f"{what}",
                document.span(()),
            )
        ]
    if "version" in data and not _is_version(data["version"], document):
        written = document.written(("version",)) or repr(data["version"])
        return [
            error(
                "T004",
                f"version {written} is not supported; this topo reads version {VERSION}, "
                f"written `version: {VERSION}`",
                document.span(("version",)),
            )
        ]
    checked = _regex_lists_shortened(data)
    found: list[Diagnostic] = []
    for count, problem in enumerate(_validator().iter_errors(checked)):
        if count == MAX_PROBLEMS:
            found.append(_stopped(problem, document))
            break
        found += _explain(problem, document)
    return found + _flow_kinds(data, document)


def _stopped(problem: ValidationError, document: Document) -> Diagnostic:
    """Where the check stopped: at the first problem past the limit, which it does not explain."""
    return warning(
        "T309",
        f"stopped checking the file against the schema after {MAX_PROBLEMS} problems; there "
        "are more, not reported: fix these and validate again",
        document.span(tuple(problem.absolute_path)),
    )


# Every `include` and `exclude` in the schema is a regexList: non-empty strings, nothing more.
_REGEX_LIST_KEYS = frozenset({"include", "exclude"})


def _regex_lists_shortened(data: Any) -> Any:
    """The data with each include/exclude list that is already right (all non-empty strings)
    cut to its first item. jsonschema costs about 15 µs per item, so a list of 200,000 topic
    names took seconds; a list with any wrong item is kept whole, so every error is reported
    at its own index."""
    if isinstance(data, list):  # a scalar is itself: no call for each of 300,000
        return [
            item if type(item) not in _NESTED else _regex_lists_shortened(item) for item in data
        ]
    if not isinstance(data, dict):
        return data
    shortened = {}
    for key, value in data.items():
        if key in _REGEX_LIST_KEYS and isinstance(value, list) and _all_names(value):
            shortened[key] = value[:1]
        elif type(value) in _NESTED:
            shortened[key] = _regex_lists_shortened(value)
        else:
            shortened[key] = value
    return shortened


_NESTED = (list, dict)


def _all_names(items: list[Any]) -> bool:
    return all(type(item) is str and item for item in items)


def _is_version(value: Any, document: Document) -> bool:
    """The version, written as the plain integer. YAML also reads `1.0`, `0x1`, `+1` and `01`
    (and `true`, in Python) as equal to 1; a file saying so is not one this topo can vouch for."""
    exact = type(value) is int and value == VERSION
    return exact and document.written(("version",)) == str(VERSION)


def path_text(path: Path) -> str:
    """`flows[2].topics.include[0]`: how a location reads in a message."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


def _explain(problem: ValidationError, document: Document) -> list[Diagnostic]:
    path: Path = tuple(problem.absolute_path)
    where = path_text(path)
    kind = problem.validator
    if kind == "additionalProperties" and isinstance(problem.instance, dict):
        allowed = sorted(_rule_schema(problem).get("properties", {}))
        unknown = [key for key in problem.instance if key not in allowed]
        found = [
            error(
                "T101",
                f"unknown key {_brief(key)} in {where}{_suggest(key, allowed)}",
                document.span((*path, key), key=True),
            )
            for key in unknown[:MAX_UNKNOWN_KEYS]
        ]
        if len(unknown) > MAX_UNKNOWN_KEYS:
            rest = len(unknown) - MAX_UNKNOWN_KEYS
            found.append(
                error(
                    "T101",
                    f"{rest:,} more unknown keys in {where} from here on are not listed",
                    document.span((*path, unknown[MAX_UNKNOWN_KEYS]), key=True),
                )
            )
        return found
    if kind == "required" and isinstance(problem.instance, dict):
        return [
            error("T102", f"{where} needs '{key}'", document.span(path, key=True))
            for key in _rule(problem)
            if key not in problem.instance
        ]
    if kind == "type":
        expected = _rule(problem)
        wanted = " or ".join(
            _TYPE_WORDS.get(t, t) for t in ([expected] if isinstance(expected, str) else expected)
        )
        return [
            error(
                "T103",
                f"{where} must be {wanted}, not {_kind(problem.instance)}",
                document.span(path),
            )
        ]
    # jsonschema reports a bad name as the `pattern` (or other rule) under `propertyNames`,
    # at the mapping: point at the name's own key.
    if kind != "propertyNames" and "propertyNames" in problem.relative_schema_path:
        key = document.span((*path, str(problem.instance)), key=True)
        return [error("T104", f"{where}: {_value_problem(problem)}", key)]
    if kind == "propertyNames":
        # The failing name is the instance; point at that key.
        name = str(problem.instance)
        return [
            error(
                "T104",
                f"{_brief(name)} is not a valid cluster name: use a letter or digit, then letters, "
                "digits, '_' or '-' (at most 64)",
                document.span((*path, name), key=True),
            )
        ]
    return [error("T104", f"{where}: {_value_problem(problem)}", document.span(path))]


def _value_problem(problem: ValidationError) -> str:
    kind, rule = problem.validator, _rule(problem)
    value = _brief(problem.instance)
    if kind == "enum":
        return f"{value} is not one of {', '.join(map(str, rule))}"
    if kind == "const":
        return f"must be {rule!r}, not {value}"
    if kind == "pattern":
        rule_text = _rule_schema(problem).get("description", f"pattern {rule}")
        return f"{value} is not allowed here ({rule_text})"
    if kind in ("minimum", "maximum"):
        return f"{value} must be {'at least' if kind == 'minimum' else 'at most'} {rule}"
    if kind == "minItems":
        return f"needs at least {rule} item{'s' if rule != 1 else ''}"
    if kind == "minProperties":
        return f"needs at least {rule} entr{'ies' if rule != 1 else 'y'}"
    if kind == "minLength":
        return "must not be empty"
    return _brief(problem.message)[1:-1] if len(problem.message) > 80 else problem.message


def _brief(value: Any) -> str:
    """`repr` for a message, cut short: a value of megabytes must not become a megabyte line."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(str(value)):,} characters)"


def _rule(problem: ValidationError) -> Any:
    """The schema value the instance failed (the list of a `required`, the bound of a `minimum`)."""
    return problem.validator_value


def _rule_schema(problem: ValidationError) -> dict[str, Any]:
    return problem.schema if isinstance(problem.schema, dict) else {}


def _flow_kinds(data: dict[str, Any], document: Document) -> list[Diagnostic]:
    flows = data.get("flows")
    found: list[Diagnostic] = []
    for index, flow in enumerate(flows if isinstance(flows, list) else []):
        if not isinstance(flow, dict):
            continue
        kinds = [k for k in FLOW_KINDS if k in flow]
        if not kinds:
            found.append(
                error(
                    "T105",
                    f"flows[{index}] needs one of mirror, active-active or aggregate",
                    document.span(("flows", index)),
                )
            )
        elif len(kinds) > 1:
            found.append(
                error(
                    "T105",
                    f"flows[{index}] has {' and '.join(kinds)}; a flow is exactly one kind, so "
                    "split it in two",
                    document.span(("flows", index, kinds[1]), key=True),
                )
            )
    return found


def _suggest(key: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; expected one of: {', '.join(allowed)}" if allowed else ""


_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"
