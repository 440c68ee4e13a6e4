"""Whatever text it is given, `analyse` answers with diagnostics, never an exception.

Four generators feed it: arbitrary text, random YAML data, topologies built from the grammar of
the file format, and random mutations of the valid golden files (as data and as text), so the
examples reach past the schema into resolve, graph, reach and checks. Every answer must also
keep the diagnostics' promises: a known code, a position inside the file, `ok` exactly when no
error was found, and the same answer twice.

The regression tests at the end are the crashes these properties found, one each.
"""

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.compat import StringIO

from topology.core import source
from topology.core.analysis import Analysis, analyse
from topology.core.diagnostics import CODES, Severity
from topology.core.model import NameFilter

FILE = "prop/topology.yaml"
GOLDEN = Path(__file__).parent.parent / "golden"
VALID_TEXTS = [
    (GOLDEN / case / "topology.yaml").read_text(encoding="utf-8")
    for case in sorted(p.name for p in GOLDEN.iterdir() if p.name.startswith("valid-"))
]
# YAML 1.2's line breaks. ruamel also counts NEL and the Unicode separators as breaks in some
# places and not in others, so in a text with those only the line is bounded, by counting them.
_LINE_BREAK = re.compile("\r\n|[\n\r]")
_ANY_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")

PROPERTY = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _yaml_text(data: Any) -> str:
    out = StringIO()
    YAML(typ="safe", pure=True).dump(data, out)
    return out.getvalue()


def _checked(text: str) -> Analysis:
    """Analyse twice and check every invariant; the analysis, for tests that look further."""
    analysis = analyse(text, FILE)
    lines = _LINE_BREAK.split(text)
    exact = len(lines) == len(_ANY_BREAK.split(text))
    for diagnostic in analysis.diagnostics:
        line, column = diagnostic.span.line, diagnostic.span.column
        assert diagnostic.code in CODES, diagnostic
        assert diagnostic.span.file == FILE
        assert 1 <= line <= len(_ANY_BREAK.split(text)), diagnostic
        assert column >= 1, diagnostic
        if exact:
            assert column <= len(lines[line - 1]) + 1, diagnostic
    errors = [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
    assert analysis.ok == (not errors)
    if analysis.ok:  # a clean file went through every stage
        assert analysis.topology is not None and analysis.reach is not None
    assert analyse(text, FILE).diagnostics == analysis.diagnostics
    return analysis


# -- vocabulary: the names and values the file format uses, and some it must refuse ----------

CLUSTERS = ["east", "west", "central", "us", "eu", "analytics", "c1", "x.y", "nowhere"]
KEYS = [
    *("version", "clusters", "flows", "defaults", "description", "bootstrap", "security"),
    *("protocol", "sasl", "mechanism", "username", "password", "tls", "ca", "cert", "key"),
    *("key_password", "verify_hostname", "client", "topics", "include", "exclude", "groups"),
    *("naming", "separator", "replication_factor", "sync", "configs", "partitions", "acls"),
    *("group_offsets", "emit", "heartbeats", "checkpoints", "delivery", "start", "filter"),
    *("provenance", "mirror", "from", "to", "active-active", "aggregate", "into", "<<"),
    *CLUSTERS,
]
REGEXES = [
    *(".*", "orders", "payments\\..*", "east\\..*", "clicks", "x", "a|b", "[a-c]+", "[^.]*"),
    *("(?i)orders", "(?P<n>a)", "(a)\\1", "(?=x)x", "x{3}", "orders[", "*x", "(", "a{99999999999}"),
    *("__consumer_offsets", "x.internal", ".", "..", "bad topic", "t" * 250, "e" * 240, "\\.x"),
]
SCALARS = [
    *(1, 0, -1, 2, 33, 1.0, 1.5, float("inf"), float("nan"), True, False, None, "", " "),
    *("prefix", "identity", "suffix", "at-least-once", "exactly-once", "earliest", "latest"),
    *("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", "PLAIN", "SCRAM-SHA-512", "GSSAPI"),
    *("127.0.0.1:9092", "[::1]:9092", "h:0", "h:65536", "a:1,", "PLAINTEXT://h:1", "host"),
    *("${env:EAST_PASSWORD}", "${file:secret.txt}", "${env:}", "${env:X", "pre${env:X}", "$${}"),
    *(".", "-", "_", "::", "2024-01-01", "0x1F", "1e3", "~", "yes", "&", "*", "!!int", "{}"),
    *CLUSTERS,
    *REGEXES,
]


def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(SCALARS),
        st.integers(),
        st.floats(),
        st.booleans(),
        st.none(),
        st.text(max_size=20),
        st.text(alphabet="${}:.*+?[]()|\\^-_ab01", max_size=12),
        st.integers(200, 2000).map(lambda n: "y" * n),
    )


