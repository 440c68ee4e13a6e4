"""The reference docs cover the schema, the diagnostic codes and every page, so none can drift."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from topology.core.diagnostics import CODES

ROOT = Path(__file__).parent.parent.parent
SCHEMA = json.loads((ROOT / "schemas" / "topology.schema.json").read_text())
SETTINGS = set(SCHEMA["$defs"]["flowSettings"]["properties"])


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = SCHEMA
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _leaves(node: dict[str, Any], path: str) -> dict[str, dict[str, Any]]:
    """Every documented field: path -> its schema. Flow settings are documented once, bare."""
    node = _resolve(node)
    if path.startswith(("defaults.", "flows[].")):
        head = path.split(".", 1)[1]
        if head.split(".")[0] in SETTINGS:
            path = head
    found = {}
    if "properties" in node:
        for key, child in node["properties"].items():
            found.update(_leaves(child, f"{path}.{key}" if path else key))
    elif isinstance(node.get("additionalProperties"), dict) and path == "clusters":
        found.update(_leaves(node["additionalProperties"], "clusters.<name>"))
    elif node.get("type") == "array" and "properties" in _resolve(node.get("items", {})):
        found.update(_leaves(node["items"], f"{path}[]"))
    else:
        found[path] = node
        for branch in node.get("oneOf", []):  # `false` or an object: its fields are rows too
            if "properties" in _resolve(branch):
                found.update(_leaves(branch, path))
    return found


FIELDS = _leaves(SCHEMA, "")
TOPOLOGY_DOC = (ROOT / "docs" / "topology.md").read_text()
ROWS = dict(re.findall(r"^\| `([^`]+)` \|(.*)$", TOPOLOGY_DOC, re.MULTILINE))


def test_every_schema_field_has_a_row_and_no_row_is_stale() -> None:
    assert set(ROWS) == set(FIELDS)


@pytest.mark.parametrize("path", sorted(p for p, s in FIELDS.items() if "default" in s))
def test_documented_defaults_match_the_schema(path: str) -> None:
    default = json.dumps(FIELDS[path]["default"])
    assert f"`{default}`" in ROWS[path], f"{path}: the Default column must say `{default}`"


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_diagnostic_code_is_documented_with_an_example(code: str) -> None:
    page = ROOT / "docs" / ("diagnostics.md" if code.startswith("T") else "mm2.md")
    text = page.read_text()
    heading = re.search(rf"^### {code} (.+)$", text, re.MULTILINE)
    assert heading, f"{page.name} needs a '### {code} {CODES[code]}' section"
    assert heading.group(1).strip() == CODES[code]
    section = text[heading.end() :].split("\n### ", 1)[0]
    assert f"[{code}]" in section, f"the {code} section needs an example message"


DOCS = ROOT / "docs"
INDEX = (DOCS / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES_WITH_LINKS = [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md"))
def test_every_page_is_listed_in_the_docs_index(page: str) -> None:
    assert f"]({page})" in INDEX, f"docs/README.md does not link to {page}; add it to the index"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _without_code_blocks(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)


@pytest.mark.parametrize("page", PAGES_WITH_LINKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_in_the_docs_resolve(page: Path) -> None:
    for target in LINK.findall(_without_code_blocks(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        where = page.relative_to(ROOT)
        assert destination.exists(), f"{where}: the link ({target}) points at nothing"
        if anchor and destination.suffix == ".md":
            text = _without_code_blocks(destination.read_text(encoding="utf-8"))
            anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
            assert anchor in anchors, f"{where}: no heading in {path or where} for #{anchor}"
