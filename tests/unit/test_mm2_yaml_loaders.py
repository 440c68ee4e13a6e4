"""Every YAML topo writes reads the same in every loader: YAML 1.1 and 1.2, libyaml and pure.

`topo import mm2` once wrote `{bootstrap: brokerA:9092}`, which pure-Python loaders accept and
libyaml-based ones (PyYAML's CSafeLoader, ruamel's C loader, most tools) refuse; and `yes` or
`1:20` unquoted are strings to YAML 1.2 but a bool and the integer 80 to YAML 1.1. Each file is
loaded by four loaders and compared with what topo's own loader reads.
"""

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.parser import Parser

from tests.mm2.normal import SAMPLES
from topology.core.mm2 import properties, yaml_out
from topology.core.mm2.import_header import header
from topology.core.mm2.importer import import_properties
from topology.core.source import parse


def _ruamel(pure: bool) -> Callable[[str], Any]:
    def load(text: str) -> Any:
        return YAML(typ="safe", pure=pure).load(text)

    return load


LOADERS: dict[str, Callable[[str], Any]] = {
    "pyyaml-libyaml (1.1)": lambda text: yaml.load(text, Loader=yaml.CSafeLoader),
    "pyyaml-pure (1.1)": lambda text: yaml.load(text, Loader=yaml.SafeLoader),
    "ruamel-pure (1.2)": _ruamel(pure=True),
    "ruamel-libyaml (1.2)": _ruamel(pure=False),
}


def test_the_libyaml_loaders_are_really_there() -> None:
    # Without libyaml both "C" loaders would quietly be the pure ones, and prove nothing.
    assert yaml.__with_libyaml__
    assert YAML(typ="safe", pure=False).Parser is not Parser


def assert_every_loader_agrees(text: str) -> None:
    document, diagnostics = parse(text, "out.yaml")
    assert not diagnostics, [d.headline() for d in diagnostics]
    for name, load in LOADERS.items():
        assert load(text) == document.data, f"{name} reads it differently:\n{text}"


def imported_yaml(text: str, file: str = "mm2.properties") -> str:
    result = import_properties(text, file)
    assert result.data is not None, [d.headline() for d in result.diagnostics]
    return yaml_out.render(result.data, header(result, file))


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.properties")), ids=lambda p: p.stem)
def test_each_imported_sample_reads_the_same_in_every_loader(path: Any) -> None:
    assert_every_loader_agrees(imported_yaml(path.read_text(), path.name))


def test_a_one_line_cluster_quotes_its_host_port() -> None:
    text = imported_yaml(
        "clusters = A, B\nA.bootstrap.servers = brokerA:9092\n"
        "B.bootstrap.servers = brokerB:9092\nA->B.enabled = true\n"
    )
    assert "A: {bootstrap: 'brokerA:9092'}" in text
    assert_every_loader_agrees(text)


# Strings YAML 1.1 or 1.2 would read as something else, or that need quotes to parse at all.
TRICKY = [
    "yes",
    "No",
    "ON",
    "off",
    "y",
    "n",
    "true",
    "False",
    "null",
    "Null",
    "~",
    "",
    "1_000",
    "0o17",
    "0x1F",
    "017",
    "0b101",
    "1:20",
    "1:20.5",
    "+1",
    "-1",
    ".5",
    "1.",
    "1e3",
    "1.0e+3",
    ".inf",
    "-.Inf",
    ".NaN",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "=",
    "<<",
    "a:b",
    "a: b",
    "a:",
    ":a",
    "a,b",
    "[a]",
    "{a}",
    "a#b",
    "a #b",
    "#a",
    "&a",
    "*a",
    "!a",
    "|",
    ">",
    "%a",
    "@a",
    "`a",
    "'a'",
    '"a"',
    "-",
    "- a",
    "? a",
    "a\nb",
    "a\tb",
    " a",
    "a ",
    "a\\b",
    "?",
    ":",
    "- ",
    "-a",
    "--",
    "-_",
    "?a",
    ": a",
    ":-",
    "#",
    "a#",
    "!",
    "!!str",
    "&",
    "*",
    "|-",
    ">-",
    "%",
    "@",
    "`",
    "[",
    "]",
    "{",
    "}",
    ",",
    "'",
    '"',
    "[-]",
    "---",
    "...",
    "- - a",
    "-\t",
    "\x85",
    "\u2028",
    "\ufeff",
    "\x00",
    "\x7f",
    "é",
    "日本",
    "\U0001f600",
    "${env:A_B}",
    "host-1:9092,host-2:9092",
    "127.0.0.1:19092",
]