def _keys() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(KEYS), st.text(max_size=10))


def _data() -> st.SearchStrategy[Any]:
    return st.recursive(
        _scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(_keys(), inner, max_size=4)
        ),
        max_leaves=20,
    )


# -- a grammar of topologies: mostly well formed, so the later stages get to run ------------

_names = st.sampled_from(CLUSTERS[:-2])  # the last two are not declared below
_any_name = st.sampled_from(CLUSTERS)
_regex_lists = st.lists(
    st.one_of(st.sampled_from(REGEXES[:9]), st.sampled_from(REGEXES)), min_size=0, max_size=3
)


def _with_excludes(include: list[str]) -> st.SearchStrategy[dict[str, list[str]]]:
    """Excludes drawn at random or from the includes, so that some flows replicate nothing."""
    excludes = st.one_of(_regex_lists, st.lists(st.sampled_from(include or [""])))
    return st.fixed_dictionaries({"include": st.just(include)}, optional={"exclude": excludes})


_filters = _regex_lists.flatmap(_with_excludes) | st.fixed_dictionaries(
    {}, optional={"exclude": _regex_lists}
)
_settings = st.fixed_dictionaries(
    {},
    optional={
        "topics": _filters,
        "naming": st.sampled_from(["prefix", "identity"]),
        "separator": st.sampled_from([".", "_", "-", ".."]),
        "provenance": st.booleans(),
        "replication_factor": st.sampled_from([1, 3, None]),
    },
)
_kinds = st.one_of(
    st.fixed_dictionaries({"mirror": st.fixed_dictionaries({"from": _any_name, "to": _names})}),
    st.fixed_dictionaries({"active-active": st.lists(_names, min_size=2, max_size=4)}),
    st.fixed_dictionaries(
        {
            "aggregate": st.fixed_dictionaries(
                {"from": st.lists(_any_name, min_size=1, max_size=3), "into": _names}
            )
        }
    ),
)
_flows = st.builds(lambda kind, extra: {**kind, **extra}, _kinds, _settings)
_bootstraps = st.one_of(
    st.sampled_from(["10.0.0.1:9092", "h:1,h:2", "[::1]:9092", "h", "${env:B}", "[::1]"]),
    st.text(alphabet="h.:[]09,_-/ ", min_size=1, max_size=12),
    st.integers(1, 6000).map(lambda digits: "h:" + "9" * digits),
)
_secret = st.sampled_from(["${env:P}", "${file:p.txt}", "hunter2", "${env:P", ""])
_security = st.fixed_dictionaries(
    {},
    optional={
        "protocol": st.sampled_from(["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]),
        "sasl": st.fixed_dictionaries(
            {"mechanism": st.sampled_from(["PLAIN", "SCRAM-SHA-512", "GSSAPI"])},
            optional={"username": _secret, "password": _secret},
        ),
        "tls": st.fixed_dictionaries(
            {},
            optional={"ca": st.just("ca.pem"), "cert": st.just("c.pem"), "key": st.just("k.pem")},
        ),
    },
)
_cluster = st.fixed_dictionaries(
    {"bootstrap": _bootstraps},
    optional={
        "security": _security,
        "topics": st.lists(st.sampled_from(["orders", "clicks", "east.orders", "a.b", "a_b"])),
        "client": st.dictionaries(st.sampled_from(["acks", "sasl.password"]), _scalars()),
    },
)
_topologies = st.fixed_dictionaries(
    {
        "version": st.just(1),
        "clusters": st.dictionaries(_names, _cluster, min_size=1, max_size=6),
        "flows": st.lists(_flows, max_size=6),
    },
    optional={"defaults": _settings},
)


# -- mutations ---------------------------------------------------------------------------


def _paths(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*path, index))
    return found


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _mutate(data: Any, draw: st.DrawFn) -> Any:
    """One random edit somewhere in the tree: replace, delete, insert, retype or transplant."""
    paths = _paths(data)
    path = draw(st.sampled_from(paths[1:] or paths))  # the root now and then, by transplant
    operation = draw(st.sampled_from(["replace", "delete", "insert", "retype", "transplant"]))
    value = _at(data, path)
    if operation == "replace":
        new = draw(st.one_of(_scalars(), _data(), _flows, _filters, _cluster))
    elif operation == "retype":
        new = draw(st.sampled_from([str(value), [value], {"x": value}, None, 1]))
    elif operation == "transplant":
        new = copy.deepcopy(_at(data, draw(st.sampled_from(paths))))
    elif operation == "insert" and isinstance(value, dict):
        value[draw(_keys())] = draw(st.one_of(_scalars(), _data(), _flows, _filters))
        return data
    elif operation == "insert" and isinstance(value, list):
        index = draw(st.integers(0, len(value)))
        value.insert(index, draw(st.one_of(_flows, _scalars(), st.sampled_from(value or [1]))))
        return data
    elif operation == "delete" and path:
        del _at(data, path[:-1])[path[-1]]
        return data
    else:
        return data
    if not path:
        return new
    _at(data, path[:-1])[path[-1]] = new
    return data


@st.composite
def _mutated_topologies(draw: st.DrawFn) -> str:
    parsed = source.parse(draw(st.sampled_from(VALID_TEXTS)), FILE)[0].data
    data = draw(st.one_of(st.just(parsed), _topologies))
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 4))):
        data = _mutate(data, draw)
    return _yaml_text(data)


