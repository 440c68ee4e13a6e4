"""Saved plans (`topo plan -o PLAN.json`): recognised, checked, read back, compared.

Pure: takes the file's text. A saved plan that is not exactly one topo wrote (hand-edited,
truncated, from another format) is refused with one line saying what is wrong, never
half-applied. What `read` checks, in order, before anything connects or reads the topology:

1. The text is one complete JSON object (a leading UTF-8 byte-order mark is accepted, as some
   editors add one; keys appear once per object; no NaN or Infinity), nested at most
   `MAX_DEPTH` levels.
2. Its `format_version` is this topo's `FORMAT_VERSION`.
3. `topology.file` is a usable path: text (no lone surrogate), no NUL or other control
   character, at most `MAX_PATH` characters and `MAX_NAME` bytes a name, not `-`.
4. It matches `schemas/plan.schema.json`.
5. Its `fingerprint` is the SHA-256 of its content (`model.fingerprint_of`): a plan edited
   after `topo plan` wrote it is refused here.
6. Every change is on one of the plan's clusters (a flow change: on its flow's target), and
   no change appears twice.

After that, apply checks the plan against the topology (`check_topology`) and, once it has
read the clusters again, against the plan topo makes now (`first_difference`). Messages name
fields and positions; they never quote another file's content.
"""

import hmac
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from topology.core.errors import TopoError
from topology.core.model import Topology
from topology.core.plan.guard import (
    canonical,
    clip,
    compared,
    described,
    identity,
    misfit,
    placed,
    shown,
)
from topology.core.plan.values import FORMAT_VERSION, Plan, fingerprint_of, plan_from_dict
from topology.core.schema import ecma_regex


class SavedPlanError(TopoError):
    """A saved plan file that cannot be applied as it is."""


class EditedPlanError(SavedPlanError):
    """A saved plan whose content does not match its fingerprint."""