@pytest.mark.parametrize("value", TRICKY, ids=repr)
def test_tricky_strings_as_keys_and_values_in_blocks_and_inline(value: str) -> None:
    data = {
        "version": 1,
        "clusters": {
            value: {"bootstrap": value, "client": {value: value}},
            "b": {"bootstrap": value, "client": {"x": [value] * 40}},  # long: a block list
        },
        "flows": [
            {"mirror": {"from": value, "to": "b"}, "topics": {"include": [value]}},
            # Regex lists, inline and long enough to be blocks: `- -` was a nested list.
            {"topics": {"include": [value] * 40, "exclude": [value, "x"]}},
            {"topics": {"exclude": [value] * 40, "include": [[value] * 40, [value]]}},
        ],
    }
    text = yaml_out.render(data, header=[f"from {value}", value])
    assert_every_loader_agrees(text)
    assert parse(text, "out.yaml")[0].data == data


# Any text, as keys and values, in both contexts and in the header comment; and short strings of
# YAML's indicators (with a letter, a space, a tab and a dot), which random text seldom is.
INDICATORS = "-?:,[]{}#&*!|>'\"%@`~=<. \ta"
any_text = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=12),
    st.text(st.sampled_from(INDICATORS), max_size=4),
)
# Keys: any text, or the keys under which strings are regexes (written by their own rule).
any_key = st.one_of(any_text, st.sampled_from(["include", "exclude"]))
tree = st.recursive(
    st.one_of(any_text, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False)),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(any_key, children, max_size=4),
        # As long as a list must be to be written as a block, rather than inline.
        st.lists(any_text, min_size=1, max_size=3).map(lambda items: items * 30),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters=st.dictionaries(any_key, tree, min_size=1, max_size=3), note=any_text)
def test_any_strings_read_the_same_in_every_loader(clusters: dict[str, Any], note: str) -> None:
    data = {"version": 1, "clusters": clusters, "flows": []}
    text = yaml_out.render(data, header=[note])
    assert_every_loader_agrees(text)
    assert parse(text, "out.yaml")[0].data == data


# Through the whole import: values as MM2 users write them, escaped as properties allow.
alias = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,8}", fullmatch=True)
value_text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), min_size=1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(alias, min_size=2, max_size=3, unique_by=str.lower),
    bootstrap=value_text,
    topic=value_text,
    client_value=value_text,
)
def test_imported_topologies_read_the_same_in_every_loader(
    names: list[str], bootstrap: str, topic: str, client_value: str
) -> None:
    source, target = names[0], names[1]
    lines = [
        properties.line("clusters", ", ".join(names)),
        *(properties.line(f"{name}.bootstrap.servers", bootstrap) for name in names),
        properties.line(f"{source}.client.id", client_value),
        properties.line(f"{source}->{target}.enabled", "true"),
        properties.line(f"{source}->{target}.topics", topic),
    ]
    result = import_properties("\n".join(lines) + "\n", "mm2.properties")
    if result.data is None:  # refused with a located error: nothing written, nothing to load
        return
    assert_every_loader_agrees(yaml_out.render(result.data, header(result, "mm2.properties")))


def test_keys_too_long_for_a_simple_key_are_written_as_explicit_keys() -> None:
    long_key = "k" * 2000
    data = {"version": 1, "clusters": {"a": {"client": {long_key: "v", "x": {long_key: [1]}}}}}
    text = yaml_out.render(data)
    assert f"? {long_key}\n" in text
    assert_every_loader_agrees(text)
    assert parse(text, "out.yaml")[0].data == data