@st.composite
def _spliced_texts(draw: st.DrawFn) -> str:
    """A valid golden file with lines duplicated, cut, or text inserted: broken YAML near real."""
    text = draw(st.sampled_from(VALID_TEXTS))
    for _ in range(draw(st.integers(1, 3))):
        lines = text.splitlines(keepends=True)
        at = draw(st.integers(0, len(lines)))
        edit = draw(st.sampled_from(["duplicate", "cut", "insert", "indent"]))
        if edit == "duplicate" and at < len(lines):
            lines.insert(at, lines[at])
        elif edit == "cut" and at < len(lines):
            del lines[at]
        elif edit == "indent" and at < len(lines):
            lines[at] = draw(st.sampled_from([" ", "  ", "\t", "- "])) + lines[at]
        else:
            lines.insert(at, draw(st.text(alphabet=" :-[]{},&*!|>'\"#<\nabx1", max_size=15)))
        text = "".join(lines)
    return text


# -- the properties ------------------------------------------------------------------------


@PROPERTY
@given(st.text())
def test_arbitrary_text_gives_diagnostics_not_exceptions(text: str) -> None:
    _checked(text)


@PROPERTY
@given(st.text(alphabet=" \t\n:-[]{},&*!|>'\"#%@`?<=~.\\${}abcxyz019", max_size=80))
def test_yaml_punctuation_gives_diagnostics_not_exceptions(text: str) -> None:
    _checked(text)


@PROPERTY
@given(_data())
def test_random_yaml_data_gives_diagnostics_not_exceptions(data: Any) -> None:
    _checked(_yaml_text(data))


