"""`surely_valid` says True only of values jsonschema accepts, for every part of the topology
schema; and it says it of the common ones, so that jsonschema need not descend into them."""

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from topology.core import schema
from topology.core.schema_proof import surely_valid
from topology.core.source import parse

GOLDEN = Path(__file__).parent.parent / "golden"


def _parts(node: Any) -> list[dict[str, Any]]:
    """Every schema (a mapping) inside the inlined topology schema, the whole one first."""
    found = []
    stack = [node]
    while stack:
        each = stack.pop()
        if isinstance(each, dict):
            if "type" in each or "properties" in each or "allOf" in each or "enum" in each:
                found.append(each)
            stack.extend(each.values())
        elif isinstance(each, list):
            stack.extend(each)
    return found


SCHEMA: dict[str, Any] = dict(schema._validator().schema)  # type: ignore[arg-type]
PARTS = _parts(SCHEMA)
NAMES = sorted(
    {key for part in PARTS for key in part.get("properties", {})} | {"x", "c1", "bad.name"}
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 70_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "h:1", "orders", "PLAIN", "SASL_SSL", "identity", "a\n", "${env:X}"]),
    st.text(max_size=5),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=5),
    ),
    max_leaves=20,
)


@settings(max_examples=1_500, deadline=None)
@given(st.sampled_from(range(len(PARTS))), VALUES)
def test_what_it_proves_jsonschema_accepts(index: int, value: Any) -> None:
    part = PARTS[index]
    if surely_valid(part, value, schema.ecma_regex):
        assert schema._validator().evolve(schema=part).is_valid(value), (part, value)


def test_the_clusters_and_flows_of_valid_files_are_proved_without_jsonschema() -> None:
    cluster = SCHEMA["properties"]["clusters"]["additionalProperties"]
    flow = SCHEMA["properties"]["flows"]["items"]
    proved = 0
    for file in sorted(GOLDEN.glob("valid-*/topology.yaml")):
        data = parse(file.read_text(encoding="utf-8"), str(file))[0].data
        for value in data["clusters"].values():
            assert surely_valid(cluster, value, schema.ecma_regex), (file, value)
            proved += 1
        for value in data.get("flows", []):
            assert surely_valid(flow, value, schema.ecma_regex), (file, value)
            proved += 1
    assert proved >= 20


def _valid_parts() -> list[tuple[dict[str, Any], Any]]:
    """(schema, value) for each cluster and flow of the valid golden files, and the whole."""
    cluster = SCHEMA["properties"]["clusters"]["additionalProperties"]
    flow = SCHEMA["properties"]["flows"]["items"]
    found: list[tuple[dict[str, Any], Any]] = []
    for file in sorted(GOLDEN.glob("valid-*/topology.yaml")):
        data = parse(file.read_text(encoding="utf-8"), str(file))[0].data
        found.append((SCHEMA, data))
        found += [(cluster, value) for value in data["clusters"].values()]
        found += [(flow, value) for value in data.get("flows", [])]
    return found


VALID_PARTS = _valid_parts()


def _changed(value: Any, path: list[int], new: Any) -> Any:
    """`value` with one of its leaves (chosen by `path`, wrapping) replaced by `new`."""
    if isinstance(value, dict) and value:
        key = sorted(value)[path[0] % len(value)] if path else None
        if key is None:
            return new
        return {**value, key: _changed(value[key], path[1:], new)}
    if isinstance(value, list) and value:
        if not path:
            return new
        at = path[0] % len(value)
        return [*value[:at], _changed(value[at], path[1:], new), *value[at + 1 :]]
    return new


@settings(max_examples=1_500, deadline=None)
@given(
    st.sampled_from(range(len(VALID_PARTS))),
    st.lists(st.integers(0, 50), max_size=6),
    VALUES,
)
def test_a_valid_value_with_one_part_changed_is_proved_only_if_jsonschema_accepts_it(
    index: int, path: list[int], new: Any
) -> None:
    part, value = VALID_PARTS[index]
    changed = _changed(value, path, new)
    if surely_valid(part, changed, schema.ecma_regex):
        assert schema._validator().evolve(schema=part).is_valid(changed), (part, changed)


def test_an_unknown_keyword_or_an_unsure_type_is_left_to_jsonschema() -> None:
    assert not surely_valid({"uniqueItems": True}, [1, 2], schema.ecma_regex)
    assert not surely_valid({"type": "integer"}, 1.0, schema.ecma_regex)
    assert not surely_valid({"enum": [1]}, True, schema.ecma_regex)
    assert not surely_valid({"type": "object", "patternProperties": {}}, {}, schema.ecma_regex)
    assert surely_valid({"type": "string", "minimum": 3}, "a", schema.ecma_regex)
