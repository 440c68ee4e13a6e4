"""Property-based fuzzing of the loader, through `topo validate` as a user runs it.

Whatever the file holds (random bytes, random YAML-shaped trees, the examples mangled), topo
ends with exit 0 or 1, never a traceback or an internal error, and every diagnostic line
starts with `file:line:col`. How long each input takes is measured by benchmarks/loader_fuzz.py,
not asserted here: a hang would be caught by pytest-timeout.
"""

import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topology.cli import main

EXAMPLES = sorted((Path(__file__).parent.parent.parent / "examples").glob("*.yaml"))
# A few seconds in the suite; TOPO_FUZZ_EXAMPLES=5000 for a longer hunt by hand.
FUZZ = settings(
    max_examples=int(os.environ.get("TOPO_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
# A diagnostic's first line, or a note under it.
LOCATED = re.compile(r"^.+:\d+:\d+: (error\[[A-Z]\d{3}\]|warning\[[A-Z]\d{3}\]|note): ")
# The one error the loader never sees: the file is not text. Still located, at the bad byte.
NOT_TEXT = re.compile(r"^error: .+:\d+:\d+: not UTF-8 text \(.+, byte 0x[0-9a-f]{2}\)$")


@contextmanager
def _file(content: bytes) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "topology.yaml"
        path.write_bytes(content)
        yield str(path)


def _validate(content: bytes) -> tuple[int, str]:
    """`topo validate FILE` in this process: its exit code and what it wrote to stderr."""
    stderr = io.StringIO()
    with _file(content) as path, redirect_stderr(stderr), redirect_stdout(io.StringIO()):
        argv = sys.argv
        sys.argv = ["topo", "validate", path]
        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        finally:
            sys.argv = argv
    return code, stderr.getvalue()


def _assert_handled(content: bytes) -> None:
    code, stderr = _validate(content)
    assert code in (0, 1), stderr
    assert "Traceback" not in stderr
    assert "internal error" not in stderr
    for line in stderr.split("\n")[:-1]:  # lines as a terminal shows them
        if line.startswith("  "):  # the source line under a diagnostic, and its caret
            continue
        assert LOCATED.match(line) or NOT_TEXT.match(line), line


# -- inputs ------------------------------------------------------------------------------------

_WORDS = [
    "version",
    "clusters",
    "flows",
    "defaults",
    "bootstrap",
    "security",
    "client",
    "topics",
    "include",
    "exclude",
    "mirror",
    "active-active",
    "aggregate",
    "from",
    "to",
    "into",
    "naming",
    "prefix",
    "identity",
    "engine",
    "spark_conf",
    "east",
    "west",
    "<<",
    "name",
]
_SCALARS = st.one_of(
    st.sampled_from(_WORDS),
    st.text(max_size=20),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
)
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(_WORDS), st.text(max_size=8)), inner, max_size=4),
    ),
    max_leaves=30,
)
# Characters that mean something to YAML, and some it forbids.
_NASTY = st.text(alphabet="{}[]:,-?'\"#&*!|>%@` \t\n\r\x00\x07\x1b\x85\ufeffa1.", max_size=12)


@st.composite
def _mangled_examples(draw: st.DrawFn) -> bytes:
    text = draw(st.sampled_from(EXAMPLES)).read_text(encoding="utf-8")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "delete", "repeat", "truncate"]))
        if edit == "insert":
            text = text[:at] + draw(_NASTY) + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        elif edit == "repeat":  # a line again: duplicate keys, repeated flows
            lines = text.splitlines(keepends=True)
            if lines:
                index = draw(st.integers(0, len(lines) - 1))
                lines[index:index] = [lines[index]] * draw(st.integers(1, 5))
                text = "".join(lines)
        else:
            text = text[:at]
    return text.encode("utf-8", errors="surrogatepass")


# -- properties --------------------------------------------------------------------------------


@FUZZ
@given(st.binary(max_size=600))
def test_random_bytes(content: bytes) -> None:
    _assert_handled(content)


@FUZZ
@given(_TREES)
def test_random_yaml_shaped_trees(tree: object) -> None:
    _assert_handled(json.dumps(tree).encode())  # JSON is YAML
    _assert_handled(_block_yaml(tree).encode())


@FUZZ
@given(_mangled_examples())
def test_mangled_examples(content: bytes) -> None:
    _assert_handled(content)


@FUZZ
@given(
    st.sampled_from(["[", "{a: ", "- ", "{a: [", "&x [", "? "]),
    st.integers(90, 3_000),
    st.booleans(),
)
def test_nesting_of_any_depth_and_kind_closed_or_not(
    opening: str, depth: int, closed: bool
) -> None:
    closing = {"[": "]", "{a: ": "}", "- ": "", "{a: [": "]}", "&x [": "]", "? ": ""}[opening]
    text = "version: 1\nclusters: " + opening * depth + "x" + (closing * depth if closed else "")
    _assert_handled(text.encode())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_the_examples_themselves_are_handled(example: Path) -> None:
    _assert_handled(example.read_bytes())


def _block_yaml(tree: object, indent: str = "") -> str:
    """Block-style YAML for a tree, written by hand so that odd keys and values reach the
    parser unescaped (a YAML library would quote them into harmless strings)."""
    if isinstance(tree, dict):
        if not tree:
            return "{}\n"
        return "".join(
            f"\n{indent}{key}: {_block_yaml(value, indent + '  ')}" for key, value in tree.items()
        )
    if isinstance(tree, list):
        if not tree:
            return "[]\n"
        return "".join(f"\n{indent}- {_block_yaml(item, indent + '  ')}" for item in tree)
    return f"{tree}\n"