@PROPERTY
@given(_topologies)
def test_generated_topologies_give_diagnostics_not_exceptions(data: dict[str, Any]) -> None:
    _checked(_yaml_text(data))


@settings(PROPERTY, max_examples=250)
@given(_mutated_topologies())
def test_mutated_topologies_give_diagnostics_not_exceptions(text: str) -> None:
    _checked(text)


@PROPERTY
@given(_spliced_texts())
def test_spliced_golden_texts_give_diagnostics_not_exceptions(text: str) -> None:
    _checked(text)


def test_the_grammar_reaches_the_graph_stages() -> None:
    """The generators are only worth their time if some examples get past the schema."""
    ran: list[bool] = []

    @settings(PROPERTY, max_examples=60)
    @given(_topologies)
    def probe(data: dict[str, Any]) -> None:
        ran.append(_checked(_yaml_text(data)).reach is not None)

    probe()
    assert sum(ran) >= len(ran) // 4


# -- regressions: crashes the properties found --------------------------------------------

TWO_CLUSTERS = """\
version: 1
clusters:
  east: {bootstrap: "10.0.0.1:9092"}
  west: {bootstrap: "10.0.0.2:9092"}
flows:
  - mirror: {from: east, to: west}
"""


def _codes(text: str) -> list[str]:
    return [d.code for d in _checked(text).diagnostics]


@pytest.mark.parametrize("text", ["a: &x [*x]\n", "a: &x {b: *x}\n", "a: &x {<<: *x}\n"])
def test_an_alias_inside_its_own_anchor_is_a_yaml_error(text: str) -> None:
    analysis = _checked(text)
    assert any(d.code == "T001" and "alias to itself" in d.message for d in analysis.diagnostics)


@pytest.mark.parametrize(("value", "tag"), [("!!int abc", "int"), ("!!bool maybe", "bool")])
def test_an_explicit_tag_that_does_not_fit_is_a_yaml_error(value: str, tag: str) -> None:
    analysis = _checked(f"version: {value}\n")
    assert any(d.code == "T001" and f"!!{tag}" in d.message for d in analysis.diagnostics)


@pytest.mark.parametrize("number", ["1" * 5000, "0x" + "F" * 5000])
def test_a_number_too_long_to_print_is_an_invalid_value(number: str) -> None:
    assert "T104" in _codes(f"version: {number}\n")


def test_aliases_that_expand_without_end_are_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "MAX_VALUES", 50)
    laughs = "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
    found = _checked(laughs + "c: [*b, *b, *b, *b, *b, *b, *b, *b]\n").diagnostics
    assert any(d.code == "T001" and "more than 50 values" in d.message for d in found)


@pytest.mark.parametrize(
    "pattern", ["a{99999999999999999999}", "(" * 600 + "a" + ")" * 600], ids=["overflow", "nested"]
)
def test_a_regex_python_cannot_compile_is_an_invalid_regex(pattern: str) -> None:
    assert _codes(TWO_CLUSTERS + f"    topics: {{include: ['{pattern}']}}\n") == ["T202"]


def test_a_bootstrap_port_too_long_for_int_is_a_malformed_bootstrap() -> None:
    text = TWO_CLUSTERS.replace("10.0.0.1:9092", "h:" + "9" * 5000)
    assert _codes(text) == ["T203"]


def test_an_invalid_exclude_beside_literal_includes_is_reported_not_raised() -> None:
    text = TWO_CLUSTERS + "    topics: {include: [orders], exclude: ['*x']}\n"
    assert _codes(text) == ["T202"]


def test_inline_flags_in_one_include_do_not_break_the_others() -> None:
    text = TWO_CLUSTERS + "    topics: {include: [x, '(?i)orders']}\n"
    assert _codes(text) == []
    names = NameFilter(include=("x", "(?i)orders", "(?P<n>a)", "(?P<n>b)"), exclude=())
    assert [names.admits(n) for n in ("x", "ORDERS", "a", "b", "c")] == [1, 1, 1, 1, 0]