# topo's plans nest fewer than 10 levels. A deeper file is refused before json.loads, which
# raises RecursionError near 1,000 levels (and everything after it would recurse as deep).
MAX_DEPTH = 100
# A JSON string (skipped whole, so brackets inside one do not count) or a bracket. The closing
# quote is optional: an unclosed string then runs to the end of the text in one match, instead
# of being tried again from every quote after it (quadratic on a file full of \").
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
BOM = "\ufeff"
MAX_PATH = 4096
# The longest name of one folder or file most file systems take (ext4, APFS, NTFS: 255).
MAX_NAME = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# JSON's \ud800 escapes give Python strings no file system (nor stderr) can encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """`pattern` as JSON Schema means it: `$` is the very end of the text (Python's `$` also
    matches before a final newline, which would let an owner or cluster name end in one)."""
    if isinstance(instance, str) and not ecma_regex(pattern).search(instance):
        yield ValidationError(f"{shown(instance)} does not match {pattern!r}")


@cache
def _schema() -> dict[str, Any]:
    text = resources.files("topology").joinpath("resources/schemas/plan.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


def _checker(schema: dict[str, Any]) -> Draft202012Validator:
    extended = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {"pattern": _ecma_pattern}
    )
    checker: Draft202012Validator = extended(schema)
    return checker


@cache
def _validator() -> Draft202012Validator:
    return _checker(_schema())


@cache
def _change_validator(action: str, resource: str) -> Draft202012Validator:
    """The schema of one change of this action and resource: the change's `allOf` of
    if/then branches replaced by the `then` of each branch whose `if` holds. The branches'
    conditions read only `action` and `resource`, so this is the same schema, without testing
    a dozen conditions on each of 12,000 changes (4 s for a 4.6 MB plan)."""
    schema = _schema()
    change = dict(schema["$defs"]["change"])
    probe = {"action": action, "resource": resource}
    branches = change.pop("allOf")
    change["allOf"] = [
        branch["then"] for branch in branches if _checker(branch["if"]).is_valid(probe)
    ]
    inlined = _inlined(change, schema["$defs"], set())
    return _checker({"$schema": schema["$schema"], "$defs": schema["$defs"], **inlined})


def _best(checker: Draft202012Validator, instance: Any) -> ValidationError | None:
    found: ValidationError | None = best_match(checker.iter_errors(instance))
    return found


@cache
def _field_checks(
    action: str, resource: str
) -> tuple[frozenset[str], frozenset[str], dict[str, Draft202012Validator]] | None:
    """The change schema of this kind taken apart: the fields it requires, the fields it
    allows, and a validator for each field's value; None when the schema has keywords this
    does not take apart (then every change is checked whole)."""
    schema = _schema()
    change = schema["$defs"]["change"]
    if set(change) - {
        "type",
        "additionalProperties",
        "required",
        "properties",
        "allOf",
        "description",
    }:
        return None
    if change.get("type") != "object" or change.get("additionalProperties") is not False:
        return None
    probe = {"action": action, "resource": resource}
    branches = [b["then"] for b in change["allOf"] if _checker(b["if"]).is_valid(probe)]
    if any(set(then) - {"properties", "required"} for then in branches):
        return None
    required = set(change.get("required", ()))
    parts: dict[str, list[Any]] = {name: [part] for name, part in change["properties"].items()}
    for then in branches:
        required |= set(then.get("required", ()))
        for name, part in then.get("properties", {}).items():
            parts.setdefault(name, []).append(part)
    checks = {
        name: _checker({"$schema": schema["$schema"], "$defs": schema["$defs"], "allOf": found})
        for name, found in parts.items()
    }
    return frozenset(required), frozenset(change["properties"]), checks


def _fields_valid(
    action: str, resource: str, change: dict[str, Any], valid: set[tuple[str, str, str, str]]
) -> bool:
    """Whether the change passes the schema of its kind, each field's value checked once per
    distinct value (12,000 changes share a few `after` and `edges` values): True only when it
    certainly does; False sends it to the whole check, which says what is wrong."""
    taken = _field_checks(action, resource)
    if taken is None:
        return False
    required, allowed, checks = taken
    if not required <= change.keys() or not change.keys() <= allowed:
        return False
    for name, value in change.items():
        # a string as it is, anything else as JSON: apart, so "1" never stands for 1
        shown = f"s{value}" if isinstance(value, str) else f"j{json.dumps(value, sort_keys=True)}"
        key = (action, resource, name, shown)
        if key in valid:
            continue
        if not checks[name].is_valid(value):
            return False
        valid.add(key)
    return True


def _inlined(node: Any, defs: dict[str, Any], through: set[str]) -> Any:
    """`node` with each `{"$ref": "#/$defs/NAME"}` replaced by that definition (a reference
    beside other keywords as an `allOf` with them): looking references up was most of the
    time left. A definition that refers to itself keeps its reference."""
    if isinstance(node, list):
        return [_inlined(item, defs, through) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        name = reference.removeprefix("#/$defs/")
        if name in defs and name not in through:
            target = _inlined(defs[name], defs, through | {name})
            others = {k: v for k, v in node.items() if k not in ("$ref", "description")}
            if not others:
                return target
            return {"allOf": [target, _inlined(others, defs, through)]}
    return {key: _inlined(value, defs, through) for key, value in node.items()}


def _schema_problem(data: dict[str, Any]) -> ValidationError | None:
    """The first problem with `data` against the plan schema: the plan without its changes,
    then each change against the schema of its kind (a change without a plain action and
    resource against the whole change schema)."""
    changes = data.get("changes")
    if not isinstance(changes, list):
        return _best(_validator(), data)
    problem = _best(_validator(), {**data, "changes": []})
    if problem is not None:
        return problem
    valid: set[tuple[str, str, str, str]] = set()  # (action, resource, field, value's JSON)
    for number, change in enumerate(changes):
        kind = (change.get("action"), change.get("resource")) if isinstance(change, dict) else ()
        if len(kind) == 2 and all(isinstance(part, str) for part in kind):
            action, resource = str(kind[0]), str(kind[1])
            if _fields_valid(action, resource, change, valid):
                continue
            checker = _change_validator(action, resource)
        else:
            checker = _validator()
            change = {**data, "changes": [change]}
        problem = _best(checker, change)
        if problem is not None:
            root: Any = problem
            while root.parent is not None:
                root = root.parent
            if checker is _validator():  # its path starts changes/0: this change's number
                root.path[1] = number
            else:
                root.path.extendleft([number, "changes"])
            return problem
    return None


def looks_like_plan(text: str) -> bool:
    """A JSON object naming a `format_version`: a plan (perhaps a broken one, which `read`
    then refuses saying why), not a topology. Decided on the text alone, so a plan cut short
    is still recognised as a plan."""
    return _without_bom(text).lstrip().startswith("{") and '"format_version"' in text


def read(text: str, file: str) -> Plan:
    """The saved plan in `text` (the file `file`), every check above passed; else one
    SavedPlanError line (EditedPlanError when only the fingerprint disagrees)."""
    text = _without_bom(text)
    deep = _too_deep(text)
    if deep is not None:
        line, column = deep
        raise SavedPlanError(
            f"{file}:{line}:{column}: not a plan topo wrote: values nest more than {MAX_DEPTH} "
            "levels deep here"
        )
    data = _parse(text, file)
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise SavedPlanError(
            f"{file}: plan format {shown(version)} is not the {FORMAT_VERSION!r} this topo "
            "applies; plan again with this topo"
        )
    _check_topology_file(data, file)
    problem = _schema_problem(data)
    if problem is not None:
        where = "/".join(str(part) for part in problem.absolute_path) or "the top level"
        raise SavedPlanError(
            f"{file}: not a plan topo wrote: at {where}: {clip(problem.message, 200)}"
        )
    try:
        expected = fingerprint_of(data)
    except ValueError:  # a number too large for a float (1e999): JSON has no infinity
        raise SavedPlanError(
            f"{file}: not a plan topo wrote: it holds a number out of range"
        ) from None
    if not hmac.compare_digest(expected, data["fingerprint"]):
        raise EditedPlanError(
            f"{file}: the plan was edited after `topo plan` wrote it (its fingerprint does not "
            "match its content); plan again"
        )
    plan = plan_from_dict(data)
    _check_changes(plan, file)
    return plan


def check_topology(plan: Plan, topology: Topology, file: str) -> None:
    """The plan was made for this topology: same owner, same clusters at the same addresses
    (`guard.misfit`, which the guard holds it to again before the first change). Its file's
    SHA-256 matched already; this is the same fact seen from its content."""
    why = misfit(plan, topology)
    if why is not None:
        raise SavedPlanError(f"{file}: {why}; plan again")


def first_difference(saved: Plan, fresh: Plan) -> str | None:
    """Where the saved plan first differs from `fresh` (the plan topo makes now from the same
    topology, the clusters as they are and apply's `--allow-delete`), or None when it is the
    same plan. The topology's path and topo's version are not compared: the one is where
    apply found the file, the other informational."""
    facts: tuple[tuple[str, object, object], ...] = (
        ("owner", saved.owner, fresh.owner),
        ("topology's SHA-256", saved.topology_sha256, fresh.topology_sha256),
        ("allow_delete", saved.allow_delete, fresh.allow_delete),
        ("clusters", dict(saved.clusters), dict(fresh.clusters)),
        ("record of what it read on the clusters", saved.observed_sha256, fresh.observed_sha256),
    )
    for label, value, now in facts:
        if value != now:
            return f"its {label} differs"
    for number, (ours, theirs) in enumerate(
        zip(saved.changes, fresh.changes, strict=False), start=1
    ):
        if canonical(compared(ours.to_dict())) == canonical(compared(theirs.to_dict())):
            continue
        if identity(ours) == identity(theirs):
            field = next(
                (
                    name
                    for name in ("before", "after", "edges", "reason")
                    if canonical(getattr(ours, name)) != canonical(getattr(theirs, name))
                ),
                "content",
            )
            return f"change {number} ({described(ours)}): its {field} is not what topo plans now"
        return f"change {number} is {described(ours)}, where topo now plans {described(theirs)}"
    if len(saved.changes) > len(fresh.changes):
        number = len(fresh.changes) + 1
        extra = saved.changes[number - 1]
        return f"change {number} ({described(extra)}) is not one topo plans now"
    if len(fresh.changes) > len(saved.changes):
        number = len(saved.changes) + 1
        missing = fresh.changes[number - 1]
        return f"topo now also plans change {number} ({described(missing)}), which it lacks"
    if saved.notes != fresh.notes:
        number = next(
            (
                n
                for n, (a, b) in enumerate(zip(saved.notes, fresh.notes, strict=False), start=1)
                if a != b
            ),
            min(len(saved.notes), len(fresh.notes)) + 1,
        )
        return f"its note {number} is not what topo notes now"
    return None


# -- helpers -------------------------------------------------------------------------------------


def _without_bom(text: str) -> str:
    return text[1:] if text.startswith(BOM) else text


class _DuplicateKey(ValueError):
    pass


class _NotANumber(ValueError):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object hook: a key written twice in one object is refused (json.loads keeps the
    last one silently, so a reviewer reading the first would not see what runs)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(key)
        data[key] = value
    return data


def _no_constant(name: str) -> Any:
    raise _NotANumber(name)


def _parse(text: str, file: str) -> dict[str, Any]:
    try:
        data = json.loads(text, object_pairs_hook=_unique, parse_constant=_no_constant)
    except _DuplicateKey as twice:
        raise SavedPlanError(
            f"{file}: not a plan topo wrote: the key {shown(twice.args[0])} appears twice in "
            "one object"
        ) from None
    except _NotANumber as constant:
        raise SavedPlanError(
            f"{file}: not a plan topo wrote: {constant.args[0]} is not a JSON value"
        ) from None
    except json.JSONDecodeError as broken:
        where = f"{file}:{broken.lineno}:{broken.colno}"
        if _cut_short(text, broken):
            raise SavedPlanError(
                f"{where}: not a complete plan: the JSON ends before it is closed (the file "
                "was cut short); save it again with `topo plan -o`"
            ) from None
        raise SavedPlanError(
            f"{where}: not a plan topo wrote: this is not valid JSON ({broken.msg})"
        ) from None
    except ValueError as problem:  # e.g. an integer of more digits than Python converts
        raise SavedPlanError(f"{file}: not a plan topo wrote: {clip(str(problem), 120)}") from None
    if not isinstance(data, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(data), "a number"
        )
        raise SavedPlanError(f"{file}: not a plan topo wrote: it is {kind}, not a JSON object")
    return data


# What is left of a text cut inside a literal or a number: "tr", "nul", "-", "1.", "2e-".
_CUT_TAIL = re.compile(
    r"t(?:r(?:ue?)?)?|f(?:a(?:l(?:se?)?)?)?|n(?:u(?:ll?)?)?|-?[0-9]*\.?[0-9]*(?:[eE][-+]?[0-9]*)?"
)


def _cut_short(text: str, broken: json.JSONDecodeError) -> bool:
    """Did the JSON fail only because the text stops (a truncated file), not because of what
    it says?"""
    rest = text[broken.pos :].rstrip()
    if broken.msg.startswith("Unterminated string"):
        return True  # its closing quote would be after the end
    if broken.msg.startswith("Invalid \\uXXXX escape"):
        return len(rest) < 6  # \u12 and the end
    return not rest or _CUT_TAIL.fullmatch(rest) is not None


def _check_topology_file(data: Mapping[str, Any], file: str) -> None:
    """`topology.file` names a file apply may read: checked before the schema so the message
    says what is wrong with it (and never repeats it)."""
    topology = data.get("topology")
    path = topology.get("file") if isinstance(topology, dict) else None
    if not isinstance(path, str):
        return  # the schema says what is missing
    problem = None
    if not path:
        problem = "is empty"
    elif _CONTROL.search(path):
        problem = "contains a NUL or another control character"
    elif _SURROGATE.search(path):
        problem = "is not text: it holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape)"
    elif len(path) > MAX_PATH:
        problem = f"is longer than {MAX_PATH} characters"
    elif any(len(part.encode()) > MAX_NAME for part in re.split(r"[/\\]", path)):
        problem = f"has a folder or file name longer than {MAX_NAME} bytes"
    elif path == "-":
        problem = "is standard input ('-'): a saved plan needs its topology in a file"
    if problem is not None:
        raise SavedPlanError(f"{file}: not a plan topo wrote: its topology.file {problem}")


def _check_changes(plan: Plan, file: str) -> None:
    """Each change in its place, once (`guard.placed`, which the guard holds it to again)."""
    for number, change, why in placed(plan):
        if why is not None:
            raise SavedPlanError(f"{file}: change {number} ({described(change)}): {why}")


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?')
_NOT_BRACKETS = str.maketrans("", "", "".join(chr(c) for c in range(128) if chr(c) not in "[]{}"))


def _shallow(text: str) -> bool:
    """Certainly nested at most MAX_DEPTH levels: the brackets outside strings, with each
    innermost pair taken away MAX_DEPTH times, leave nothing. Done at C speed on the whole
    text (a plan of 5 MB: 0.7 s bracket by bracket in Python)."""
    brackets = _STRING.sub("", text).translate(_NOT_BRACKETS)
    if not brackets.isascii():
        return False
    for _ in range(MAX_DEPTH):
        if not brackets:
            return True
        brackets = brackets.replace("[]", "").replace("{}", "")
    return not brackets


def _too_deep(text: str) -> tuple[int, int] | None:
    """The line and column of the first bracket that opens level MAX_DEPTH + 1, if any."""
    if _shallow(text):
        return None
    depth = 0
    for found in _STRING_OR_BRACKET.finditer(text):
        bracket = found.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                at = found.start()
                return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        elif bracket in ("]", "}"):
            depth = max(0, depth - 1)
    return None
