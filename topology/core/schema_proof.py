"""A quick proof that a value meets a JSON Schema, for the keywords the topology schema uses.

jsonschema checks a value in about 30 µs, most of it making a validator for each level it
descends to: 50,000 clusters took seconds though none was wrong. `surely_valid` answers True
only when every keyword of the schema holds (in JSON Schema's sense: `minLength` says nothing
of a number); on a keyword it does not know, a type it is unsure of (1.0 as an integer), or a
value that is wrong, it answers False and jsonschema looks, for the error and its message. So
True is always right, and False only costs the usual check.
"""

import re
from collections.abc import Callable
from typing import Any

# Keywords that describe and never fail.
_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "$comment", "$schema", "$id"}
)
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: type(value) is str,
    "integer": lambda value: type(value) is int,
    "number": lambda value: type(value) in (int, float),
    "boolean": lambda value: type(value) is bool,
    "object": lambda value: type(value) is dict,
    "array": lambda value: type(value) is list,
    "null": lambda value: value is None,
}
_SCALARS = (str, int, float, bool, type(None))


def surely_valid(schema: Any, value: Any, pattern: Callable[[str], re.Pattern[str]]) -> bool:
    """Whether `value` meets `schema` for sure; `pattern` compiles a `pattern` keyword as the
    validator does (ECMA-262's `$`)."""
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    for keyword, rule in schema.items():
        if keyword == "additionalProperties":
            if not _additional(schema, rule, value, pattern):
                return False
            continue
        check = _KEYWORDS.get(keyword)
        if check is None:
            if keyword in _ANNOTATIONS:
                continue
            return False  # a keyword this proof does not know: jsonschema decides
        if not check(rule, value, pattern):
            return False
    return True


_Check = Callable[[Any, Any, Callable[[str], re.Pattern[str]]], bool]


def _type(rule: Any, value: Any, _: Any) -> bool:
    names = [rule] if isinstance(rule, str) else rule
    return any(_TYPES.get(name, _never)(value) for name in names)


def _never(_: Any) -> bool:
    return False


def _properties(rule: Any, value: Any, pattern: Any) -> bool:
    if type(value) is not dict:
        return True
    return all(surely_valid(rule[key], item, pattern) for key, item in value.items() if key in rule)


def _additional(schema: dict[str, Any], rule: Any, value: Any, pattern: Any) -> bool:
    """`additionalProperties`: the keys its sibling `properties` does not name."""
    if "patternProperties" in schema or not isinstance(rule, dict | bool):
        return False
    if type(value) is not dict or rule is True:
        return True
    named = schema.get("properties", {})
    extras = [item for key, item in value.items() if key not in named]
    return not extras if rule is False else all(surely_valid(rule, x, pattern) for x in extras)


def _required(rule: Any, value: Any, _: Any) -> bool:
    return type(value) is not dict or all(key in value for key in rule)


def _min_length(rule: Any, value: Any, _: Any) -> bool:
    return type(value) is not str or len(value) >= rule


def _pattern(rule: Any, value: Any, pattern: Any) -> bool:
    return type(value) is not str or pattern(rule).search(value) is not None


def _same(value: Any, rule: Any) -> bool:
    return isinstance(rule, _SCALARS) and type(value) is type(rule) and value == rule


def _enum(rule: Any, value: Any, _: Any) -> bool:
    return any(_same(value, each) for each in rule)


def _const(rule: Any, value: Any, _: Any) -> bool:
    return _same(value, rule)


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _minimum(rule: Any, value: Any, _: Any) -> bool:
    return not _number(value) or value >= rule


def _maximum(rule: Any, value: Any, _: Any) -> bool:
    return not _number(value) or value <= rule


def _items(rule: Any, value: Any, pattern: Any) -> bool:
    return type(value) is not list or all(surely_valid(rule, item, pattern) for item in value)


def _min_items(rule: Any, value: Any, _: Any) -> bool:
    return type(value) is not list or len(value) >= rule


def _min_properties(rule: Any, value: Any, _: Any) -> bool:
    return type(value) is not dict or len(value) >= rule


def _property_names(rule: Any, value: Any, pattern: Any) -> bool:
    return type(value) is not dict or all(surely_valid(rule, key, pattern) for key in value)


def _all_of(rule: Any, value: Any, pattern: Any) -> bool:
    return isinstance(rule, list) and all(surely_valid(each, value, pattern) for each in rule)


_KEYWORDS: dict[str, _Check] = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "minLength": _min_length,
    "pattern": _pattern,
    "enum": _enum,
    "const": _const,
    "minimum": _minimum,
    "maximum": _maximum,
    "items": _items,
    "minItems": _min_items,
    "minProperties": _min_properties,
    "propertyNames": _property_names,
    "allOf": _all_of,
}
