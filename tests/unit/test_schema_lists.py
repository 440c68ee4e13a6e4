"""Long include/exclude lists are schema-checked by topo's own pass, not item by item by
jsonschema (200,000 names took seconds); a wrong item is still reported at its index."""

from topology.core import schema, source

HEAD = """\
version: 1
clusters:
  east: {bootstrap: "1.2.3.4:9092"}
  west: {bootstrap: "1.2.3.5:9092"}
flows:
  - mirror: {from: east, to: west}
"""


def _check(include: str) -> list[str]:
    document, found = source.parse(HEAD + f"    topics: {{include: [{include}]}}\n", "t.yaml")
    assert not found
    return [f"{d.code} {d.span.line}:{d.span.column} {d.message}" for d in schema.check(document)]


def test_a_long_list_of_names_is_valid() -> None:
    assert _check(", ".join(f'"t{i}"' for i in range(200_000))) == []


def test_wrong_items_in_a_long_list_are_each_reported_where_they_are() -> None:
    names = [f'"t{i}"' for i in range(1_000)]
    names[500], names[999] = "5", '""'
    found = _check(", ".join(names))
    assert len(found) == 2
    assert found[0].startswith("T103 7:") and "include[500] must be a string" in found[0]
    assert found[1].startswith("T104 7:") and "include[999]: must not be empty" in found[1]
